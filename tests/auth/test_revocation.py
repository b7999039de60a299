"""Revocable sessions and tokens: attack reproductions.

Signed cookies and tokens are stateless, so a copy kept by an attacker would stay valid
until it expires; the suite's session engine (``appframework.auth.session_store``) and
``TokenManager`` record what was ended early on the ``REVOCATION_CACHE`` alias.

Every flow runs through real requests in two modes: "sync" (sync views under WSGI,
``Client``) and "async" (async views — ``alogin``/``alogout`` — under ASGI,
``AsyncClient`` driven to completion with ``async_to_sync``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core import signing
from django.core.cache import caches
from django.http import HttpResponse
from django.test import AsyncClient, Client

from appframework.auth import TokenManager
from appframework.auth.revocation import ended_session_key, token_key
from appframework.security.tokens import NONCE_SESSION_KEY

from .conftest import session_cookie_name

pytestmark = pytest.mark.urls("tests.auth.revocation_urls")

MODES = ["sync", "async"]
PATHS = {
    "sync": {
        "login": "/t/login",
        "logout": "/r/logout",
        "token": "/r/token",
        "session": "/t/require",
        "bearer": "/t/api/require",
    },
    "async": {
        "login": "/t/alogin",
        "logout": "/r/alogout",
        "token": "/r/atoken",
        "session": "/t/arequire",
        "bearer": "/t/api/arequire",
    },
}
SESSION_SALT = "django.contrib.sessions.backends.signed_cookies"


class Browser:
    """One browser (its own cookie jar) talking to the sync or the async views."""

    def __init__(self, mode: str, cookie: str | None = None) -> None:
        self.mode = mode
        self.paths = PATHS[mode]
        self.client: Client | AsyncClient = Client() if mode == "sync" else AsyncClient()
        if cookie is not None:
            self.client.cookies[session_cookie_name()] = cookie

    def send(self, method: str, path: str, data: dict[str, str] | None = None, **kw: Any) -> Any:
        call = getattr(self.client, method)
        if self.mode == "async":
            call = async_to_sync(call)
        return call(path, data, **kw) if data is not None else call(path, **kw)

    def login(self, user: Any, password: str) -> None:
        response = self.send(
            "post", self.paths["login"], {"email": user.email, "password": password}
        )
        assert response.status_code == 200, response.content
        assert response.json()["id"] == user.pk

    def logout(self, **form: str) -> None:
        assert self.send("post", self.paths["logout"], form).status_code == 200

    def issue_token(self) -> str:
        """A token issued with this browser's session (``issue(user, request=request)``)."""
        response = self.send("post", self.paths["token"], {})
        assert response.status_code == 200
        token: str = response.json()["token"]
        return token

    def cookie(self) -> str:
        return str(self.client.cookies[session_cookie_name()].value)

    def session_status(self) -> int:
        """Status of a session-authenticated endpoint (200, or 401 when anonymous)."""
        status: int = self.send("get", self.paths["session"]).status_code
        return status


def replay_status(mode: str, cookie: str) -> int:
    """What a session-authenticated endpoint answers to ``cookie`` sent from elsewhere."""
    return Browser(mode, cookie).session_status()


def bearer_status(mode: str, token: str, path: str | None = None) -> int:
    browser = Browser(mode)
    response = browser.send(
        "get", path or PATHS[mode]["bearer"], headers={"Authorization": f"Bearer {token}"}
    )
    status: int = response.status_code
    return status


def assert_401_problem(response: HttpResponse) -> None:
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_authenticated"


def nonce_of(cookie: str) -> str:
    data = signing.loads(cookie, salt=SESSION_SALT, serializer=signing.JSONSerializer)
    nonce: str = data[NONCE_SESSION_KEY]
    return nonce


# -- a kept copy of the session cookie after logout --------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_cookie_copied_before_plain_logout_gets_401_afterwards(
    mode: str, user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    kept = browser.cookie()
    assert replay_status(mode, kept) == 200  # the copy works while the session lives

    browser.logout()

    assert browser.session_status() == 401
    assert_401_problem(Browser(mode, kept).send("get", PATHS[mode]["session"]))


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_logout_records_the_sessions_nonce_on_the_revocation_cache(
    mode: str, user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    nonce = nonce_of(browser.cookie())
    record = caches[settings.APPFRAMEWORK["AUTH"]["REVOCATION_CACHE"]]
    assert record.get(ended_session_key(nonce)) is None

    browser.logout()

    assert record.get(ended_session_key(nonce)) is True


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_login_as_another_user_in_same_browser_ends_first_sessions_kept_cookie(
    mode: str, user: Any, other_user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    kept = browser.cookie()
    assert replay_status(mode, kept) == 200

    browser.login(other_user, password)

    assert replay_status(mode, kept) == 401
    assert browser.send("get", "/t/whoami").json()["current_user"] == other_user.pk


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_cookie_copied_before_a_relogin_of_the_same_user_gets_401_after_logout(
    mode: str, user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(user, password)
    kept = browser.cookie()
    browser.login(user, password)

    browser.logout()

    assert browser.session_status() == 401
    assert replay_status(mode, kept) == 401


# -- revoking single tokens ---------------------------------------------------------------------------
BEARER_ENDPOINTS = [
    pytest.param("sync", "/t/api/require", id="wsgi-sync-view"),
    pytest.param("async", "/t/api/arequire", id="asgi-async-view"),
    pytest.param("sync", "/api/me", id="wsgi-demo-api-me"),
    pytest.param("async", "/api/me", id="asgi-demo-api-me"),
]


def revoke_by_token(manager: TokenManager, token: str) -> None:
    assert manager.revoke(token) is True


def revoke_by_id(manager: TokenManager, token: str) -> None:
    token_id = manager.token_id(token)
    assert token_id is not None
    manager.revoke_id(token_id)


@pytest.mark.django_db
@pytest.mark.parametrize("revoke", [revoke_by_token, revoke_by_id], ids=["revoke", "revoke_id"])
@pytest.mark.parametrize(("mode", "path"), BEARER_ENDPOINTS)
def test_revoked_token_gets_401_while_another_token_of_same_user_works(
    user: Any, mode: str, path: str, revoke: Any
) -> None:
    manager = TokenManager()
    revoked, other = manager.issue(user), manager.issue(user)
    assert bearer_status(mode, revoked, path) == 200

    revoke(manager, revoked)

    assert bearer_status(mode, revoked, path) == 401
    assert bearer_status(mode, other, path) == 200


@pytest.mark.django_db
def test_revoked_token_is_refused_by_verify_sync_and_the_other_is_not(user: Any) -> None:
    manager = TokenManager()
    revoked, other = manager.issue(user), manager.issue(user)
    manager.revoke(revoked)
    assert manager.verify_sync(revoked) is None
    assert manager.verify_sync(other) == user


@pytest.mark.django_db(transaction=True)
async def test_revoked_token_is_refused_by_async_verify_and_the_other_is_not(user: Any) -> None:
    manager = TokenManager()
    revoked, other = manager.issue(user), manager.issue(user)
    manager.revoke_id(manager.token_id(revoked) or "")
    assert await manager.verify(revoked) is None
    assert await manager.verify(other) == user


@pytest.mark.django_db
def test_each_issued_token_has_its_own_id(user: Any) -> None:
    manager = TokenManager()
    first, second = manager.issue(user), manager.issue(user)
    assert manager.token_id(first) != manager.token_id(second)
    assert manager.token_id(first) is not None


def _expired_token(user: Any) -> str:
    signer = signing.TimestampSigner(salt="appframework.api-token")
    old = time.time() - 10 * 365 * 24 * 3600
    signer.timestamp = lambda: signing.b62_encode(int(old))  # type: ignore[method-assign]
    return signer.sign_object({"uid": user.pk, "h": "", "jti": "0123456789abcdef"})


GARBAGE: list[Any] = [
    pytest.param(lambda u: "", id="empty"),
    pytest.param(lambda u: "garbage", id="word"),
    pytest.param(lambda u: "a:b:c", id="colons"),
    pytest.param(lambda u: "x" * 5000, id="oversized"),
    pytest.param(lambda u: "é" * 40, id="non-ascii"),
    pytest.param(lambda u: TokenManager().issue(u)[:-3] + "AAA", id="bad-signature"),
    pytest.param(lambda u: signing.dumps({"uid": u.pk, "jti": "x"}), id="other-salt"),
    pytest.param(_expired_token, id="expired"),
    pytest.param(lambda u: None, id="none"),
    pytest.param(lambda u: 123, id="int"),
    pytest.param(lambda u: b"bytes", id="bytes"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("make", GARBAGE)
def test_revoke_of_garbage_returns_false_and_never_raises(user: Any, make: Any) -> None:
    value = make(user)
    assert TokenManager().revoke(value) is False
    assert TokenManager().token_id(value) is None


# -- logout and the tokens of the session -------------------------------------------------------------
def set_revoke_tokens_on_logout(settings: Any, value: bool) -> None:
    settings.APPFRAMEWORK = {
        **settings.APPFRAMEWORK,
        "AUTH": {"REVOKE_TOKENS_ON_LOGOUT": value},
    }


def three_tokens(mode: str, user: Any, password: str) -> tuple[Browser, str, str, str]:
    """A logged-in browser, a token issued with its session, one issued with another
    session of the same user, and one issued with no session."""
    browser, elsewhere = Browser(mode), Browser(mode)
    browser.login(user, password)
    elsewhere.login(user, password)
    this_session = browser.issue_token()
    other_session = elsewhere.issue_token()
    no_session = TokenManager().issue(user)
    for token in (this_session, other_session, no_session):
        assert bearer_status(mode, token) == 200
    return browser, this_session, other_session, no_session


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("setting", "form", "expected_this_session"),
    [
        pytest.param(False, {"revoke_tokens": "1"}, 401, id="revoke_tokens-true-without-setting"),
        pytest.param(True, {}, 401, id="setting-makes-plain-logout-revoke"),
        pytest.param(True, {"revoke_tokens": "0"}, 200, id="revoke_tokens-false-beats-setting"),
        pytest.param(False, {}, 200, id="plain-logout-without-setting-keeps"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_logout_revokes_only_the_sessions_tokens_as_revoke_tokens_and_the_setting_say(
    mode: str,
    user: Any,
    password: str,
    settings: Any,
    setting: bool,
    form: dict[str, str],
    expected_this_session: int,
) -> None:
    set_revoke_tokens_on_logout(settings, setting)
    browser, this_session, other_session, no_session = three_tokens(mode, user, password)
    kept = browser.cookie()

    browser.logout(**form)

    # The logout really happened, whatever became of the tokens: the session is over,
    # for the browser and for a copy of its cookie kept elsewhere.
    assert browser.session_status() == 401
    assert replay_status(mode, kept) == 401
    # Only the token issued with the ended session is affected, and only when asked to.
    assert bearer_status(mode, this_session) == expected_this_session
    assert bearer_status(mode, other_session) == 200
    assert bearer_status(mode, no_session) == 200


# -- log out everywhere -------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("revoke_tokens", [None, "0"], ids=["default", "revoke_tokens-false"])
@pytest.mark.parametrize("mode", MODES)
def test_logout_everywhere_revokes_every_cookie_and_every_token_of_the_user(
    mode: str, user: Any, other_user: Any, password: str, revoke_tokens: str | None
) -> None:
    browser, this_session, other_session, no_session = three_tokens(mode, user, password)
    elsewhere = Browser(mode)
    elsewhere.login(user, password)
    kept = browser.cookie()
    bystander = Browser(mode)
    bystander.login(other_user, password)
    bystander_token = TokenManager().issue(other_user)

    form = {"everywhere": "1"}
    if revoke_tokens is not None:
        form["revoke_tokens"] = revoke_tokens
    browser.logout(**form)

    assert replay_status(mode, kept) == 401
    assert elsewhere.session_status() == 401
    for token in (this_session, other_session, no_session):
        assert bearer_status(mode, token) == 401
    # Another user's session and token are untouched.
    assert bystander.session_status() == 200
    assert bearer_status(mode, bystander_token) == 200


# -- the record lives on the REVOCATION_CACHE alias ----------------------------------------------------
@pytest.fixture
def two_caches(settings: Any) -> None:
    """``default`` and ``revocations`` (two locmem stores); ``other-process`` is a second
    alias of the ``revocations`` store (another process sharing that cache), ``local``
    a store of its own (a process that does not share it)."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "revocations": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "revocation-test-shared-store",
        },
        "other-process": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "revocation-test-shared-store",
        },
        "local": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "revocation-test-process-local",
        },
    }
    for alias in settings.CACHES:
        caches[alias].clear()
    use_revocation_cache(settings, "revocations")


def use_revocation_cache(settings: Any, alias: str) -> None:
    settings.APPFRAMEWORK = {**settings.APPFRAMEWORK, "AUTH": {"REVOCATION_CACHE": alias}}


@pytest.mark.django_db
@pytest.mark.usefixtures("two_caches")
def test_revoked_token_is_recorded_on_and_read_from_the_revocation_cache_alias(
    settings: Any, user: Any
) -> None:
    manager = TokenManager()
    token = manager.issue(user)
    token_id = manager.token_id(token)
    assert token_id is not None

    assert manager.revoke(token) is True

    assert caches["revocations"].get(token_key(token_id)) is True
    assert caches["default"].get(token_key(token_id)) is None
    assert manager.verify_sync(token) is None
    # Another process sharing the store sees the revocation...
    use_revocation_cache(settings, "other-process")
    assert manager.verify_sync(token) is None
    # ...one with a cache of its own does not: the record is only as shared as the cache.
    use_revocation_cache(settings, "local")
    assert manager.verify_sync(token) == user


@pytest.mark.django_db
@pytest.mark.usefixtures("two_caches")
def test_ended_session_is_recorded_on_and_read_from_the_revocation_cache_alias(
    settings: Any, user: Any, password: str
) -> None:
    browser = Browser("sync")
    browser.login(user, password)
    kept = browser.cookie()
    nonce = nonce_of(kept)

    browser.logout()

    assert caches["revocations"].get(ended_session_key(nonce)) is True
    assert caches["default"].get(ended_session_key(nonce)) is None
    assert replay_status("sync", kept) == 401
    use_revocation_cache(settings, "other-process")
    assert replay_status("sync", kept) == 401
    use_revocation_cache(settings, "local")
    assert replay_status("sync", kept) == 200
    # Forgetting the record (eviction, a restart of a non-persistent cache) revives it too.
    use_revocation_cache(settings, "revocations")
    caches["revocations"].clear()
    assert replay_status("sync", kept) == 200
