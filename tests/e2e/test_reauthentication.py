"""A stale session in Chromium: each account change — turning TOTP on, adding a
passkey, issuing an API token — first asks "Confirm it's you", and the page accepts the
password, a TOTP code and a passkey (the virtual authenticator), then returns to the
change.

A demo of its own, whose proofs go stale after STALE seconds instead of five minutes;
opened on localhost, where browsers allow passkeys.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pyotp
import pytest

from .conftest import (
    Browsing,
    DemoServer,
    GraphiqlAssets,
    Steps,
    artifacts_dir,
    expect,
    serve_demo,
    sign_up,
    virtual_authenticator,
)

STALE = 2  # seconds a proof counts as recent on this demo


@pytest.fixture(scope="module")
def stale_demo(
    browser: Any, graphiql_assets: GraphiqlAssets, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DemoServer]:
    tmp = tmp_path_factory.mktemp("e2e-reauth")
    with serve_demo(tmp, graphiql_assets, DEMO_REAUTHENTICATION_TIMEOUT=str(STALE)) as server:
        yield server


@pytest.fixture
def stale(browser: Any, stale_demo: DemoServer) -> Iterator[Browsing]:
    session = Browsing(
        demo=stale_demo, steps=Steps(artifacts_dir() / "reauthentication"), browser=browser
    )
    try:
        yield session
    finally:
        session.close()


def go_stale() -> None:
    """Let this session's last proof grow older than the demo's window."""
    time.sleep(STALE + 1)


def asked_to_confirm(page: Any, back_to: str) -> None:
    expect(page).to_have_url(re.compile(r"/account/confirm\?next=" + re.escape(back_to)))
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()


def test_a_stale_session_confirms_with_a_password_a_code_or_a_passkey_before_each_change(
    stale: Browsing,
) -> None:
    steps = stale.steps
    site = f"http://localhost:{urlsplit(stale.demo.url).port}"
    page = stale.new_page()
    virtual_authenticator(page)
    email, password = sign_up(page, steps, site=site)

    # 1. The password: TOTP on. No secret is shown before the proof; a wrong password
    # is refused on the page.
    go_stale()
    page.goto(f"{site}/account/mfa/totp/on")
    asked_to_confirm(page, "/account/mfa/totp/on")
    expect(page.locator(".af-qr")).to_have_count(0)
    steps(page, "confirm it's you before turning TOTP on")
    page.fill("input[name=password]", "not the password")
    page.get_by_role("button", name="Confirm with my password").click()
    expect(page.get_by_role("alert").first).to_contain_text("did not prove")
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.get_by_role("button", name="Confirm with my password").click()
    expect(page).to_have_url(f"{site}/account/mfa/totp/on")
    secret = next(
        t.strip()
        for t in page.locator("code").all_inner_texts()
        if re.fullmatch(r"[A-Z2-7]{16,}", t.strip())
    )
    totp = pyotp.TOTP(secret)
    page.fill("input[name=code]", totp.now())
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_text("recovery codes are shown")).to_be_visible()
    steps(page, "TOTP on after the password")

    # 2. A TOTP code: a passkey added. The add posted while stale is not replayed: the
    # page comes back and the passkey is added once the session is fresh.
    go_stale()
    page.goto(f"{site}/account/passkeys")
    page.fill("form[data-passkey=register] input[name=name]", "Virtual laptop")
    with page.expect_navigation():
        page.get_by_role("button", name="Add a passkey").click()
    asked_to_confirm(page, "/account/passkeys/add")
    steps(page, "confirm it's you before adding a passkey")
    expect(page.get_by_text("You have no passkey yet.")).to_have_count(0)
    page.fill("input[name=code]", totp.at(time.time() + 30))
    with page.expect_navigation():
        page.get_by_role("button", name="Confirm with a code").click()
    page.goto(f"{site}/account/passkeys")
    expect(page.get_by_text("You have no passkey yet.")).to_be_visible()
    page.fill("form[data-passkey=register] input[name=name]", "Virtual laptop")
    with page.expect_navigation():
        page.get_by_role("button", name="Add a passkey").click()
    expect(page.get_by_role("status")).to_contain_text("Virtual laptop")
    expect(page.locator("table.af-passkeys input[name=name]")).to_have_value("Virtual laptop")
    steps(page, "passkey added after a code")

    # 3. The passkey (user verified): an API token.
    go_stale()
    page.goto(f"{site}/account/token")
    asked_to_confirm(page, "/account/token")
    with page.expect_navigation():
        page.get_by_role("button", name="Use your passkey").click()
    expect(page).to_have_url(f"{site}/account/token")
    page.get_by_role("button", name="Issue a token").click()
    expect(page.locator("#token")).not_to_have_text("(no token yet)")
    steps(page, "token issued after the passkey")

    # 4. Stale again, the token page's script is answered 401 and sent to confirm.
    go_stale()
    with page.expect_navigation():
        page.get_by_role("button", name="Issue a token").click()
    asked_to_confirm(page, "/account/token")
    assert stale.external == []
    assert email in page.locator("nav").inner_text()
