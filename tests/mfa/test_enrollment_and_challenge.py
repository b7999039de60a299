"""Two-factor enrollment (enroll → confirm → disable) and the login challenge.

A user with TOTP on is signed in only in two steps: the password starts a challenge
(the session knows who is half signed in, nobody is logged in), then a live code or an
unused recovery code completes it. Codes are spent once, tries are limited per user,
and the secret and the recovery codes never show up in the database in plaintext, in
logs, in error messages or in forms.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyotp
import pytest
from django.contrib import admin
from django.contrib.auth import authenticate
from django.contrib.sessions.middleware import SessionMiddleware
from django.db import connection, models
from django.forms import modelform_factory
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.test.utils import isolate_apps

from appframework.auth import challenge as challenge_module
from appframework.auth import current_user_sync
from appframework.auth.session_store import SessionStore
from appframework.conf import app_settings
from appframework.container import container
from appframework.exceptions import TooManyRequestsException, ValidationException
from appframework.mfa import checks as mfa_checks
from appframework.mfa import (
    complete_challenge,
    confirm,
    disable,
    enroll,
    pending_user_id,
    start_challenge,
    verify_and_consume,
)
from appframework.mfa import totp as totp_module
from appframework.mfa.models import MfaEnrollable
from appframework.mfa.recovery import normalise_recovery_code, recovery_code_matches
from appframework.ratelimit import RateLimiter
from appframework.security.tokens import session_cookie_name
from testproject.blog.models import User
from tests.conftest import demo_tenant
from tests.system_checks import run_checks

TOTP_ON = "/account/mfa/totp/on"
TOTP_OFF = "/account/mfa/totp/off"
pytestmark = pytest.mark.django_db

STEP = 30


# -- time, codes and requests -----------------------------------------------------------------
class Clock:
    """The clock appframework.mfa reads (TOTP steps, the challenge's expiry)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    import time

    real = time.time()
    fake = Clock(real - real % STEP + 5)  # 5 s into a step: its neighbours are well defined
    monkeypatch.setattr(totp_module, "time", fake)
    monkeypatch.setattr(challenge_module, "time", fake)
    return fake


@pytest.fixture(autouse=True)
def limiter_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock of the limiter AuthServiceProvider binds, held 5 s into a 60-s window so
    a window boundary never falls in the middle of a test unless the test moves it."""
    import time

    real = time.time()
    fake = Clock(real - real % 60 + 5)
    monkeypatch.setattr(container.resolve(RateLimiter), "_clock", fake.time)
    return fake


def code(secret: str, clock: Clock, steps: int = 0) -> str:
    return pyotp.TOTP(secret).at(clock.now + STEP * steps)


def live_codes(secret: str, clock: Clock) -> set[str]:
    """The codes accepted now: this step and one either side."""
    return {code(secret, clock, k) for k in (-1, 0, 1)}


def not_live(secret: str, clock: Clock) -> str:
    """Six digits that are none of ``secret``'s live codes."""
    return next(
        c for c in ("000000", "111111", "222222", "333333") if c not in live_codes(secret, clock)
    )


def foreign_code(secret: str, clock: Clock) -> str:
    """The live code of another secret (and not one of ``secret``'s)."""
    while True:
        candidate = code(pyotp.random_base32(), clock)
        if candidate not in live_codes(secret, clock):
            return candidate


def session_request(cookie: str | None = None, path: str = "/login/mfa") -> HttpRequest:
    request = RequestFactory().post(path)
    if cookie is not None:
        request.COOKIES[session_cookie_name()] = cookie
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    return request


def fresh(user: Any) -> Any:
    return User.objects.get(pk=user.pk)


@dataclass
class Enabled:
    user: Any
    secret: str
    recovery_codes: list[str]


def turn_on(user: Any, clock: Clock) -> Enabled:
    """enroll + confirm with the live code; then one step later, so the step after the
    confirming one is live."""
    secret = enroll(user)["secret"]
    codes = confirm(user, code(secret, clock))
    clock.advance(STEP)
    return Enabled(user, secret, codes)


@pytest.fixture
def alice(user: Any, clock: Clock) -> Enabled:
    return turn_on(user, clock)


@pytest.fixture
def bob(other_user: Any, clock: Clock) -> Enabled:
    return turn_on(other_user, clock)


def challenged(enabled: Enabled) -> HttpRequest:
    request = session_request()
    start_challenge(request, fresh(enabled.user))
    return request


def row(user: Any) -> dict[str, Any]:
    return User.objects.filter(pk=user.pk).values(
        "mfa_secret", "mfa_enabled", "mfa_recovery_codes", "mfa_last_counter"
    )[0]


def raw_row_text(user: Any) -> str:
    """The user's row as the database returns it (the JSON column as stored text)."""
    table = connection.ops.quote_name(User._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table} WHERE id = %s", [user.pk])
        values = cursor.fetchone()
    return " ".join(str(v) for v in values)


# -- the demo through the test client ---------------------------------------------------------
def csrf_value(client: Client) -> str:
    return client.cookies[app_settings.CSRF.COOKIE_NAME].value


def session_cookie(client: Client) -> str | None:
    morsel = client.cookies.get(session_cookie_name())
    return morsel.value if morsel is not None and morsel.value else None


def password_step(client: Client, email: str, password: str) -> HttpResponse:
    assert client.get("/login").status_code == 200
    response: HttpResponse = client.post(
        "/login", {"email": email, "password": password, "_token": csrf_value(client)}
    )
    return response


def code_step(client: Client, typed: str) -> HttpResponse:
    assert client.get("/login/mfa").status_code == 200
    response: HttpResponse = client.post(
        "/login/mfa", {"code": typed, "_token": csrf_value(client)}
    )
    return response


def signed_in_as(client: Client) -> str | None:
    """The e-mail address the demo's index page shows as signed in, or None."""
    html = client.get("/").content.decode()
    match = re.search(r"Signed in as <strong>([^<]+)</strong>", html)
    if match is None:
        assert "You are anonymous" in html
    return match.group(1) if match else None


# == enrollment ===============================================================================
def test_enroll_stores_a_pending_secret_and_leaves_mfa_off(user: Any) -> None:
    enrolled = enroll(user)
    assert set(enrolled) == {"uri", "secret"}
    assert enrolled["uri"].startswith("otpauth://totp/")
    assert f"secret={enrolled['secret']}" in enrolled["uri"]
    stored = row(user)
    assert stored["mfa_secret"] == enrolled["secret"]
    assert stored["mfa_enabled"] is False
    assert stored["mfa_recovery_codes"] is None


def test_enroll_again_replaces_the_pending_secret_and_the_old_secrets_codes_no_longer_confirm(
    user: Any, clock: Clock
) -> None:
    first = enroll(user)["secret"]
    second = enroll(user)["secret"]
    assert first != second
    assert row(user)["mfa_secret"] == second
    with pytest.raises(ValidationException):
        confirm(fresh(user), code(first, clock))
    assert row(user)["mfa_enabled"] is False
    assert confirm(fresh(user), code(second, clock))


def test_enroll_while_on_is_refused_and_keeps_the_secret(alice: Enabled) -> None:
    before = row(alice.user)
    with pytest.raises(ValidationException):
        enroll(fresh(alice.user))
    assert row(alice.user) == before


def test_confirm_with_a_good_code_turns_mfa_on_and_returns_ten_recovery_codes(
    user: Any, clock: Clock
) -> None:
    secret = enroll(user)["secret"]
    codes = confirm(user, code(secret, clock))
    assert len(codes) == 10
    assert len(set(codes)) == 10
    stored = row(user)
    assert stored["mfa_enabled"] is True
    assert stored["mfa_secret"] == secret
    assert len(stored["mfa_recovery_codes"]) == 10


def test_confirm_returns_the_recovery_codes_only_once(user: Any, clock: Clock) -> None:
    secret = enroll(user)["secret"]
    confirm(user, code(secret, clock))
    before = row(user)
    with pytest.raises(ValidationException):
        confirm(fresh(user), code(secret, clock, 1))
    assert row(user) == before


def test_confirm_stores_only_hashes_of_the_recovery_codes(user: Any, clock: Clock) -> None:
    secret = enroll(user)["secret"]
    codes = confirm(user, code(secret, clock))
    stored = row(user)["mfa_recovery_codes"]
    as_json = json.dumps(stored)
    as_text = raw_row_text(user)
    for plain in codes:
        for form in (plain, normalise_recovery_code(plain), plain.upper()):
            assert form not in as_json
            assert form not in as_text
    assert all(h.startswith("sha256$") and h.count("$") == 2 for h in stored)


def test_confirm_records_the_confirming_step_so_that_code_cannot_be_used_again(
    user: Any, clock: Clock
) -> None:
    secret = enroll(user)["secret"]
    confirming = code(secret, clock)
    confirm(user, confirming)
    assert row(user)["mfa_last_counter"] == int(clock.now // STEP)
    assert verify_and_consume(fresh(user), confirming) is False


def test_confirm_with_no_enrollment_is_a_validation_error_and_changes_nothing(
    user: Any, clock: Clock
) -> None:
    before = row(user)
    with pytest.raises(ValidationException) as caught:
        confirm(user, code(pyotp.random_base32(), clock))
    assert caught.value.status_code == 422
    assert row(user) == before


@pytest.mark.parametrize("typed", ["wrong digits", "", None, "12 3456", "abcdef", 123456])
def test_confirm_with_a_bad_code_is_a_validation_error_and_changes_nothing(
    user: Any, clock: Clock, typed: Any
) -> None:
    secret = enroll(user)["secret"]
    if typed == "wrong digits":
        typed = not_live(secret, clock)
    before = row(user)
    with pytest.raises(ValidationException) as caught:
        confirm(fresh(user), typed)
    assert caught.value.status_code == 422
    assert row(user) == before


def test_confirm_with_the_code_of_another_secret_is_a_validation_error_and_changes_nothing(
    user: Any, clock: Clock
) -> None:
    secret = enroll(user)["secret"]
    before = row(user)
    with pytest.raises(ValidationException):
        confirm(fresh(user), foreign_code(secret, clock))
    assert row(user) == before


def test_disable_removes_the_secret_and_the_recovery_codes(alice: Enabled) -> None:
    disable(fresh(alice.user))
    assert row(alice.user) == {
        "mfa_secret": None,
        "mfa_enabled": False,
        "mfa_recovery_codes": None,
        "mfa_last_counter": None,
    }


def test_after_disable_the_old_codes_no_longer_work(alice: Enabled, clock: Clock) -> None:
    disable(fresh(alice.user))
    assert verify_and_consume(fresh(alice.user), code(alice.secret, clock)) is False
    assert verify_and_consume(fresh(alice.user), alice.recovery_codes[0]) is False


# == the challenge: unit level ================================================================
def test_start_challenge_leaves_nobody_signed_in_and_remembers_the_pending_user(
    alice: Enabled,
) -> None:
    request = challenged(alice)
    assert current_user_sync(request) is None
    assert pending_user_id(request) == alice.user.pk


def test_start_challenge_signs_out_a_user_already_signed_in_on_that_session(
    alice: Enabled, other_user: Any
) -> None:
    from appframework.auth import login

    request = session_request()
    login(request, other_user)
    assert current_user_sync(request) == other_user
    start_challenge(request, fresh(alice.user))
    del request.user  # what the next request of this session would see
    assert current_user_sync(request) is None
    assert pending_user_id(request) == alice.user.pk


def test_start_challenge_refuses_a_user_without_mfa(user: Any) -> None:
    request = session_request()
    with pytest.raises(ValidationException):
        start_challenge(request, user)
    assert pending_user_id(request) is None


def cookie_after(request: HttpRequest) -> str:
    """The session cookie SessionMiddleware sets at the end of ``request``."""
    response = SessionMiddleware(lambda r: HttpResponse()).process_response(request, HttpResponse())
    return str(response.cookies[session_cookie_name()].value)


def test_start_challenge_gives_the_session_a_new_key(alice: Enabled) -> None:
    planted = SessionStore()
    planted["visited"] = True
    planted.save()
    request = session_request(planted.session_key)
    start_challenge(request, fresh(alice.user))
    pending = cookie_after(request)
    assert pending and pending != planted.session_key
    assert pending_user_id(session_request(pending)) == alice.user.pk
    assert pending_user_id(session_request(planted.session_key)) is None


def test_complete_challenge_gives_the_session_a_new_key(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    pending = cookie_after(request)
    request = session_request(pending)
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user
    signed_in = cookie_after(request)
    assert signed_in and signed_in != pending
    assert current_user_sync(session_request(signed_in)) == alice.user
    assert current_user_sync(session_request(pending)) is None


def test_complete_challenge_with_a_live_code_signs_in_and_returns_the_user(
    alice: Enabled, clock: Clock
) -> None:
    request = challenged(alice)
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user
    assert current_user_sync(request) == alice.user
    assert pending_user_id(request) is None


def test_complete_challenge_with_a_wrong_code_returns_none_and_keeps_the_pending_user(
    alice: Enabled, clock: Clock
) -> None:
    request = challenged(alice)
    assert complete_challenge(request, wrong_code(alice, clock)) is None
    assert current_user_sync(request) is None
    assert pending_user_id(request) == alice.user.pk
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user


def test_complete_challenge_without_a_pending_challenge_returns_none(
    alice: Enabled, clock: Clock
) -> None:
    request = session_request()
    assert complete_challenge(request, code(alice.secret, clock)) is None
    assert complete_challenge(request, alice.recovery_codes[0]) is None
    assert current_user_sync(request) is None
    assert len(row(alice.user)["mfa_recovery_codes"]) == 10


def test_a_recovery_code_signs_in_once_and_is_removed(alice: Enabled) -> None:
    spent = alice.recovery_codes[3]
    request = challenged(alice)
    assert complete_challenge(request, spent.upper().replace("-", " ")) == alice.user
    stored = row(alice.user)["mfa_recovery_codes"]
    assert len(stored) == 9
    remaining = fresh(alice.user)
    for other in alice.recovery_codes[:3] + alice.recovery_codes[4:]:
        assert any(recovery_code_matches(h, other) for h in remaining.mfa_recovery_codes)

    again = challenged(alice)
    assert complete_challenge(again, spent) is None
    assert current_user_sync(again) is None
    assert len(row(alice.user)["mfa_recovery_codes"]) == 9


def test_the_same_live_code_twice_is_refused_the_second_time(alice: Enabled, clock: Clock) -> None:
    live = code(alice.secret, clock)
    assert complete_challenge(challenged(alice), live) == alice.user
    second = challenged(alice)
    assert complete_challenge(second, live) is None
    assert current_user_sync(second) is None


def test_an_older_step_after_a_newer_one_succeeded_is_refused(alice: Enabled, clock: Clock) -> None:
    newer, older = code(alice.secret, clock, 1), code(alice.secret, clock, 0)
    assert complete_challenge(challenged(alice), newer) == alice.user
    assert row(alice.user)["mfa_last_counter"] == int(clock.now // STEP) + 1
    request = challenged(alice)
    assert complete_challenge(request, older) is None
    assert current_user_sync(request) is None


def test_the_step_of_the_confirming_code_cannot_sign_in(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    confirmed_step = row(alice.user)["mfa_last_counter"]
    assert complete_challenge(request, code(alice.secret, clock, -1)) is None
    assert current_user_sync(request) is None
    # Refused as spent, not for some other reason: the sign-in is still pending, nothing
    # was consumed, and a live unused code then completes it.
    assert pending_user_id(request) == alice.user.pk
    assert row(alice.user)["mfa_last_counter"] == confirmed_step
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user
    assert current_user_sync(request) == alice.user


# -- rate limit -------------------------------------------------------------------------------
def wrong_code(enabled: Enabled, clock: Clock) -> str:
    return not_live(enabled.secret, clock)


def test_the_sixth_try_is_429_with_retry_after_even_with_the_right_code(
    alice: Enabled, clock: Clock
) -> None:
    request = challenged(alice)
    for _ in range(5):
        assert complete_challenge(request, wrong_code(alice, clock)) is None
    with pytest.raises(TooManyRequestsException) as caught:
        complete_challenge(request, code(alice.secret, clock))
    assert caught.value.status_code == 429
    retry_after = int(caught.value.response_headers()["Retry-After"])
    assert 1 <= retry_after <= 120
    assert current_user_sync(request) is None


def test_five_tries_before_a_minute_boundary_leave_none_just_after_it(
    alice: Enabled, clock: Clock, limiter_clock: Clock
) -> None:
    limiter_clock.advance(50)  # 55 s into the window
    request = challenged(alice)
    for _ in range(5):
        assert complete_challenge(request, wrong_code(alice, clock)) is None
    limiter_clock.advance(10)  # 5 s into the next window, 10 s after the tries
    with pytest.raises(TooManyRequestsException):
        complete_challenge(request, code(alice.secret, clock))


def test_the_tries_are_allowed_again_once_the_window_has_passed(
    alice: Enabled, clock: Clock, limiter_clock: Clock
) -> None:
    request = challenged(alice)
    for _ in range(5):
        assert complete_challenge(request, wrong_code(alice, clock)) is None
    with pytest.raises(TooManyRequestsException) as caught:
        complete_challenge(request, wrong_code(alice, clock))
    limiter_clock.advance(caught.value.retry_after + 1)
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user


def test_the_limit_counts_per_user_so_a_second_session_shares_it(
    alice: Enabled, clock: Clock
) -> None:
    first, second = challenged(alice), challenged(alice)
    for _ in range(3):
        assert complete_challenge(first, wrong_code(alice, clock)) is None
    for _ in range(2):
        assert complete_challenge(second, wrong_code(alice, clock)) is None
    with pytest.raises(TooManyRequestsException):
        complete_challenge(second, code(alice.secret, clock))
    with pytest.raises(TooManyRequestsException):
        complete_challenge(first, code(alice.secret, clock))


def test_another_user_is_not_affected_by_the_limit(
    alice: Enabled, bob: Enabled, clock: Clock
) -> None:
    request = challenged(alice)
    for _ in range(5):
        complete_challenge(request, wrong_code(alice, clock))
    with pytest.raises(TooManyRequestsException):
        complete_challenge(request, code(alice.secret, clock))
    bobs = challenged(bob)
    assert complete_challenge(bobs, code(bob.secret, clock)) == bob.user


def test_a_success_resets_the_count(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    for _ in range(4):
        assert complete_challenge(request, wrong_code(alice, clock)) is None
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user
    again = challenged(alice)
    for _ in range(4):
        assert complete_challenge(again, wrong_code(alice, clock)) is None
    assert complete_challenge(again, alice.recovery_codes[0]) == alice.user


def test_rate_limit_false_turns_the_limit_off(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    for _ in range(10):
        assert complete_challenge(request, wrong_code(alice, clock), rate_limit=False) is None
    assert complete_challenge(request, code(alice.secret, clock), rate_limit=False) == alice.user


def test_the_limit_follows_rate_limit_attempts(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    for _ in range(2):
        assert complete_challenge(request, wrong_code(alice, clock), rate_limit_attempts=2) is None
    with pytest.raises(TooManyRequestsException):
        complete_challenge(request, code(alice.secret, clock), rate_limit_attempts=2)


# -- the pending challenge ends ---------------------------------------------------------------
def test_the_pending_challenge_expires_after_the_challenge_ttl(
    alice: Enabled, clock: Clock
) -> None:
    ttl = int(app_settings.MFA.CHALLENGE_TTL)
    request = challenged(alice)
    clock.advance(ttl - 1)
    assert pending_user_id(request) == alice.user.pk
    clock.advance(2)
    assert pending_user_id(request) is None
    assert complete_challenge(request, code(alice.secret, clock)) is None
    assert current_user_sync(request) is None


def test_a_password_change_between_the_steps_ends_the_pending_challenge(
    alice: Enabled, clock: Clock
) -> None:
    request = challenged(alice)
    changed = fresh(alice.user)
    changed.set_password("a brand new password 42")
    changed.save()
    assert complete_challenge(request, code(alice.secret, clock)) is None
    assert current_user_sync(request) is None
    assert pending_user_id(request) is None


def test_an_inactive_user_cannot_complete_the_challenge(alice: Enabled, clock: Clock) -> None:
    request = challenged(alice)
    live = code(alice.secret, clock)
    last_counter = row(alice.user)["mfa_last_counter"]
    User.objects.filter(pk=alice.user.pk).update(is_active=False)
    assert complete_challenge(request, live) is None
    assert current_user_sync(request) is None
    # The code was not spent on the refused attempt: active again, it signs in.
    assert row(alice.user)["mfa_last_counter"] == last_counter
    User.objects.filter(pk=alice.user.pk).update(is_active=True)
    assert complete_challenge(request, live) == alice.user
    assert current_user_sync(request) == alice.user


# == the challenge through the demo ===========================================================
def test_demo_login_of_a_totp_user_goes_to_the_code_form_then_signs_in(
    alice: Enabled, password: str, clock: Clock
) -> None:
    client = Client(enforce_csrf_checks=True)
    response = password_step(client, alice.user.email, password)
    assert response.status_code == 302
    assert response["Location"] == "/login/mfa"
    assert signed_in_as(client) is None

    response = code_step(client, code(alice.secret, clock))
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert signed_in_as(client) == alice.user.email


def test_demo_code_form_with_a_wrong_code_is_401_and_stays_pending(
    alice: Enabled, password: str, clock: Clock
) -> None:
    client = Client(enforce_csrf_checks=True)
    password_step(client, alice.user.email, password)
    response = code_step(client, wrong_code(alice, clock))
    assert response.status_code == 401
    assert signed_in_as(client) is None
    assert code_step(client, alice.recovery_codes[0]).status_code == 302
    assert signed_in_as(client) == alice.user.email


def test_demo_login_without_totp_signs_in_directly(user: Any, password: str) -> None:
    client = Client(enforce_csrf_checks=True)
    response = password_step(client, user.email, password)
    assert response["Location"] == "/"
    assert signed_in_as(client) == user.email


def test_the_session_cookie_changes_at_the_password_step_and_at_the_completed_login(
    alice: Enabled, password: str, clock: Clock
) -> None:
    planted = SessionStore()
    planted["visited"] = True
    planted.save()
    client = Client(enforce_csrf_checks=True)
    client.cookies[session_cookie_name()] = planted.session_key

    password_step(client, alice.user.email, password)
    pending = session_cookie(client)
    assert pending is not None and pending != planted.session_key

    code_step(client, code(alice.secret, clock))
    signed_in = session_cookie(client)
    assert signed_in is not None and signed_in not in (planted.session_key, pending)
    assert signed_in_as(client) == alice.user.email

    # The cookie planted before the password step carries no pending sign-in, and the
    # half-signed-in cookie is not a signed-in session.
    old = Client()
    old.cookies[session_cookie_name()] = planted.session_key
    assert old.get("/login/mfa")["Location"] == "/login"
    half = Client()
    half.cookies[session_cookie_name()] = pending
    assert signed_in_as(half) is None


# -- skipping the challenge -------------------------------------------------------------------
@pytest.fixture
def half_signed_in(alice: Enabled, password: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    assert password_step(client, alice.user.email, password)["Location"] == "/login/mfa"
    return client


CSRF = object()  # stands for the client's current CSRF token in the requests below


def _with_csrf(value: Any, token: str) -> Any:
    if value is CSRF:
        return token
    if isinstance(value, dict):
        return {key: _with_csrf(item, token) for key, item in value.items()}
    return value


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "error_code", "signed_in_status"),
    [
        # The API takes bearer tokens only: a session, even a fully signed-in one, gets
        # the same 401; the session cannot obtain a token either (the /token case).
        pytest.param(
            "get",
            "/api/me",
            {},
            "token_required",
            401,
            id="test_after_the_password_step_the_api_is_401",
        ),
        pytest.param(
            "get",
            "/account/mfa",
            {},
            "not_authenticated",
            200,
            id="test_after_the_password_step_the_account_page_is_401",
        ),
        pytest.param(
            "post",
            "/token",
            {"data": {"_token": CSRF}},
            "not_authenticated",
            200,
            id="test_after_the_password_step_no_token_is_issued",
        ),
        pytest.param(
            "post",
            "/posts",
            {
                "data": json.dumps({"title": "sneaky"}),
                "content_type": "application/json",
                "HTTP_X_CSRF_TOKEN": CSRF,
            },
            "token_required",
            201,
            id="test_after_the_password_step_a_post_needing_a_user_is_401",
        ),
    ],
)
def test_after_the_password_step_a_request_needing_a_user_is_401(
    half_signed_in: Client,
    alice: Enabled,
    clock: Clock,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    error_code: str,
    signed_in_status: int,
) -> None:
    def send() -> HttpResponse:
        request = getattr(half_signed_in, method)
        response: HttpResponse = request(path, **_with_csrf(kwargs, csrf_value(half_signed_in)))
        return response

    response = send()
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == error_code
    assert signed_in_as(half_signed_in) is None

    # Control: once the code step completes, the same request from the same client gets
    # what a signed-in session gets (a member of the tenant, which the demo asks of writers).
    alice.user.tenants.add(demo_tenant())
    assert code_step(half_signed_in, code(alice.secret, clock)).status_code == 302
    assert signed_in_as(half_signed_in) == alice.user.email
    assert send().status_code == signed_in_status


def test_after_the_completed_challenge_a_token_is_issued(
    alice: Enabled, password: str, clock: Clock
) -> None:
    client = Client(enforce_csrf_checks=True)
    password_step(client, alice.user.email, password)
    code_step(client, code(alice.secret, clock))
    response = client.post("/token", {"_token": csrf_value(client)})
    assert response.status_code == 200
    token = response.json()["token"]
    me = Client().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert me.json()["id"] == alice.user.pk


def test_authenticate_refuses_a_user_with_totp_on(alice: Enabled, password: str) -> None:
    assert authenticate(None, username=alice.user.email, password=password) is None
    assert authenticate(None, email=alice.user.email, password=password) is None


def test_authenticate_still_accepts_a_user_with_totp_off(user: Any, password: str) -> None:
    assert authenticate(None, username=user.email, password=password) == user


def test_the_admin_login_form_does_not_sign_in_a_superuser_with_totp_on(
    alice: Enabled, password: str
) -> None:
    User.objects.filter(pk=alice.user.pk).update(is_staff=True, is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    page = client.get("/admin/login/?next=/admin/")
    masked = page.content.decode().split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = client.post(
        "/admin/login/?next=/admin/",
        {
            "username": alice.user.email,
            "password": password,
            "csrfmiddlewaretoken": masked,
            "next": "/admin/",
        },
    )
    assert response["Location"] == "/admin/login/code/"  # the code form, not a session
    assert client.get("/admin/").status_code == 302
    assert signed_in_as(client) is None


def test_the_admin_works_with_the_session_of_a_completed_challenge(
    alice: Enabled, password: str, clock: Clock
) -> None:
    User.objects.filter(pk=alice.user.pk).update(is_staff=True, is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    password_step(client, alice.user.email, password)
    assert client.get("/admin/").status_code == 302
    code_step(client, code(alice.secret, clock))
    assert client.get("/admin/").status_code == 200


# == the account page =========================================================================
def test_account_page_turns_totp_on_and_shows_the_recovery_codes(user: Any, clock: Clock) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user, backend="appframework.auth.AuthManager")
    assert client.get("/account/mfa").status_code == 200
    page = client.get(TOTP_ON)
    assert page.status_code == 200
    secret = row(user)["mfa_secret"]
    assert secret in page.content.decode()
    assert "<svg" in page.content.decode()
    page = client.post(TOTP_ON, {"code": code(secret, clock), "_token": csrf_value(client)})
    assert page.status_code == 200
    assert row(user)["mfa_enabled"] is True
    shown = re.findall(r"\b[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}\b", page.content.decode())
    assert len(set(shown)) == 10
    stored = row(user)["mfa_recovery_codes"]
    assert all(any(recovery_code_matches(h, c) for h in stored) for c in shown)


def test_account_page_with_a_wrong_confirm_code_is_422_without_the_secret_or_the_code(
    user: Any, clock: Clock
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user, backend="appframework.auth.AuthManager")
    assert client.get(TOTP_ON).status_code == 200
    secret = row(user)["mfa_secret"]
    typed = foreign_code(secret, clock)
    page = client.post(TOTP_ON, {"code": typed, "_token": csrf_value(client)})
    assert page.status_code == 422
    html = page.content.decode()
    alerts = re.findall(r'role="alert">(.*?)<', html, re.S)
    assert alerts
    assert not any(typed in alert or secret in alert for alert in alerts)
    assert row(user)["mfa_enabled"] is False


def test_account_page_turns_totp_off_only_with_a_current_code(alice: Enabled, clock: Clock) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(fresh(alice.user), backend="appframework.auth.AuthManager")
    assert client.get("/account/mfa").status_code == 200
    page = client.post(
        TOTP_OFF, {"code": wrong_code(alice, clock), "_token": csrf_value(client)}
    )
    assert page.status_code == 422
    assert row(alice.user)["mfa_enabled"] is True
    page = client.post(TOTP_OFF, {"code": code(alice.secret, clock), "_token": csrf_value(client)})
    assert page.status_code == 302
    assert row(alice.user) == {
        "mfa_secret": None,
        "mfa_enabled": False,
        "mfa_recovery_codes": None,
        "mfa_last_counter": None,
    }


# == secrets and codes stay hidden ============================================================
def debug_logging(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("django", "django.request", "django.security", "django.template", "appframework"):
        caplog.set_level(logging.DEBUG, logger=name)


def assert_not_logged(
    caplog: pytest.LogCaptureFixture, secrets: list[str], recovery: list[str], typed: list[str]
) -> None:
    """No record, as the log handler writes it (message, arguments, traceback), holds
    any of the values."""
    assert caplog.records
    values = [
        *(("secret", v) for v in secrets),
        *(("recovery code", v) for v in recovery),
        *(("recovery code", normalise_recovery_code(v) or v) for v in recovery),
        *(("TOTP code", v) for v in typed),
    ]
    leaks = [
        f"{kind} in {r.name} {r.levelname}: {r.getMessage()[:80]}"
        for r in caplog.records
        for kind, value in values
        if value in caplog.handler.format(r) + repr(r.args)
    ]
    assert not leaks, sorted(set(leaks))


def test_enrolling_and_signing_in_log_no_secret_recovery_code_or_totp_code(
    user: Any, password: str, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    debug_logging(caplog)
    secret = enroll(user)["secret"]
    typed = [not_live(secret, clock)]
    with pytest.raises(ValidationException):
        confirm(fresh(user), typed[-1])
    typed.append(code(secret, clock))
    recovery = confirm(fresh(user), typed[-1])
    clock.advance(STEP)

    # A wrong code, a recovery code, a live code, the same code replayed, the limit.
    wrong = not_live(secret, clock)
    live = code(secret, clock)
    typed += [wrong, live]
    client = Client(enforce_csrf_checks=True)
    password_step(client, user.email, password)
    assert code_step(client, wrong).status_code == 401
    assert code_step(client, recovery[1]).status_code == 302
    other = Client(enforce_csrf_checks=True)
    password_step(other, user.email, password)
    assert code_step(other, live).status_code == 302
    replay = Client(enforce_csrf_checks=True)
    password_step(replay, user.email, password)
    assert code_step(replay, live).status_code == 401
    for _ in range(4):
        assert code_step(replay, wrong).status_code == 401
    assert code_step(replay, recovery[2]).status_code == 429
    request = challenged(Enabled(user, secret, recovery))
    with pytest.raises(TooManyRequestsException):
        complete_challenge(request, recovery[1])

    assert_not_logged(caplog, [secret], recovery, typed)


def test_the_account_page_logs_neither_the_secret_nor_the_recovery_codes(
    user: Any, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    debug_logging(caplog)
    page = Client(enforce_csrf_checks=True)
    page.force_login(user, backend="appframework.auth.AuthManager")
    page.get(TOTP_ON)
    secret = row(user)["mfa_secret"]
    typed = [not_live(secret, clock), code(secret, clock)]
    form = {"_token": csrf_value(page)}
    assert page.post(TOTP_ON, {**form, "code": typed[0]}).status_code == 422
    shown = page.post(TOTP_ON, {**form, "code": typed[1]}).content.decode()
    recovery = re.findall(r"\b[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}\b", shown)
    assert len(recovery) == 10
    page.get("/account/mfa")
    clock.advance(STEP)
    typed.append(code(secret, clock))
    page.post(TOTP_OFF, {"code": typed[-1], "_token": csrf_value(page)})
    assert row(user)["mfa_enabled"] is False

    assert_not_logged(caplog, [secret], recovery, typed)


def test_validation_errors_contain_neither_the_secret_nor_the_code(user: Any, clock: Clock) -> None:
    secret = enroll(user)["secret"]
    typed = foreign_code(secret, clock)
    with pytest.raises(ValidationException) as bad_code:
        confirm(fresh(user), typed)
    live = code(secret, clock)
    recovery = confirm(fresh(user), live)
    with pytest.raises(ValidationException) as not_pending:
        confirm(fresh(user), code(secret, clock, 1))
    with pytest.raises(ValidationException) as already_on:
        enroll(fresh(user))
    for caught in (bad_code, not_pending, already_on):
        message = f"{caught.value} {caught.value.detail!r} {caught.value.args!r}"
        assert secret not in message
        assert typed not in message and live not in message
        assert not any(c in message for c in recovery)


def test_model_forms_leave_out_the_secret_and_the_recovery_codes() -> None:
    # The fields exist on the model and are left out because they are not editable.
    for name in ("mfa_secret", "mfa_recovery_codes", "mfa_last_counter"):
        assert User._meta.get_field(name).editable is False
    form = modelform_factory(User, fields="__all__")()
    assert "email" in form.fields
    assert "mfa_secret" not in form.fields
    assert "mfa_recovery_codes" not in form.fields
    assert "mfa_last_counter" not in form.fields


def test_the_admin_change_page_does_not_show_the_secret_or_the_hashes(
    alice: Enabled, other_user: Any
) -> None:
    User.objects.filter(pk=other_user.pk).update(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(fresh(other_user), backend="appframework.auth.AuthManager")
    response = client.get(f"/admin/blog/user/{alice.user.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert alice.secret not in html
    for hashed in row(alice.user)["mfa_recovery_codes"]:
        assert hashed.split("$")[2] not in html
    assert "mfa_secret" not in html and "mfa_recovery_codes" not in html


# -- check appframework.E010 ------------------------------------------------------------------
def e010(errors: list[Any]) -> list[Any]:
    return [e for e in errors if e.id == "appframework.E010"]


def test_check_e010_is_silent_for_the_demo() -> None:
    assert mfa_checks.check_hidden_fields() == []


@pytest.fixture
def user_admin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Put a throwaway ModelAdmin for the demo's User in admin.site for one test (with
    the mixin that refuses filtering on the secrets: tests/mfa/test_admin_lookups.py
    covers an admin without it)."""
    from appframework.mfa.admin import HiddenFieldsAdminMixin

    def register(**attrs: Any) -> None:
        bases = (HiddenFieldsAdminMixin, admin.ModelAdmin)
        model_admin_class = type("ThrowawayUserAdmin", bases, attrs)
        monkeypatch.setitem(admin.site._registry, User, model_admin_class(User, admin.site))

    yield register


ADMIN_LISTINGS: list[tuple[str, dict[str, Any]]] = [
    ("fields", {"fields": ["email", "mfa_secret"]}),
    ("readonly_fields", {"readonly_fields": ["mfa_recovery_codes"]}),
    ("list_display", {"list_display": ["email", "mfa_secret"]}),
    ("list_filter", {"list_filter": ["mfa_recovery_codes"]}),
    ("search_fields", {"search_fields": ["email", "mfa_secret"]}),
    ("search_fields lookup", {"search_fields": ["mfa_secret__iexact"]}),
    ("search_fields exact prefix", {"search_fields": ["=mfa_secret"]}),
    ("search_fields startswith prefix", {"search_fields": ["^mfa_secret"]}),
    ("fieldsets", {"fieldsets": [(None, {"fields": ["email", ("name", "mfa_secret")]})]}),
]


@pytest.mark.parametrize(
    "attrs", [a for _, a in ADMIN_LISTINGS], ids=[n for n, _ in ADMIN_LISTINGS]
)
def test_check_e010_flags_a_model_admin_that_lists_a_hidden_field(
    user_admin: Any, attrs: dict[str, Any]
) -> None:
    user_admin(**attrs)
    errors = e010(mfa_checks.check_hidden_fields())
    assert len(errors) == 1
    assert "blog.User" in errors[0].msg


def test_check_e010_is_silent_for_a_model_admin_that_lists_only_other_fields(
    user_admin: Any,
) -> None:
    user_admin(list_display=["email", "mfa_enabled"], search_fields=["email"])
    assert mfa_checks.check_hidden_fields() == []


def test_check_e010_runs_with_the_system_checks(user_admin: Any) -> None:

    user_admin(list_display=["email", "mfa_secret"])
    assert e010(run_checks())


@isolate_apps("testproject.blog")
def test_check_e010_flags_a_model_that_makes_a_hidden_field_editable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.apps import apps as global_apps

    class Editable(MfaEnrollable):
        mfa_secret = models.CharField(max_length=64, null=True, blank=True)

        class Meta:
            app_label = "blog"

    class Kept(MfaEnrollable):
        class Meta:
            app_label = "blog"

    registry = Editable._meta.apps
    assert registry is not global_apps
    monkeypatch.setattr(mfa_checks, "apps", registry)
    errors = e010(mfa_checks.check_hidden_fields())
    assert [e.obj for e in errors] == [Editable]
    assert "mfa_secret" in errors[0].msg


def test_tries_made_while_blocked_are_not_counted(
    alice: Enabled, clock: Clock, limiter_clock: Clock
) -> None:
    # Whoever has the password could otherwise keep the owner locked out for ever by
    # trying on while blocked: Retry-After must not grow, and the owner gets in once
    # the first wait is over.
    request = challenged(alice)
    for _ in range(5):
        assert complete_challenge(request, wrong_code(alice, clock)) is None
    with pytest.raises(TooManyRequestsException) as first:
        complete_challenge(request, wrong_code(alice, clock))
    waits = []
    for _ in range(20):
        limiter_clock.advance(1)
        with pytest.raises(TooManyRequestsException) as blocked:
            complete_challenge(request, wrong_code(alice, clock))
        waits.append(blocked.value.retry_after)
    assert waits == sorted(waits, reverse=True)  # counting down, never up
    limiter_clock.advance(first.value.retry_after - 20 + 1)
    assert complete_challenge(request, code(alice.secret, clock)) == alice.user


def test_once_the_window_has_passed_since_the_tries_a_live_code_is_taken(
    alice: Enabled, clock: Clock, limiter_clock: Clock
) -> None:
    # The limit is per window: two wrong codes with a 10-second window, then 11 s later
    # the live code signs in (the previous window's tries weigh nothing any more).
    options = {"rate_limit_attempts": 2, "rate_limit_window": 10}
    limiter_clock.advance(6)  # 1 s into a 10-s clock window: 11 s later is in the next one
    request = challenged(alice)
    for _ in range(2):
        assert complete_challenge(request, wrong_code(alice, clock), **options) is None
    with pytest.raises(TooManyRequestsException) as caught:
        complete_challenge(request, wrong_code(alice, clock), **options)
    assert 9 <= caught.value.retry_after <= 10
    limiter_clock.advance(11)
    assert complete_challenge(request, code(alice.secret, clock), **options) == alice.user
