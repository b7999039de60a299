"""The demo's single-page app (/spa/, plain JavaScript on the account API's browser
client) in Chromium: a password then a TOTP code, without a page load; a passkey added
from the app and then signing in on its own (Chromium's virtual authenticator)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import unquote

import pyotp

from testproject.blog.management.commands.seed_demo import DEMO_USERS

from .conftest import Browsing, Steps, expect, virtual_authenticator

# The one seeded account no other browser test signs in with: TOTP goes on for it here.
MODERATOR = next(user for user in DEMO_USERS if user.role == "moderator")
API = "/api/auth/browser/v1/"


def _csrf(page: Any) -> str:
    cookie = next(c for c in page.context.cookies() if c["name"] == "csrf_token")
    return unquote(cookie["value"])


def _turn_on_totp(page: Any) -> pyotp.TOTP:
    """TOTP on for the signed-in user through the same API, in the page's own session
    (the app's sign-in a moment ago is the recent proof the change needs)."""
    headers = {"X-CSRF-Token": _csrf(page), "Content-Type": "application/json"}
    pending = page.request.post(API + "account/totp", data="{}", headers=headers)
    assert pending.ok, pending.text()
    totp = pyotp.TOTP(pending.json()["secret"])
    # The previous step's code: the sign-in below then uses this step's (no replay).
    code = totp.at(time.time() - 30)
    turned_on = page.request.post(API + "account/totp", data={"code": code}, headers=headers)
    assert turned_on.ok, turned_on.text()
    return totp


def _sign_in_with_password(page: Any) -> None:
    page.fill("#spa-login-email", MODERATOR.email)
    page.fill("#spa-login-password", MODERATOR.password)
    page.get_by_role("button", name="Sign in", exact=True).click()


def test_the_single_page_app_signs_in_with_a_password_and_totp_then_with_a_passkey(
    browsing: Browsing, steps: Steps
) -> None:
    page = browsing.new_page(base_url=browsing.demo.localhost)
    cdp, authenticator_id = virtual_authenticator(page)
    loads: list[str] = []
    page.on("load", lambda p: loads.append(p.url))
    page.goto("/spa/")
    status = page.get_by_role("status")
    expect(status).to_have_text("Not signed in.")
    steps(page, "spa anonymous")

    # A password: signed in (no second factor yet); TOTP goes on; log out.
    _sign_in_with_password(page)
    expect(status).to_have_text(f"Signed in as {MODERATOR.email}.")
    totp = _turn_on_totp(page)
    page.get_by_role("button", name="Log out").click()
    expect(status).to_have_text("Not signed in.")

    # The password now leaves the second step pending; the code signs in.
    _sign_in_with_password(page)
    expect(status).to_contain_text("enter the code")
    steps(page, "spa second step")
    page.fill("#spa-code", "000000" if totp.now() != "000000" else "111111")
    page.get_by_role("button", name="Confirm").click()
    expect(status).to_have_text("That code is not valid.")
    page.fill("#spa-code", totp.now())
    page.get_by_role("button", name="Confirm").click()
    expect(status).to_have_text(f"Signed in as {MODERATOR.email}.")
    expect(page.locator("#spa-factors")).to_contain_text("TOTP on")
    steps(page, "spa signed in after the code")

    # A passkey added from the app, then the app signs in with it alone.
    page.fill("#spa-passkey-name", "Virtual laptop")
    page.get_by_role("button", name="Add a passkey").click()
    expect(status).to_have_text("Passkey “Virtual laptop” added.")
    expect(page.locator("#spa-factors")).to_contain_text("passkeys on")
    credentials = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})
    assert len(credentials["credentials"]) == 1
    page.get_by_role("button", name="Log out").click()
    expect(status).to_have_text("Not signed in.")
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(status).to_have_text(f"Signed in as {MODERATOR.email}.")
    steps(page, "spa signed in with the passkey")

    assert len(loads) == 1, loads  # one page load: everything else was the API
    assert browsing.external == []
