"""A flood of failed logins must not evict the record of ended sessions.

The record (``AUTH["REVOCATION_CACHE"]``) is only as good as its cache: an evicted entry
lets a kept copy of a logged-out cookie work again. The demo keeps it on an alias of its
own (``revocations``), away from the login throttle's counters, here on ``default`` (a
LocMem cache of 300 entries, named as a project may name it; by default, ``AUTO``, they
would be in the suite's database store, which evicts nothing), and the throttle creates
no per-name key once an address is over its limit. An attacker sends 400 failed logins
with made-up names from one address.

The limiter's clock is the frozen one of ``tests/hardening/test_login_throttle.py``;
logins and logouts go through the views of ``tests/auth/test_revocation.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core.cache import caches

from appframework.auth import AuthManager
from appframework.auth.revocation import ended_session_key
from appframework.auth.throttle import LoginThrottle
from appframework.ratelimit import RateLimiter
from tests.auth.test_revocation import MODES, Browser, nonce_of, replay_status, use_revocation_cache
from tests.hardening.test_login_throttle import (  # noqa: F401 (fixtures used by name)
    ATTACKER,
    THROTTLED,
    WRONG,
    FakeClock,
    clock,
    rate_limit,
    via_authenticate,
)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.urls("tests.auth.revocation_urls"),
    pytest.mark.usefixtures("_frozen_throttle"),
]

FLOOD = 400


@pytest.fixture
def _frozen_throttle(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:  # noqa: F811
    """The login throttle on the locmem ``default`` alias, on a limiter whose clock the
    test controls."""
    limiter = RateLimiter("default", prefix="appframework:login", clock=clock)
    monkeypatch.setattr(AuthManager, "throttle", LoginThrottle(limiter))

ADDRESS_LIMIT = 50  # RATE_LIMIT["LOGIN_ADDRESS_ATTEMPTS"] default


def flood() -> list[str]:
    """``FLOOD`` failed logins, each with a new made-up name, from one address."""
    return [via_authenticate(f"made-up-{i}@example.com", "x", ATTACKER, None) for i in range(FLOOD)]


def logged_out_copy(mode: str, user: Any, password: str) -> str:
    """A copy of a session cookie kept before its logout (already refused)."""
    browser = Browser(mode)
    browser.login(user, password)
    kept = browser.cookie()
    browser.logout()
    assert replay_status(mode, kept) == 401
    return kept


@pytest.mark.parametrize("mode", MODES)
def test_flood_of_made_up_names_does_not_make_a_logged_out_kept_cookie_valid_again(
    mode: str, user: Any, password: str
) -> None:
    assert settings.APPFRAMEWORK["AUTH"]["REVOCATION_CACHE"] == "revocations"
    kept = logged_out_copy(mode, user, password)

    outcomes = flood()

    assert outcomes == [WRONG] * ADDRESS_LIMIT + [THROTTLED] * (FLOOD - ADDRESS_LIMIT)
    assert replay_status(mode, kept) == 401
    assert caches["revocations"].get(ended_session_key(nonce_of(kept))) is True


@pytest.mark.parametrize("mode", MODES)
def test_flood_that_overflows_the_throttles_cache_leaves_the_record_on_its_own_alias(
    mode: str, user: Any, password: str
) -> None:
    """Even with the per-address count off, so that every attempt writes a key of its
    own and ``default`` culls entries, the record on ``revocations`` holds."""
    kept = logged_out_copy(mode, user, password)
    caches["default"].set("sentinel", True)

    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=None):
        outcomes = flood()

    assert outcomes == [WRONG] * FLOOD
    assert caches["default"].get("sentinel") is None  # the flood did evict from default
    assert replay_status(mode, kept) == 401


@pytest.mark.parametrize("mode", MODES)
def test_address_limit_keeps_a_flood_from_evicting_even_a_record_on_the_throttles_alias(
    mode: str, user: Any, password: str, settings: Any
) -> None:
    """With the record on ``default`` too (W006 warns about that), the per-address count
    stops the flood creating keys before the 300-entry cache overflows."""
    use_revocation_cache(settings, "default")
    kept = logged_out_copy(mode, user, password)

    outcomes = flood()

    assert outcomes == [WRONG] * ADDRESS_LIMIT + [THROTTLED] * (FLOOD - ADDRESS_LIMIT)
    assert caches["default"].get(ended_session_key(nonce_of(kept))) is True
    assert replay_status(mode, kept) == 401


@pytest.mark.parametrize("mode", MODES)
def test_control_the_same_flood_evicts_a_record_sharing_an_unlimited_throttles_alias(
    mode: str, user: Any, password: str, settings: Any
) -> None:
    """Control: the flood is big enough to evict. On the throttle's alias, with the
    per-address count off, the logged-out copy works again: why the record has an alias
    of its own (and why W006 exists)."""
    use_revocation_cache(settings, "default")
    kept = logged_out_copy(mode, user, password)

    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=None):
        flood()

    assert replay_status(mode, kept) == 200
