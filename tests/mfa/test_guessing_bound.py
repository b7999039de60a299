"""The bound on guessing a second factor: five wrong answers at once, then each further
try waits twice as long as the one before (a minute first, at most four hours), counted
per user across the sign-in challenge and the pages that ask for a current code, until a
try succeeds. Someone who holds the password gets about 190 guesses in 30 days; the owner
signs in once they stop."""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any

import pyotp
import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from appframework.auth.factor_limit import begin_factor_try
from appframework.container import container
from appframework.events import second_factor_guessed
from appframework.exceptions import TooManyRequestsException
from appframework.mfa import complete_challenge, start_challenge
from appframework.ratelimit import RateLimiter, backoff_schedule
from tests.conftest import enable_totp

pytestmark = pytest.mark.django_db

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock(1_800_000_000.0)
    monkeypatch.setattr(container.resolve(RateLimiter), "_clock", fake.time)
    return fake


def _wrong(secret: str) -> str:
    """Six digits that are none of ``secret``'s live codes (this step, one either side)."""
    now = time.time()
    live = {pyotp.TOTP(secret).at(now + k) for k in (-30, 0, 30)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in live)


def _challenged(user: Any) -> HttpRequest:
    request = RequestFactory().post("/login/mfa")
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    start_challenge(request, user)
    return request


def test_the_schedule_is_five_free_tries_then_doubling_waits_capped_at_four_hours() -> None:
    opens = [backoff_schedule(n, 5, MINUTE, 4 * HOUR) for n in range(1, 16)]
    assert opens[:5] == [0.0] * 5
    waits = [b - a for a, b in pairwise(opens[4:])]
    assert waits == [60, 120, 240, 480, 960, 1920, 3840, 7680, 14400, 14400]


def test_a_month_of_guessing_as_fast_as_allowed_stays_below_a_thousandth(
    user: Any, clock: Clock
) -> None:
    """The arithmetic of docs/mfa.md, run: an attacker who has the password tries the
    moment each try is allowed for 30 days. A TOTP guess hits one of the three live codes
    (the step and one either side) with probability 3 in a million."""
    started = clock.now
    guesses = refused = 0
    while clock.now < started + 30 * DAY:
        try:
            attempt = begin_factor_try(user.pk)
        except TooManyRequestsException as exc:
            refused += 1
            clock.now += exc.retry_after or 1.0
            continue
        attempt.failed(user=user)
        guesses += 1
    chance = 1 - (1 - 3e-6) ** guesses
    assert 150 <= guesses <= 200, guesses
    assert chance < 0.001
    print(f"30 days: {guesses} guesses, chance {chance:.5%}")


def test_a_burst_at_an_allowed_moment_gets_one_try_through(user: Any, clock: Clock) -> None:
    for _ in range(5):
        begin_factor_try(user.pk).failed(user=user)
    clock.now += MINUTE
    outcomes = []
    for _ in range(10):
        try:
            begin_factor_try(user.pk).failed(user=user)
            outcomes.append("tried")
        except TooManyRequestsException as exc:
            outcomes.append(round(exc.retry_after or 0))
    assert outcomes == ["tried"] + [120] * 9


def test_the_challenge_waits_a_minute_then_two_and_the_owner_gets_in_after_the_attacker_stops(
    user: Any, clock: Clock
) -> None:
    secret, _ = enable_totp(user)
    attacker = _challenged(user)
    for _ in range(5):
        assert complete_challenge(attacker, _wrong(secret)) is None
    with pytest.raises(TooManyRequestsException) as sixth:
        complete_challenge(attacker, _wrong(secret))
    assert sixth.value.retry_after == pytest.approx(MINUTE)
    clock.now += MINUTE
    assert complete_challenge(attacker, _wrong(secret)) is None
    with pytest.raises(TooManyRequestsException) as seventh:
        complete_challenge(attacker, _wrong(secret))
    assert seventh.value.retry_after == pytest.approx(2 * MINUTE)
    # The attacker stops; the owner, from another browser, waits out the last wait.
    owner = _challenged(user)
    clock.now += 2 * MINUTE
    # (The step that confirmed TOTP is spent; the next one is live too.)
    assert complete_challenge(owner, pyotp.TOTP(secret).at(time.time() + 30)) == user
    # A success ends the streak: the next mistakes start with five free tries again.
    again = _challenged(user)
    for _ in range(5):
        assert complete_challenge(again, _wrong(secret)) is None


def test_the_owner_is_told_once_when_the_free_tries_are_used_up(user: Any, clock: Clock) -> None:
    told: list[dict[str, Any]] = []

    def record(sender: Any, **kwargs: Any) -> None:
        told.append(kwargs)

    second_factor_guessed.connect(record, weak=False, dispatch_uid="test-guessing")
    try:
        for _ in range(5):
            begin_factor_try(user.pk).failed(user=user)
        clock.now += MINUTE
        begin_factor_try(user.pk).failed(user=user)
    finally:
        second_factor_guessed.disconnect(dispatch_uid="test-guessing")
    assert [(t["user"], t["failures"]) for t in told] == [(user, 5)]


def test_the_challenge_and_the_account_pages_count_on_one_streak(
    user: Any, clock: Clock
) -> None:
    secret, _ = enable_totp(user)
    for _ in range(4):
        begin_factor_try(user.pk).failed(user=user)  # say, on the account page
    request = _challenged(user)
    assert complete_challenge(request, _wrong(secret)) is None
    with pytest.raises(TooManyRequestsException):
        complete_challenge(request, pyotp.TOTP(secret).at(time.time() + 30))


def test_the_challenge_follows_the_free_tries_and_first_wait_settings(
    user: Any, clock: Clock
) -> None:
    """With MFA["FREE_TRIES"] = 3, the fourth try of a sign-in waits, even with the
    right code (the challenge's own defaults once overrode the settings)."""
    from tests.auth.flows import appframework_settings

    secret, _ = enable_totp(user)
    with appframework_settings(mfa={"FREE_TRIES": 3, "FIRST_WAIT": 10.0}):
        request = _challenged(user)
        for _ in range(3):
            assert complete_challenge(request, _wrong(secret)) is None
        with pytest.raises(TooManyRequestsException):
            complete_challenge(request, pyotp.TOTP(secret).at(time.time() + 30))
        clock.now += 10.0
        assert complete_challenge(request, pyotp.TOTP(secret).at(time.time() + 30)) == user
