"""What the login throttle counts under, as an attacker would try to escape or abuse it.

- The per-address count is hit first; once it refuses, no per-account key is created, so
  a flood of made-up names cannot fill (and evict) the cache.
- IPv6 addresses are counted per /64 (rotating addresses inside one's own /64 is free);
  an IPv4-mapped IPv6 address is its IPv4 address.
- ``client_ip`` strips ports (``192.0.2.1:5555``, ``[2001:db8::1]:443``).
- Usernames are NFKC-normalised, stripped and casefolded: full-width, differently cased
  or whitespace-padded spellings share the account's count.
- Without a client address the throttle still counts (every such client shares one
  count) and logs one warning.

The limiter's clock is the frozen one of ``tests/hardening/test_login_throttle.py``.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from appframework.auth import AuthManager
from appframework.auth import throttle as throttle_module
from appframework.exceptions import TooManyRequestsException
from appframework.http import client_ip
from appframework.ratelimit import RateLimiter, RateLimitResult
from tests.hardening.test_login_throttle import (  # noqa: F401 (fixtures used by name)
    ATTACKER,
    DOORS,
    OK,
    THROTTLED,
    VICTIM,
    WRONG,
    Door,
    _frozen_throttle,
    attempts,
    clock,
    login_request,
    rate_limit,
    staff,
    via_admin,
    via_authenticate,
    via_demo,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_frozen_throttle")]

ADDRESS_LIMIT = 50  # RATE_LIMIT["LOGIN_ADDRESS_ATTEMPTS"] default
ACCOUNT_LIMIT = 5  # RATE_LIMIT["LOGIN_ATTEMPTS"] default


def record_hits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wrap ``RateLimiter.hit``: the list of keys it was asked to count, in order."""
    keys: list[str] = []
    original = RateLimiter.hit

    def hit(self: RateLimiter, key: str, limit: int, window: float) -> RateLimitResult:
        keys.append(key)
        return original(self, key, limit, window)

    monkeypatch.setattr(RateLimiter, "hit", hit)
    return keys


# -- the address first; no account keys once it refuses ------------------------------------------
def test_each_attempt_hits_the_address_count_before_the_account_count(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits = record_hits(monkeypatch)

    assert via_authenticate("made-up-0@example.com", "guess", ATTACKER, None) == WRONG

    assert len(hits) == 2
    address_key, account_key = hits
    assert "made-up-0" not in address_key
    assert "made-up-0" in account_key


def test_flood_of_made_up_names_creates_no_account_keys_once_the_address_is_over(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits = record_hits(monkeypatch)
    before = [
        via_authenticate(f"made-up-{i}@example.com", "x", ATTACKER, None)
        for i in range(ADDRESS_LIMIT)
    ]
    assert before == [WRONG] * ADDRESS_LIMIT
    assert len(hits) == 2 * ADDRESS_LIMIT  # an address and an account key per attempt
    address_key = hits[0]
    assert ATTACKER in address_key
    counted_before = len(hits)

    flood = [via_authenticate(f"flood-{i}@example.com", "x", ATTACKER, None) for i in range(200)]

    assert flood == [THROTTLED] * 200
    later = hits[counted_before:]
    assert len(later) == 200  # one hit per refused attempt...
    assert set(later) == {address_key}  # ...on the address count only
    assert not [key for key in later if "flood-" in key]


def test_attempts_refused_at_the_address_never_touch_the_account_count(user: Any) -> None:
    for i in range(ADDRESS_LIMIT):
        via_authenticate(f"made-up-{i}@example.com", "x", ATTACKER, None)
    assert attempts(via_authenticate, user.email, "guess", 10) == [THROTTLED] * 10

    # With the address count out of the way, the account's own count is still empty.
    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=None):
        outcomes = attempts(via_authenticate, user.email, "guess", ACCOUNT_LIMIT + 1)
    assert outcomes == [WRONG] * ACCOUNT_LIMIT + [THROTTLED]


# -- IPv6 per /64, IPv4-mapped as IPv4 -----------------------------------------------------------
@pytest.mark.usefixtures("staff")
@pytest.mark.parametrize("door", DOORS)
def test_wrong_passwords_from_addresses_of_one_ipv6_64_share_one_count(
    door: Door, user: Any, password: str
) -> None:
    outcomes = [door(user.email, "guess", f"2001:db8:1:2::{i}", None) for i in range(1, 7)]

    assert outcomes == [WRONG] * 5 + [THROTTLED]
    assert door(user.email, password, "2001:db8:1:2:ffff:ffff:ffff:ffff", None) == THROTTLED


@pytest.mark.usefixtures("staff")
@pytest.mark.parametrize("door", DOORS)
def test_another_ipv6_64_has_its_own_count(door: Door, user: Any, password: str) -> None:
    for i in range(1, 7):
        door(user.email, "guess", f"2001:db8:1:2::{i}", None)

    assert door(user.email, "guess", "2001:db8:1:3::1", None) == WRONG
    assert door(user.email, password, "2001:db8:1:3::1", None) == OK


def test_per_address_count_of_ipv6_is_per_64(user: Any) -> None:
    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=3):
        sprayed = [
            via_authenticate(f"u{i}@example.com", "x", f"2001:db8:1:2::{i + 1}", None)
            for i in range(4)
        ]
        other_64 = via_authenticate("u9@example.com", "x", "2001:db8:1:3::1", None)
    assert sprayed == [WRONG] * 3 + [THROTTLED]
    assert other_64 == WRONG


@pytest.mark.usefixtures("staff")
@pytest.mark.parametrize("door", DOORS)
def test_ipv4_mapped_ipv6_address_counts_as_its_ipv4_address(door: Door, user: Any) -> None:
    alternating = ["192.0.2.1", "::ffff:192.0.2.1"] * 3

    outcomes = [door(user.email, "guess", address, None) for address in alternating]

    assert outcomes == [WRONG] * 5 + [THROTTLED]
    assert door(user.email, "guess", "192.0.2.2", None) == WRONG


# -- ports ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("remote", "header", "count", "forwarded_for", "expected"),
    [
        ("192.0.2.1:5555", None, 1, None, "192.0.2.1"),
        ("[2001:db8::1]:443", None, 1, None, "2001:db8::1"),
        ("2001:db8::1", None, 1, None, "2001:db8::1"),  # a bare IPv6 keeps its last group
        ("192.0.2.1", None, 1, None, "192.0.2.1"),
        ("10.0.0.1", "X-Forwarded-For", 1, "198.51.100.7, 192.0.2.1:5555", "192.0.2.1"),
        ("10.0.0.1", "X-Forwarded-For", 1, "198.51.100.7, [2001:db8::1]:443", "2001:db8::1"),
        ("10.0.0.1", "X-Forwarded-For", 2, "[2001:db8::1]:443, 10.0.0.2:80", "2001:db8::1"),
        ("10.0.0.1:8080", "X-Forwarded-For", 2, "192.0.2.3", "10.0.0.1"),  # fewer hops
    ],
)
def test_client_ip_strips_ports(
    remote: str, header: str | None, count: int, forwarded_for: str | None, expected: str
) -> None:
    with rate_limit(CLIENT_IP_HEADER=header, TRUSTED_PROXY_COUNT=count):
        assert client_ip(login_request(remote, forwarded_for)) == expected


def test_rotating_the_source_port_does_not_open_a_fresh_count(user: Any) -> None:
    outcomes = [
        via_authenticate(user.email, "guess", f"192.0.2.1:{5550 + i}", None) for i in range(6)
    ]
    assert outcomes == [WRONG] * 5 + [THROTTLED]
    assert via_authenticate(user.email, "guess", "192.0.2.1", None) == THROTTLED


def test_bracketed_ipv6_with_a_port_counts_with_its_64(user: Any) -> None:
    addresses = [f"[2001:db8:1:2::{i}]:443" for i in range(1, 4)] + ["2001:db8:1:2::9"] * 2
    outcomes = [via_authenticate(user.email, "guess", address, None) for address in addresses]
    assert outcomes == [WRONG] * 5
    assert via_authenticate(user.email, "guess", "[2001:db8:1:2::a]:80", None) == THROTTLED


# -- usernames: NFKC + casefold ------------------------------------------------------------------
def full_width(text: str) -> str:
    """ASCII ``!``..``~`` → the full-width forms U+FF01..U+FF5E (``A`` → U+FF21)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize(
    "variant",
    [
        full_width("ALICE") + "@example.com",
        full_width("alice@example.com"),
        "Alice@Example.com",
        "ALICE@EXAMPLE.COM",
        " alice@example.com",
        "alice@example.com\t",
        " " + full_width("Alice") + "@example.com\n",
    ],
)
def test_width_case_and_whitespace_variants_share_the_accounts_count(
    variant: str, user: Any
) -> None:
    assert user.email == "alice@example.com" != variant
    assert full_width("A@.") == "\uff21\uff20\uff0e"
    assert attempts(via_authenticate, user.email, "guess", 4) == [WRONG] * 4

    assert via_authenticate(variant, "guess", ATTACKER, None) == WRONG

    assert via_authenticate(user.email, "guess", ATTACKER, None) == THROTTLED
    assert via_authenticate(variant, "guess", ATTACKER, None) == THROTTLED


def test_mixed_spellings_add_up_to_one_count(user: Any) -> None:
    spellings = ["alice@example.com", full_width("ALICE") + "@example.com", "Alice@Example.com"] * 2

    outcomes = [via_authenticate(name, "guess", ATTACKER, None) for name in spellings]

    assert outcomes == [WRONG] * 5 + [THROTTLED]
    assert via_authenticate("bob@example.com", "guess", ATTACKER, None) == WRONG


# -- no client address ---------------------------------------------------------------------------
@pytest.fixture
def throttle_warnings(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> pytest.LogCaptureFixture:
    """caplog at WARNING on ``appframework.auth`` (the test settings silence everything
    below CRITICAL), with the throttle's warn-once memory cleared."""
    monkeypatch.setattr(throttle_module, "_warned", [])
    caplog.set_level(logging.WARNING, logger="appframework.auth")
    return caplog


def _auth_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "appframework.auth" and r.levelno == logging.WARNING
    ]


@pytest.mark.usefixtures("staff", "throttle_warnings")
def test_empty_remote_addr_is_still_counted_and_all_such_clients_share_one_count(
    user: Any, password: str
) -> None:
    # Different clients, different ways in, no address: one count.
    first = [via_demo(user.email, "guess", "", None) for _ in range(2)]
    second = [via_admin(user.email, "guess", "", None) for _ in range(2)]
    third = [via_authenticate(user.email, "guess", "", None)]
    assert first + second + third == [WRONG] * 5

    assert via_authenticate(user.email, password, "", None) == THROTTLED
    assert via_demo(user.email, password, "", None) == THROTTLED
    # A client whose address is known is not in that count.
    assert via_authenticate(user.email, password, VICTIM, None) == OK


def test_empty_remote_addr_logs_one_warning_on_appframework_auth(
    user: Any, throttle_warnings: pytest.LogCaptureFixture
) -> None:
    attempts(via_authenticate, user.email, "guess", 8, address="")

    warnings = _auth_warnings(throttle_warnings)
    assert len(warnings) == 1
    assert "CLIENT_IP_HEADER" in warnings[0].getMessage()


def test_known_address_or_no_request_logs_no_warning(
    user: Any, throttle_warnings: pytest.LogCaptureFixture
) -> None:
    attempts(via_authenticate, user.email, "guess", 3, address=ATTACKER)
    assert AuthManager().attempt_sync(user.email, "guess") is None  # no request at all
    assert _auth_warnings(throttle_warnings) == []


def test_empty_address_refusal_is_the_usual_429(user: Any) -> None:
    attempts(via_authenticate, user.email, "guess", 5, address="")
    with pytest.raises(TooManyRequestsException) as refused:
        AuthManager().attempt_sync(user.email, "guess", request=login_request(""))
    assert refused.value.code == "login_throttled"
    assert refused.value.status_code == 429
