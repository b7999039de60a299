"""``TokenManager.issue(user, request=request)`` ties the token to the request's session
(its ``sid``) only when ``user`` is that session's logged-in user.

An admin who issues a token for someone else and then logs out with
``revoke_tokens=True`` must not end that user's token; the admin's own token, issued
the same way, ends. Sync views under WSGI and async views under ASGI.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core import signing
from django.test import RequestFactory

from appframework.auth import TokenManager
from appframework.auth.session_store import SessionStore

from .test_revocation import MODES, Browser, bearer_status, nonce_of

pytestmark = pytest.mark.urls("tests.auth.token_tie_urls")

TOKEN_FOR = {"sync": "/tt/token-for", "async": "/tt/atoken-for"}
TOKEN_SALT = "appframework.api-token"


@pytest.fixture
def admin(user: Any) -> Any:
    """Alice, staff: the one logged in, issuing tokens."""
    user.is_staff = True
    user.save()
    return user


def payload_of(token: str) -> dict[str, Any]:
    data: dict[str, Any] = signing.TimestampSigner(salt=TOKEN_SALT).unsign_object(token)
    return data


def token_for(browser: Browser, target: Any) -> str:
    """A token for ``target`` issued by ``browser``'s logged-in user, with the request."""
    response = browser.send("post", f"{TOKEN_FOR[browser.mode]}/{target.pk}", {})
    assert response.status_code == 200, response.content
    token: str = response.json()["token"]
    return token


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_admins_logout_with_revoke_tokens_leaves_the_token_issued_for_another_user_working(
    mode: str, admin: Any, other_user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(admin, password)
    own = browser.issue_token()
    for_other = token_for(browser, other_user)
    assert TokenManager().verify_sync(for_other) == other_user
    assert bearer_status(mode, for_other) == 200
    assert bearer_status(mode, own) == 200

    browser.logout(revoke_tokens="1")

    assert bearer_status(mode, own) == 401
    assert bearer_status(mode, for_other) == 200


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_token_carries_the_session_nonce_only_when_issued_for_the_sessions_own_user(
    mode: str, admin: Any, other_user: Any, password: str
) -> None:
    browser = Browser(mode)
    browser.login(admin, password)
    nonce = nonce_of(browser.cookie())

    own = browser.issue_token()
    for_other = token_for(browser, other_user)

    assert payload_of(own)["sid"] == nonce
    assert "sid" not in payload_of(for_other)
    assert payload_of(for_other)["uid"] == other_user.pk


@pytest.mark.django_db
def test_issue_with_a_request_ties_only_the_sessions_own_user(
    admin: Any, other_user: Any, password: str
) -> None:
    browser = Browser("sync")
    browser.login(admin, password)
    request = RequestFactory().post("/")
    request.session = SessionStore(session_key=browser.cookie())
    manager = TokenManager()

    own, for_other = (
        manager.issue(admin, request=request),
        manager.issue(other_user, request=request),
    )

    assert payload_of(own)["sid"] == nonce_of(browser.cookie())
    assert "sid" not in payload_of(for_other)


@pytest.mark.django_db
def test_issue_with_an_anonymous_request_ties_nothing(user: Any) -> None:
    request = RequestFactory().post("/")
    request.session = SessionStore()

    token = TokenManager().issue(user, request=request)

    assert "sid" not in payload_of(token)
    assert TokenManager().verify_sync(token) == user
