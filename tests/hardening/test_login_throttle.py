"""The login throttle, as an attacker would probe it.

Failed password attempts are counted per (account, client address) and per client
address (``APPFRAMEWORK["RATE_LIMIT"]``); past either limit a login answers 429 with
``Retry-After`` (code ``login_throttled``) before the password is even checked.

The same attacks are run against every way in, each passing the request so that the
client address is known: the demo's ``/login`` form (``attempt_sync(..., request=)``),
the admin login form (``/admin/login/``, which calls ``authenticate()``) and Django's
``authenticate(request, ...)`` itself.

The limiter's clock is frozen 100 s into a 300 s window so that no attempt sequence
straddles a window boundary; ``Retry-After`` is then exactly 200.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory, override_settings

from appframework.auth import AuthManager
from appframework.auth.throttle import LoginThrottle
from appframework.exceptions import TooManyRequestsException
from appframework.http import client_ip
from appframework.ratelimit import RateLimiter
from tests.core.test_ratelimit import FakeClock, redis_cache_alias
from tests.security.helpers import COOKIE, prime

pytestmark = pytest.mark.django_db

WINDOW_OFFSET = 100.0  # seconds into the (300 s) window
RETRY_AFTER = "200"  # 300 - 100
ATTACKER = "203.0.113.66"
VICTIM = "198.51.100.20"
PROXY = "10.0.0.1"
UNKNOWN = "nobody@example.com"

OK, WRONG, THROTTLED = "ok", "wrong", "throttled"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock().at(WINDOW_OFFSET)


@pytest.fixture(autouse=True)
def _frozen_throttle(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    """The login throttle as configured, on a limiter whose clock the test controls."""
    limiter = RateLimiter(prefix="appframework:login", clock=clock)
    monkeypatch.setattr(AuthManager, "throttle", LoginThrottle(limiter))


@pytest.fixture
def staff(user: Any) -> Any:
    """Alice, allowed into the admin (so the admin form's success is a redirect)."""
    user.is_staff = True
    user.save()
    return user


def rate_limit(**keys: Any) -> Any:
    """``override_settings`` of ``APPFRAMEWORK`` with these ``RATE_LIMIT`` keys."""
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("RATE_LIMIT", {}).update(keys)
    return override_settings(APPFRAMEWORK=app)


def assert_throttled_response(response: HttpResponse) -> None:
    assert response.status_code == 429, response.content[:300]
    assert response["Retry-After"] == RETRY_AFTER
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 429
    assert body["code"] == "login_throttled"


# -- the ways in -------------------------------------------------------------------------------------
def _client(address: str, forwarded_for: str | None) -> Client:
    extra = {"REMOTE_ADDR": address}
    if forwarded_for is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded_for
    return Client(enforce_csrf_checks=True, **extra)


def demo_post(email: str, password: str, address: str, forwarded_for: str | None) -> HttpResponse:
    """The demo's /login form as a browser submits it: GET (CSRF cookie), then POST."""
    client = _client(address, forwarded_for)
    prime(client, "/login")
    token = client.cookies[COOKIE].value
    return client.post("/login", {"email": email, "password": password, "_token": token})


def admin_post(email: str, password: str, address: str, forwarded_for: str | None) -> HttpResponse:
    """The admin login form: GET (its masked csrfmiddlewaretoken), then POST."""
    client = _client(address, forwarded_for)
    page = client.get("/admin/login/")
    assert page.status_code == 200
    masked = page.content.decode().split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    return client.post(
        "/admin/login/",
        {"username": email, "password": password, "csrfmiddlewaretoken": masked},
    )


def login_request(address: str = ATTACKER, forwarded_for: str | None = None) -> HttpRequest:
    extra = {"REMOTE_ADDR": address}
    if forwarded_for is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded_for
    return RequestFactory().post("/login", **extra)


def via_authenticate(email: str, password: str, address: str, forwarded_for: str | None) -> str:
    request = login_request(address, forwarded_for)
    try:
        user = authenticate(request, email=email, password=password)
    except TooManyRequestsException as exc:
        assert exc.code == "login_throttled"
        assert exc.response_headers() == {"Retry-After": RETRY_AFTER}
        return THROTTLED
    return WRONG if user is None else OK


def via_demo(email: str, password: str, address: str, forwarded_for: str | None) -> str:
    response = demo_post(email, password, address, forwarded_for)
    if response.status_code == 429:
        assert_throttled_response(response)
        return THROTTLED
    assert response.status_code in (302, 401), response.content[:300]
    return OK if response.status_code == 302 else WRONG


def via_admin(email: str, password: str, address: str, forwarded_for: str | None) -> str:
    response = admin_post(email, password, address, forwarded_for)
    if response.status_code == 429:
        assert_throttled_response(response)
        return THROTTLED
    assert response.status_code in (200, 302), response.content[:300]
    return OK if response.status_code == 302 else WRONG


Door = Callable[[str, str, str, str | None], str]

DOORS = [
    pytest.param(via_authenticate, id="authenticate"),
    pytest.param(via_admin, id="admin"),
    pytest.param(via_demo, id="demo"),
]


def attempts(
    door: Door, email: str, password: str, n: int, address: str = ATTACKER, xff: str | None = None
) -> list[str]:
    return [door(email, password, address, xff) for _ in range(n)]


# -- brute force on one account ----------------------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_sixth_wrong_password_is_429_and_so_is_the_right_one_then(
    door: Door, staff: Any, password: str
) -> None:
    assert attempts(door, staff.email, "guess", 5) == [WRONG] * 5
    assert door(staff.email, "guess", ATTACKER, None) == THROTTLED
    assert door(staff.email, password, ATTACKER, None) == THROTTLED


@pytest.mark.parametrize("door", DOORS)
def test_unknown_account_is_throttled_at_the_same_point(door: Door, staff: Any) -> None:
    assert attempts(door, UNKNOWN, "guess", 5) == [WRONG] * 5
    assert door(UNKNOWN, "guess", ATTACKER, None) == THROTTLED


@pytest.mark.parametrize("post", [demo_post, admin_post], ids=["demo", "admin"])
def test_unknown_and_known_accounts_get_byte_identical_429s(
    post: Callable[..., HttpResponse], staff: Any
) -> None:
    """Nothing in the refusal tells an enumerating attacker whether the account exists."""
    answers = []
    for email, address in [(staff.email, ATTACKER), (UNKNOWN, VICTIM)]:
        for _ in range(5):
            post(email, "guess", address, None)
        answers.append(post(email, "guess", address, None))
    known, unknown = answers
    assert_throttled_response(known)
    assert_throttled_response(unknown)
    assert known.content == unknown.content
    assert known["Retry-After"] == unknown["Retry-After"]
    assert known["Content-Type"] == unknown["Content-Type"]


def test_refused_attempt_is_not_logged_in(staff: Any, password: str) -> None:
    for _ in range(5):
        demo_post(staff.email, "guess", ATTACKER, None)
    client = _client(ATTACKER, None)
    prime(client, "/login")
    response = client.post(
        "/login",
        {"email": staff.email, "password": password, "_token": client.cookies[COOKIE].value},
    )
    assert_throttled_response(response)
    assert settings.SESSION_COOKIE_NAME not in client.cookies


@pytest.mark.parametrize("door", DOORS)
def test_success_before_the_limit_clears_the_accounts_count(
    door: Door, staff: Any, password: str
) -> None:
    assert attempts(door, staff.email, "guess", 4) == [WRONG] * 4
    assert door(staff.email, password, ATTACKER, None) == OK
    assert attempts(door, staff.email, "guess", 5) == [WRONG] * 5
    assert door(staff.email, "guess", ATTACKER, None) == THROTTLED


def test_attempts_are_allowed_again_once_the_window_has_passed(
    staff: Any, password: str, clock: FakeClock
) -> None:
    attempts(via_authenticate, staff.email, "guess", 5)
    request = login_request()
    with pytest.raises(TooManyRequestsException) as refused:
        authenticate(request, email=staff.email, password="guess")
    assert refused.value.retry_after == 200
    clock.advance(200)
    assert via_authenticate(staff.email, password, ATTACKER, None) == OK


def test_login_window_setting_sets_the_window(staff: Any) -> None:
    with rate_limit(LOGIN_WINDOW=60):  # 100 s = 40 s into a 60 s window
        attempts(via_authenticate, staff.email, "guess", 5)
        with pytest.raises(TooManyRequestsException) as refused:
            authenticate(login_request(), email=staff.email, password="guess")
    assert refused.value.retry_after == 20
    assert refused.value.response_headers() == {"Retry-After": "20"}


def test_login_attempts_setting_sets_the_per_account_limit(staff: Any) -> None:
    with rate_limit(LOGIN_ATTEMPTS=2):
        assert attempts(via_authenticate, staff.email, "guess", 3) == [WRONG, WRONG, THROTTLED]


# -- the real owner elsewhere is not locked out ------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_victim_logging_in_from_another_address_is_not_locked_out(
    door: Door, staff: Any, password: str
) -> None:
    assert attempts(door, staff.email, "guess", 6)[-1] == THROTTLED
    assert door(staff.email, password, VICTIM, None) == OK
    assert door(staff.email, "guess", ATTACKER, None) == THROTTLED


# -- spraying many accounts from one address ---------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_per_address_limit_trips_across_many_accounts(
    door: Door, staff: Any, password: str
) -> None:
    sprayed = [door(f"user{i}@example.com", "guess", ATTACKER, None) for i in range(50)]
    assert sprayed == [WRONG] * 50
    assert door("user50@example.com", "guess", ATTACKER, None) == THROTTLED
    assert door(staff.email, password, ATTACKER, None) == THROTTLED
    assert door(staff.email, password, VICTIM, None) == OK


def test_successful_logins_do_not_use_up_the_address_budget(staff: Any, password: str) -> None:
    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=3):
        assert attempts(via_authenticate, staff.email, password, 10) == [OK] * 10
        assert attempts(via_authenticate, UNKNOWN, "guess", 4) == [WRONG] * 3 + [THROTTLED]


def test_login_address_attempts_setting_sets_the_per_address_limit(staff: Any) -> None:
    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=3):
        outcomes = [via_authenticate(f"u{i}@example.com", "x", ATTACKER, None) for i in range(4)]
    assert outcomes == [WRONG, WRONG, WRONG, THROTTLED]


# -- the client address behind proxies ---------------------------------------------------------------
@pytest.mark.parametrize("door", DOORS)
def test_x_forwarded_for_rightmost_entry_is_the_address_and_spoofing_does_not_escape(
    door: Door, staff: Any, password: str
) -> None:
    with rate_limit(CLIENT_IP_HEADER="X-Forwarded-For", TRUSTED_PROXY_COUNT=1):
        # The attacker writes any left part; the proxy appends the real address.
        spoofed = [door(staff.email, "guess", PROXY, f"192.0.2.{i}, {ATTACKER}") for i in range(6)]
        assert spoofed == [WRONG] * 5 + [THROTTLED]
        # Behind the same proxy, the owner's own address is not the attacker's.
        assert door(staff.email, password, PROXY, VICTIM) == OK


@pytest.mark.parametrize("door", DOORS)
def test_client_sent_x_forwarded_for_is_ignored_without_the_setting(door: Door, staff: Any) -> None:
    rotated = [door(staff.email, "guess", ATTACKER, f"192.0.2.{i}") for i in range(6)]
    assert rotated == [WRONG] * 5 + [THROTTLED]


@pytest.mark.parametrize(
    ("header", "count", "forwarded_for", "expected"),
    [
        (None, 1, "192.0.2.1, 192.0.2.2", ATTACKER),
        ("X-Forwarded-For", 1, "192.0.2.1, 192.0.2.2", "192.0.2.2"),
        ("X-Forwarded-For", 1, " 192.0.2.1 ,192.0.2.2 , ", "192.0.2.2"),
        ("X-Forwarded-For", 2, "192.0.2.1, 192.0.2.2, 192.0.2.3", "192.0.2.2"),
        ("X-Forwarded-For", 2, "192.0.2.3", ATTACKER),  # fewer hops than proxies
        ("X-Forwarded-For", 1, None, ATTACKER),
        ("X-Forwarded-For", 1, "", ATTACKER),
        ("X-Forwarded-For", 1, "2001:db8::1, 2001:db8::2", "2001:db8::2"),
        ("X-Forwarded-For", 0, "192.0.2.1, 192.0.2.2", "192.0.2.2"),  # at least one
    ],
)
def test_client_ip(
    header: str | None, count: int, forwarded_for: str | None, expected: str
) -> None:
    with rate_limit(CLIENT_IP_HEADER=header, TRUSTED_PROXY_COUNT=count):
        assert client_ip(login_request(ATTACKER, forwarded_for)) == expected


def test_client_ip_reads_any_configured_header() -> None:
    request = RequestFactory().post("/login", REMOTE_ADDR=PROXY, HTTP_X_REAL_IP="192.0.2.9")
    with rate_limit(CLIENT_IP_HEADER="X-Real-IP"):
        assert client_ip(request) == "192.0.2.9"


# -- switching it off --------------------------------------------------------------------------------
def test_login_attempts_none_switches_the_per_account_count_off(staff: Any, password: str) -> None:
    with rate_limit(LOGIN_ATTEMPTS=None):
        assert attempts(via_authenticate, staff.email, "guess", 20) == [WRONG] * 20
        assert via_authenticate(staff.email, password, ATTACKER, None) == OK
        # the per-address count still holds
        assert attempts(via_authenticate, staff.email, "guess", 31)[-1] == THROTTLED


def test_login_address_attempts_none_switches_the_per_address_count_off(staff: Any) -> None:
    with rate_limit(LOGIN_ADDRESS_ATTEMPTS=None):
        sprayed = [via_authenticate(f"u{i}@example.com", "x", ATTACKER, None) for i in range(60)]
        assert sprayed == [WRONG] * 60
        # the per-account count still holds
        assert attempts(via_authenticate, staff.email, "guess", 6)[-1] == THROTTLED


@pytest.mark.parametrize("door", DOORS)
def test_both_none_switch_the_throttle_off(door: Door, staff: Any, password: str) -> None:
    with rate_limit(LOGIN_ATTEMPTS=None, LOGIN_ADDRESS_ATTEMPTS=None):
        assert attempts(door, staff.email, "guess", 12) == [WRONG] * 12
        assert door(staff.email, password, ATTACKER, None) == OK


# -- AuthManager directly, sync and async ------------------------------------------------------------
def test_the_shipped_throttle_on_the_real_clock_refuses_the_sixth_failure(
    staff: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()  # the class's own LoginThrottle, not the frozen one
    assert isinstance(AuthManager.throttle, LoginThrottle)
    to_boundary = 300 - time.time() % 300
    if to_boundary < 5:  # keep the six attempts inside one fixed window
        time.sleep(to_boundary + 0.1)
    request = login_request()
    assert [authenticate(request, email=staff.email, password="x") for _ in range(5)] == [None] * 5
    with pytest.raises(TooManyRequestsException) as refused:
        authenticate(request, email=staff.email, password="x")
    assert refused.value.retry_after is not None
    assert 0 < refused.value.retry_after <= 300


def test_attempt_sync_without_request_still_counts_the_account(staff: Any, password: str) -> None:
    manager = AuthManager()
    assert [manager.attempt_sync(staff.email, "guess") for _ in range(5)] == [None] * 5
    with pytest.raises(TooManyRequestsException) as refused:
        manager.attempt_sync(staff.email, password)
    assert refused.value.code == "login_throttled"
    assert refused.value.status_code == 429


@pytest.fixture
def _close_worker_thread_connections() -> Iterator[None]:
    """``attempt()`` reaches the database from asgiref's worker thread; close that
    connection afterwards so PostgreSQL can drop the test database."""
    yield
    from asgiref.sync import SyncToAsync

    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_close_worker_thread_connections")
async def test_async_attempt_throttles_the_same(staff: Any, password: str) -> None:
    manager = AuthManager()
    attacker = login_request(ATTACKER)
    for _ in range(5):
        assert await manager.attempt(staff.email, "guess", request=attacker) is None
    with pytest.raises(TooManyRequestsException) as refused:
        await manager.attempt(staff.email, "guess", request=attacker)
    assert refused.value.code == "login_throttled"
    assert refused.value.response_headers() == {"Retry-After": RETRY_AFTER}
    with pytest.raises(TooManyRequestsException):
        await manager.attempt(staff.email, password, request=attacker)
    assert await manager.attempt(staff.email, password, request=login_request(VICTIM)) == staff


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_close_worker_thread_connections")
async def test_async_attempt_success_clears_the_accounts_count(staff: Any, password: str) -> None:
    manager = AuthManager()
    request = login_request(ATTACKER)
    for _ in range(4):
        assert await manager.attempt(staff.email, "guess", request=request) is None
    assert await manager.attempt(staff.email, password, request=request) == staff
    for _ in range(5):
        assert await manager.attempt(staff.email, "guess", request=request) is None
    with pytest.raises(TooManyRequestsException):
        await manager.attempt(staff.email, "guess", request=request)


def test_throttled_attempt_never_reaches_the_password_check(
    staff: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = count_credential_checks(monkeypatch)
    attempts(via_authenticate, staff.email, "guess", 20)
    assert checks() == 5


# -- concurrency: PostgreSQL + Redis ------------------------------------------------------------------
def count_credential_checks(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Wrap ``AuthManager._check_credentials`` (the database read + hash) with a counter."""
    original = AuthManager._check_credentials
    lock = threading.Lock()
    calls = [0]

    def counting(self: AuthManager, username: str, password: str) -> Any:
        with lock:
            calls[0] += 1
        return original(self, username, password)

    monkeypatch.setattr(AuthManager, "_check_credentials", counting)
    return lambda: calls[0]


@pytest.fixture
def redis_rate_limit_cache() -> Iterator[str]:
    with redis_cache_alias() as alias:
        yield alias


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_guesses_never_get_more_than_the_limit_to_the_password_check(
    user: Any, redis_rate_limit_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads_n, per_thread = 8, 50
    checks = count_credential_checks(monkeypatch)
    barrier = threading.Barrier(threads_n)
    outcomes: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    manager = AuthManager()

    def guesser() -> None:
        mine: list[str] = []
        try:
            barrier.wait()
            for _ in range(per_thread):
                try:
                    result = manager.attempt_sync(user.email, "guess", request=login_request())
                    mine.append(WRONG if result is None else OK)
                except TooManyRequestsException:
                    mine.append(THROTTLED)
        except BaseException as exc:
            errors.append(exc)
        finally:
            with lock:
                outcomes.extend(mine)
            connections.close_all()

    with rate_limit(CACHE=redis_rate_limit_cache, LOGIN_ADDRESS_ATTEMPTS=None):
        workers = [threading.Thread(target=guesser) for _ in range(threads_n)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
    assert not errors, errors
    assert len(outcomes) == threads_n * per_thread
    assert checks() == 5
    assert outcomes.count(WRONG) == 5
    assert outcomes.count(THROTTLED) == threads_n * per_thread - 5
