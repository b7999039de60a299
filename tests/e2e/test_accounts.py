"""Accounts in the browser: signing up (and the signed webhook it fires), turning on
two-factor authentication, and the code form the next login asks for."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from typing import Any

import pyotp

from appframework.mfa.flows import VALID_WINDOW
from testproject.blog.management.commands.seed_demo import DEMO_EMAIL, DEMO_PASSWORD

from .conftest import Steps, expect, log_in

#: A base32 TOTP secret as /account/mfa shows it.
SECRET = re.compile(r"^[A-Z2-7]{16,}=*$")
STEP = 30  # seconds per TOTP code


def sign_up(page: Any, steps: Steps) -> tuple[str, str]:
    """A new account through /signup; returns (email, password), on the page it lands on."""
    email = f"e2e-{secrets.token_hex(4)}@example.com"
    password = f"e2e-{secrets.token_urlsafe(12)}"
    page.goto("/signup")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    steps(page, "signup form")
    with page.expect_navigation():
        page.get_by_role("button", name="Create account").click()
    return email, password


def received_user_registered(page: Any) -> Any:
    """The receiver's records of user.registered on /webhooks (newest first)."""
    return page.locator('h3:has-text("Received") + ul > li', has_text="user.registered")


def test_signup_delivers_a_signed_user_registered_webhook_to_the_demo_receiver(
    new_page: Callable[[], Any], steps: Steps
) -> None:
    """/webhooks is for staff: the admin watches it while a visitor signs up."""
    admin = new_page()
    log_in(admin, DEMO_EMAIL, DEMO_PASSWORD)
    admin.goto("/webhooks")
    before = received_user_registered(admin).count()
    deliveries_before = admin.locator("tr", has_text="user.registered").count()
    visitor = new_page()
    email, _ = sign_up(visitor, steps)

    # Signing up signs the new user in; the page they land on is not theirs to see.
    visitor.goto("/")
    expect(visitor.locator("nav")).to_contain_text(email)
    assert visitor.request.get("/webhooks").status == 403
    # The delivery left when the signup committed, before the signup answered.
    admin.reload()
    expect(admin.locator("tr", has_text="user.registered")).to_have_count(deliveries_before + 1)
    expect(admin.locator("tr", has_text="user.registered").first).to_contain_text("delivered")
    expect(received_user_registered(admin)).to_have_count(before + 1)
    newest = received_user_registered(admin).first
    expect(newest).to_contain_text("signature valid")
    expect(newest).to_contain_text("timestamp fresh")
    steps(admin, "webhooks after signup")


def test_totp_enrolment_makes_the_next_login_ask_for_a_code_and_a_code_works_once(
    page: Any, steps: Steps
) -> None:
    email, password = sign_up(page, steps)

    page.goto("/account/mfa")
    expect(page.get_by_text("Two-factor authentication is off")).to_be_visible()
    steps(page, "mfa off")
    page.get_by_role("button", name="Turn it on").click()
    expect(page.locator("svg").first).to_be_visible()  # the QR code
    secrets_shown = [t.strip() for t in page.locator("code").all_inner_texts()]
    secret = next(t for t in secrets_shown if SECRET.match(t))
    steps(page, "mfa enrol QR code and secret")

    totp = pyotp.TOTP(secret)
    confirm_step = int(time.time()) // STEP
    confirm_code = totp.at(confirm_step * STEP)
    page.fill("input[name=code]", confirm_code)
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_text("recovery codes are shown")).to_be_visible()
    recovery = page.locator("pre").inner_text().split()
    assert len(recovery) >= 5, recovery
    steps(page, "mfa on recovery codes")

    page.goto("/")
    with page.expect_navigation():
        page.get_by_role("button", name="Log out", exact=True).click()
    expect(page.get_by_text("You are anonymous")).to_be_visible()
    steps(page, "logged out")

    page.goto("/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    # The password alone signs nobody in with two-factor on: the code form follows.
    expect(page).to_have_url(re.compile(r"/login/mfa$"))
    steps(page, "code form after the password")

    # The confirming code is spent: the same code cannot sign in.
    page.fill("input[name=code]", confirm_code)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("That code is not valid.")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login/mfa$"))
    steps(page, "spent code refused")

    # The code of the next 30-second step: later than the spent one. The server allows
    # VALID_WINDOW steps of clock drift, so with one or more it is accepted at once;
    # with none, only once that step has begun.
    later = confirm_step + 1
    if VALID_WINDOW < 1:
        time.sleep(max(0.0, later * STEP - time.time()))
    page.fill("input[name=code]", totp.at(later * STEP))
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("p", has_text="Signed in as")).to_contain_text(email)
    steps(page, "signed in with a later code")
