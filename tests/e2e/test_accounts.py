"""Accounts in the browser: signing up (and the signed webhook it fires), turning on
two-factor authentication on the library's pages (appframework.auth.urls at the demo's
paths), the code form the next login asks for, and the admin's own login asking for
the code in the admin's look (appframework.admin.AdminConfig)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pyotp

from appframework.mfa.flows import VALID_WINDOW
from testproject.blog.management.commands.seed_demo import DEMO_EMAIL, DEMO_PASSWORD

from .conftest import STEP, Steps, expect, log_in, sign_up, turn_on_totp


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


def log_out(page: Any) -> None:
    page.goto("/")
    with page.expect_navigation():
        page.get_by_role("button", name="Log out", exact=True).click()
    expect(page.get_by_text("You are anonymous")).to_be_visible()


def code_of_a_later_step(totp: pyotp.TOTP, spent_step: int) -> str:
    """The code of the step after ``spent_step``. The server allows VALID_WINDOW steps
    of clock drift, so with one or more it is accepted at once; with none, only once
    that step has begun."""
    later = spent_step + 1
    if VALID_WINDOW < 1:
        time.sleep(max(0.0, later * STEP - time.time()))
    return str(totp.at(later * STEP))


def test_totp_enrolment_makes_the_next_login_ask_for_a_code_and_a_code_works_once(
    page: Any, steps: Steps
) -> None:
    email, password = sign_up(page, steps)
    totp, confirm_step, _ = turn_on_totp(page, steps)
    confirm_code = totp.at(confirm_step * STEP)

    log_out(page)
    steps(page, "logged out")

    page.goto("/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    steps(page, "login form")
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

    page.fill("input[name=code]", code_of_a_later_step(totp, confirm_step))
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("p", has_text="Signed in as")).to_contain_text(email)
    steps(page, "signed in with a later code")


def _turn_off_with(page: Any, recovery: list[str]) -> None:
    """Back to the seeded state (the admin account without TOTP) for the tests after
    this one, signing in with recovery codes if need be."""
    log_in(page, DEMO_EMAIL, DEMO_PASSWORD)
    if page.url.endswith("/login/mfa"):
        page.fill("input[name=code]", recovery[-1])
        with page.expect_navigation():
            page.get_by_role("button", name="Sign in").click()
    page.goto("/account/mfa")
    if page.get_by_role("link", name="Turn off").count():
        page.goto("/account/mfa/totp/off")
        page.fill("input[name=code]", recovery[-2])
        with page.expect_navigation():
            page.get_by_role("button", name="Turn it off").click()
        # Off again: the overview says so and offers to turn it on.
        expect(page.get_by_text("Two-factor authentication is off.")).to_be_visible()
        expect(page.get_by_role("link", name="Turn on")).to_be_visible()


def test_the_admin_login_asks_a_staff_user_with_totp_for_a_code_in_the_admins_look(
    new_page: Callable[[], Any], steps: Steps
) -> None:
    page = new_page()
    log_in(page, DEMO_EMAIL, DEMO_PASSWORD)
    totp, confirm_step, recovery = turn_on_totp(page, steps)
    try:
        log_out(page)
        page.goto("/admin/login/")
        page.fill("#id_username", DEMO_EMAIL)
        page.fill("#id_password", DEMO_PASSWORD)
        steps(page, "admin login")
        with page.expect_navigation():
            page.get_by_role("button", name="Log in").click()
        # The right password of a user with TOTP on: the code form, never "Please enter
        # the correct email and password".
        expect(page).to_have_url(re.compile(r"/admin/login/code/$"))
        expect(page.locator("#site-name")).to_be_visible()  # the admin's header
        expect(page.get_by_text("Please enter the correct")).to_have_count(0)
        steps(page, "admin code form")

        live = {totp.at(time.time() + STEP * k) for k in range(-1, 3)}
        page.fill("input[name=code]", next(c for c in ("000000", "111111", "222222") if c not in live))
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(".errornote")).to_contain_text("That code is not valid.")
        steps(page, "admin wrong code")

        page.fill("input[name=code]", code_of_a_later_step(totp, confirm_step))
        with page.expect_navigation():
            page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(re.compile(r"/admin/$"))
        expect(page.get_by_text("Site administration")).to_be_visible()
        steps(page, "admin after the code")
    finally:
        _turn_off_with(new_page(), recovery)
