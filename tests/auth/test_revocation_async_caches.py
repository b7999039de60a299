"""The record of ended sessions on a cache that must not be read synchronously from the
event loop: Django's database cache.

``SessionStore.aload``/``aflush`` read and write the record through the cache's async
API (``ais_session_ended``/``arevoke_session``), ``alogout`` revokes tokens through the
async helpers, and the CSRF middleware reads the session in a worker thread unless the
record is in memory (LocMem). Before that, an async view under ASGI with a logged-in
cookie raised ``SynchronousOnlyOperation`` (a 500).

Every flow runs in the two modes of ``tests/auth/test_revocation.py`` (sync views under
WSGI, async views under ASGI), with ``REVOCATION_CACHE`` on a ``DatabaseCache`` alias.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings as django_settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.signed_cookies import SessionStore as SignedCookieStore
from django.core.cache import BaseCache, caches
from django.core.cache.backends.db import DatabaseCache
from django.core.exceptions import SynchronousOnlyOperation
from django.core.management import call_command
from django.test import RequestFactory

from appframework.auth import TokenManager
from appframework.auth.revocation import arevoke_session, ended_session_key, revocation_cache
from appframework.auth.session_store import SessionStore
from appframework.security.csrf import _session_loads_in_memory

from .conftest import cookie_for
from .test_revocation import (
    MODES,
    PATHS,
    Browser,
    assert_401_problem,
    bearer_status,
    nonce_of,
    replay_status,
    use_revocation_cache,
)

pytestmark = pytest.mark.urls("tests.auth.revocation_urls")

DB_ALIAS = "revocations-db"
DB_TABLE = "appframework_test_revocations"


@pytest.fixture(autouse=True)
def _caches_initialized_again_after_override() -> Iterator[None]:
    """The suite's ``_fresh_caches`` clears only the caches initialized in this thread,
    and ending a ``CACHES`` override forgets those. Set up before (so torn down after)
    any ``settings`` override, this initializes every configured alias again, so that the
    next test still starts with empty locmem stores (counts a worker thread left there
    included)."""
    yield
    for alias in django_settings.CACHES:
        caches[alias]


@pytest.fixture
def database_revocation_cache(settings: Any) -> BaseCache:
    """``CACHES`` plus a ``DatabaseCache`` alias (its table created here) that
    ``AUTH["REVOCATION_CACHE"]`` names; the demo's own aliases stay as they are."""
    settings.CACHES = {
        **settings.CACHES,
        DB_ALIAS: {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": DB_TABLE},
    }
    call_command("createcachetable", database="default", verbosity=0)
    use_revocation_cache(settings, DB_ALIAS)
    cache = caches[DB_ALIAS]
    cache.clear()  # the table outlives a transactional test; start without its rows
    assert isinstance(cache, DatabaseCache)
    assert revocation_cache() is cache
    return cache


# -- requests ------------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("database_revocation_cache")
def test_asgi_async_auth_required_view_answers_200_to_a_logged_in_cookie_on_the_database_cache(
    user: Any,
) -> None:
    cookie = cookie_for(user)

    response = Browser("async", cookie).send("get", PATHS["async"]["session"])

    assert response.status_code == 200, response.content
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", MODES)
def test_logout_makes_a_kept_cookie_anonymous_with_the_record_on_the_database_cache(
    mode: str, user: Any, password: str, database_revocation_cache: BaseCache
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    kept = browser.cookie()
    nonce = nonce_of(kept)
    assert replay_status(mode, kept) == 200

    browser.logout()  # alogout under ASGI, logout under WSGI

    assert browser.session_status() == 401
    assert_401_problem(Browser(mode, kept).send("get", PATHS[mode]["session"]))
    # Written to the database cache, not to the demo's locmem alias.
    assert database_revocation_cache.get(ended_session_key(nonce)) is True
    assert caches["revocations"].get(ended_session_key(nonce)) is None


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("database_revocation_cache")
@pytest.mark.parametrize("mode", MODES)
def test_logout_with_revoke_tokens_revokes_the_sessions_token_on_the_database_cache(
    mode: str, user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    this_session = browser.issue_token()
    no_session = TokenManager().issue(user)
    assert bearer_status(mode, this_session) == 200

    browser.logout(revoke_tokens="1")  # alogout's async token revocation under ASGI

    assert bearer_status(mode, this_session) == 401
    assert bearer_status(mode, no_session) == 200


# -- the session store itself, on the event loop -------------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_session_store_aload_reads_the_database_cache_without_raising(
    user: Any, database_revocation_cache: BaseCache
) -> None:
    cookie = await sync_to_async(cookie_for)(user)
    # The reason aload() must use the async API: a synchronous read raises here.
    with pytest.raises(SynchronousOnlyOperation):
        SessionStore(session_key=cookie).load()

    data = await SessionStore(session_key=cookie).aload()

    assert data[SESSION_KEY] == str(user.pk)


@pytest.mark.django_db(transaction=True)
async def test_session_store_aload_of_an_ended_session_is_empty_on_the_database_cache(
    user: Any, database_revocation_cache: BaseCache
) -> None:
    cookie = await sync_to_async(cookie_for)(user)
    await arevoke_session(nonce_of(cookie))

    store = SessionStore(session_key=cookie)
    data = await store.aload()

    assert data == {}
    assert store.modified  # as for a bad signature: the client gets a fresh, empty cookie
    assert await database_revocation_cache.aget(ended_session_key(nonce_of(cookie))) is True


@pytest.mark.django_db(transaction=True)
async def test_session_store_aflush_records_the_end_on_the_database_cache(
    user: Any, database_revocation_cache: BaseCache
) -> None:
    cookie = await sync_to_async(cookie_for)(user)
    store = SessionStore(session_key=cookie)

    await store.aflush()

    assert await database_revocation_cache.aget(ended_session_key(nonce_of(cookie))) is True
    assert await SessionStore(session_key=cookie).aload() == {}


# -- where the CSRF middleware reads the session -------------------------------------------------
def _request_with(session: Any) -> Any:
    request = RequestFactory().get("/")
    request.session = session
    return request


@pytest.mark.django_db(transaction=True)
def test_csrf_reads_the_suites_session_off_the_event_loop_when_the_record_is_not_locmem(
    settings: Any, database_revocation_cache: BaseCache
) -> None:
    assert _session_loads_in_memory(_request_with(SessionStore())) is False
    # Django's plain signed cookies never touch a cache.
    assert _session_loads_in_memory(_request_with(SignedCookieStore())) is True

    use_revocation_cache(settings, "revocations")  # the demo's LocMem alias

    assert _session_loads_in_memory(_request_with(SessionStore())) is True
