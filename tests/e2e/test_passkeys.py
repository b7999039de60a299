"""Passkeys in headless Chromium with its virtual authenticator (the DevTools
``WebAuthn`` domain): register one on /account/passkeys, sign out, sign in with it
alone, then as the second factor after the password.

The pages are opened on ``localhost``: browsers refuse passkeys on an IP address, and
the RP id is the host the demo is opened on (its PASSKEYS["RP_ID"] is unset).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .conftest import Steps, expect, sign_up, virtual_authenticator


def log_out(page: Any, site: str) -> None:
    page.goto(f"{site}/")
    with page.expect_navigation():
        page.get_by_role("button", name="Log out", exact=True).click()
    expect(page.locator("nav")).to_contain_text("Log in")


def test_register_sign_in_without_a_password_and_as_the_second_factor(
    browsing: Any, steps: Steps
) -> None:
    port = urlsplit(browsing.demo.url).port
    site = f"http://localhost:{port}"
    page = browsing.new_page()
    cdp, authenticator_id = virtual_authenticator(page)

    email, password = sign_up(page, steps, site=site)

    # 1. Register.
    page.goto(f"{site}/account/passkeys")
    expect(page.get_by_text("You have no passkey yet.")).to_be_visible()
    steps(page, "passkeys page, none yet")
    page.fill("form[data-passkey=register] input[name=name]", "Virtual laptop")
    with page.expect_navigation():
        page.get_by_role("button", name="Add a passkey").click()
    expect(page.get_by_role("status")).to_contain_text("Virtual laptop")
    expect(page.locator("table.af-passkeys")).to_contain_text("never")
    steps(page, "passkey added")
    credentials = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})
    (credential,) = credentials["credentials"]
    assert credential["isResidentCredential"] is True
    assert credential["rpId"] == "localhost"

    # 2. Sign out; on the login page the browser's passkey autofill (conditional UI)
    # offers the passkey, and the virtual authenticator picks it at once.
    log_out(page, site)
    page.goto(f"{site}/login")
    page.wait_for_url(f"{site}/")
    expect(page.locator("nav")).to_contain_text(email)
    steps(page, "signed in through the passkey autofill")
    page.goto(f"{site}/account/passkeys")
    expect(page.locator("table.af-passkeys")).not_to_contain_text("never")
    steps(page, "passkeys page shows the last use")

    # From here on a browser without passkey autofill: the button, and the password.
    page.add_init_script("PublicKeyCredential.isConditionalMediationAvailable = undefined;")
    log_out(page, site)
    page.goto(f"{site}/login")
    expect(page.locator("input[name=email]")).to_have_attribute("autocomplete", "username webauthn")
    steps(page, "login page with the passkey button")
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.locator("nav")).to_contain_text(email)
    steps(page, "signed in with the passkey button, no password")

    # 3. Sign out; the password now leads to the passkey challenge.
    log_out(page, site)
    page.goto(f"{site}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in", exact=True).click()
    assert urlsplit(page.url).path == "/login/mfa"
    expect(page.get_by_role("button", name="Use your passkey")).to_be_visible()
    expect(page.locator("input[name=code]")).to_have_count(0)
    steps(page, "challenge page offers the passkey")
    with page.expect_navigation():
        page.get_by_role("button", name="Use your passkey").click()
    expect(page.locator("nav")).to_contain_text(email)
    steps(page, "signed in after password and passkey")
    assert browsing.external == []


def test_the_passkey_button_explains_an_ip_address(browsing: Any, steps: Steps) -> None:
    page = browsing.new_page()
    virtual_authenticator(page)
    page.goto("/login")  # http://127.0.0.1:<port>: no passkeys on an IP address
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.locator("[data-passkey-status]")).to_contain_text("domain name")
    steps(page, "passkey on an IP address explained")
