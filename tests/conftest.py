"""Shared fixtures.

PBKDF2 at Django's default (1M+ iterations) takes ~0.3 s a hash; tests that are not
about hashing lower the class default, which every code path reads. Tests marked
``real_hashing`` keep the real count.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client

FAST_ITERATIONS = 1000
_REAL_ITERATIONS = PBKDF2PasswordHasher.iterations


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_hashing: keep Django's real PBKDF2 iteration count")
    config.addinivalue_line(
        "markers",
        "cluster: starts the demo as several app servers and Celery workers (tests/cluster)",
    )
    config.addinivalue_line(
        "markers",
        "postgresql: needs PostgreSQL (row locks, row-level security), or runs once per "
        "./scripts/test (the webhook chaos run); the SQLite runs deselect it and the "
        "PostgreSQL run executes it",
    )
    config.addinivalue_line(
        "markers",
        "database_independent: what it checks is the same on every database (the pages' "
        "markup and look, scripts that run the demo on their own SQLite file); the "
        "PostgreSQL run of ./scripts/test deselects it",
    )


def skip_or_fail_on_ci(reason: str) -> None:
    """A test that cannot run here: a printed skip on a developer machine, a failure
    under CI (``CI=true``), where a skip would prove nothing."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; under CI=true this test must run, not be skipped")
    print(f"SKIPPED: {reason}")
    pytest.skip(reason)


def on_postgresql() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


@pytest.fixture(autouse=True)
def _postgresql_marker(request: pytest.FixtureRequest) -> None:
    """A ``postgresql`` test on another database is a failure under CI (a run that
    should have been deselected or pointed at PostgreSQL), a printed skip elsewhere."""
    if request.node.get_closest_marker("postgresql") is None or on_postgresql():
        return
    skip_or_fail_on_ci("needs PostgreSQL (DATABASE_URL=postgres://...)")


@pytest.fixture(autouse=True)
def _fast_hashing(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("real_hashing"):
        yield
        return
    PBKDF2PasswordHasher.iterations = FAST_ITERATIONS
    try:
        yield
    finally:
        PBKDF2PasswordHasher.iterations = _REAL_ITERATIONS


_DATABASE_FIXTURES = frozenset({"db", "transactional_db", "live_server", "django_db_reset_sequences"})


def open_database(request: pytest.FixtureRequest) -> bool:
    """Whether the test uses the database; when it does, it is opened now (the test
    would open it next anyway), so that an autouse fixture may write to it."""
    marked = request.node.get_closest_marker("django_db") is not None
    requested = _DATABASE_FIXTURES & set(request.fixturenames)
    if not marked and not requested:
        return False
    if not marked:
        request.getfixturevalue("db" if requested == {"db"} else "transactional_db")
    return True


@pytest.fixture(autouse=True)
def _fresh_caches(request: pytest.FixtureRequest) -> Iterator[None]:
    """The login throttle, the record of ended sessions and the one-use values live on
    the caches or the suite's database store: every test starts with none of another
    test's counts, revocations or spent values."""
    from django.core.cache import caches

    # Every configured alias, not only those opened on this thread: async tests open
    # caches in worker threads, and an override's end drops the opened ones.
    for cache in caches.all():
        cache.clear()
    if open_database(request):
        request.getfixturevalue("_store_cleaner")()
    yield


@pytest.fixture(scope="session")
def _store_cleaner(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Callable[[], None]]:
    """``clean()`` empties the suite's database store from a thread of its own, on a
    connection outside the test's transaction: rows are committed there by transactional
    tests, live servers, and async code and threads (their connections are not the
    test's), and a delete inside the test's transaction would not reach those
    connections (on SQLite it would lock the table against them for the whole test).
    One thread for the session, so its connection is opened once, and closed before the
    test database is dropped."""
    from concurrent.futures import ThreadPoolExecutor

    from asgiref.sync import SyncToAsync
    from django.db import connections

    from appframework.auth.models import SharedRecord
    from appframework.stores import database_store

    def clean() -> None:
        with django_db_blocker.unblock():
            if SharedRecord.objects.exists():
                database_store().clear()

    def close() -> None:
        connections.close_all()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-cleaner") as thread:
        yield lambda: thread.submit(clean).result()
        thread.submit(close).result()
    # Async code reaches the store from asgiref's worker thread, whose connection would
    # otherwise stay open and keep PostgreSQL from dropping the test database.
    SyncToAsync.single_thread_executor.submit(close).result()


@pytest.fixture(autouse=True)
def _migration_rows(request: pytest.FixtureRequest) -> None:
    """A transactional test ends with a flush, which also deletes the rows the demo's
    migrations created (its two tenants); every test that uses the database finds them
    again, whichever test ran before it on this database (the order differs between
    parallel workers)."""
    if not open_database(request):
        return
    demo_tenant()
    from testproject.blog.models import Tenant

    Tenant.objects.get_or_create(pk=2, defaults={"name": "Globex", "slug": "globex"})


@pytest.fixture(autouse=True)
def _demo_public_tenant(request: pytest.FixtureRequest) -> Iterator[None]:
    """The demo's posts belong to a tenant. Tests outside tests/tenancy run as the
    demo's public tenant (id 1), the one its resolver gives anonymous visitors and
    users without memberships, so their requests and their fixtures agree."""
    if "tenancy" in request.node.nodeid.split("/")[:2]:
        yield
        return
    from appframework_tenancy import as_tenant

    with as_tenant(1):
        yield


@pytest.fixture
def real_iterations() -> int:
    return _REAL_ITERATIONS


@pytest.fixture
def password() -> str:
    return "correct horse battery staple"


@pytest.fixture
def user(db: Any, password: str) -> Any:
    from testproject.blog.models import User

    return User.objects.create_user("alice@example.com", password, name="Alice")


@pytest.fixture
def other_user(db: Any, password: str) -> Any:
    from testproject.blog.models import User

    return User.objects.create_user("bob@example.com", password, name="Bob")


@pytest.fixture
def csrf_client() -> Client:
    """A test client that enforces CSRF like a browser would be subjected to."""
    return Client(enforce_csrf_checks=True)


def login_client(client: Client, user: Any) -> Client:
    """Log ``user`` in through the suite's login() (a real signed session cookie)."""
    client.force_login(user, backend="appframework.auth.AuthManager")
    return client


def age_proof(client: Client, seconds: int = 3600) -> None:
    """Move the session's last proof of a factor ``seconds`` back: the session of a
    copied cookie, signed in long ago (account changes then ask to confirm it's you)."""
    from appframework.auth.reauth import AUTHENTICATED_AT_SESSION_KEY
    from appframework.security.tokens import session_cookie_name

    session = client.session
    record = dict(session[AUTHENTICATED_AT_SESSION_KEY])
    record["at"] -= seconds
    session[AUTHENTICATED_AT_SESSION_KEY] = record
    session.save()
    client.cookies[session_cookie_name()] = session.session_key


@pytest.fixture
def demo_stack() -> Iterator[None]:
    """The demo's MIDDLEWARE, TenantMiddleware and its resolver included (the base test
    settings leave TenantMiddleware out; see tests/settings.py)."""
    from django.test import override_settings

    import testproject.settings as demo_settings

    with override_settings(MIDDLEWARE=list(demo_settings.MIDDLEWARE)):
        yield


def demo_tenant() -> Any:
    """The demo's first tenant (Acme, the one tests run as), made again if a
    transactional test flushed the row its migration created."""
    from testproject.blog.models import Tenant

    return Tenant.objects.get_or_create(pk=1, defaults={"name": "Acme", "slug": "acme"})[0]


def enable_totp(user: Any) -> tuple[str, list[str]]:
    """Turn TOTP on for ``user`` as a person would (enroll, then confirm with the live
    code): its secret and the ten recovery codes. The confirming step is spent."""
    import pyotp

    from appframework.mfa import confirm, enroll

    secret = enroll(user)["secret"]
    codes = confirm(user, pyotp.TOTP(secret).now())
    user.refresh_from_db()
    assert user.mfa_enabled
    return secret, codes



def csrf_cookie(client: Any) -> str:
    """Give ``client`` the CSRF cookie a page using the token (a form) would hand its
    current session, and return the token. The suite, like Django, sets the cookie only
    on responses whose page asked for the token; tests of what a POST does start here."""
    from django.conf import settings
    from django.test import RequestFactory

    from appframework.security.cookie import csrf_cookie_name
    from appframework.security.tokens import mint_token, session_binding

    request = RequestFactory().get("/")
    request.COOKIES = {name: morsel.value for name, morsel in client.cookies.items()}
    session_cookie = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    request.session = client.session if session_cookie else None
    token = mint_token(session_binding(request))
    client.cookies[csrf_cookie_name()] = token
    return token
