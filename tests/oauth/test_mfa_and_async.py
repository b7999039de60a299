"""An OAuth sign-in of a user with TOTP on goes through the code challenge; and the
async entry points (``aoauth_redirect``, ``aoauth_callback``) work under ASGI.

The provider is the real local one (tests/oauth/peer.py).
"""

from __future__ import annotations

import time
from typing import Any

import pyotp
import pytest
from django.http import HttpRequest
from django.test import AsyncClient, Client, override_settings

from appframework.mfa import pending_user_id
from appframework.oauth import OAuthProvider
from appframework.oauth.state import SESSION_KEY
from testproject.blog.models import User
from tests.conftest import enable_totp
from tests.oauth.conftest import (
    JSON,
    REDIRECT_URI,
    authorize_at_provider,
    identities,
    local_path,
    oauth_settings,
    problem,
    query_of,
    session_user_id,
    sign_in,
)

pytestmark = pytest.mark.django_db

ALICE = "alice@example.test"
CSRF_COOKIE = "csrf_token"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}


def totp_user() -> tuple[Any, str]:
    """alice@example.test, a local account with TOTP on; its secret."""
    user = User.objects.create_user(ALICE, "a local password")
    return user, enable_totp(user)[0]


def pending_of(client: Client) -> Any:
    request = HttpRequest()
    request.session = client.session
    return pending_user_id(request)


# -- MFA ------------------------------------------------------------------------------------------
def test_a_user_with_totp_signing_in_through_the_provider_is_sent_to_the_code_form(
    oauth_local: OAuthProvider,
) -> None:
    user, _secret = totp_user()
    client = Client(enforce_csrf_checks=True)

    response = sign_in(client, next="/posts")

    assert response.status_code == 302
    assert response["Location"] == "/login/mfa"
    assert session_user_id(client) is None
    assert pending_of(client) == user.pk
    assert "You are anonymous." in client.get("/").content.decode()
    # The identity is linked: the provider vouched for the user, the code is still due.
    assert identities() == [("local", "alice", user.pk)]


def test_a_valid_code_on_the_demo_form_then_signs_the_user_in(oauth_local: OAuthProvider) -> None:
    user, secret = totp_user()
    client = Client(enforce_csrf_checks=True)
    assert sign_in(client)["Location"] == "/login/mfa"
    form = client.get("/login/mfa", **HTML)
    assert form.status_code == 200

    # The next step's code (the confirming one is spent).
    code = pyotp.TOTP(secret).at(time.time() + 30)
    response = client.post(
        "/login/mfa", {"code": code, "_token": client.cookies[CSRF_COOKIE].value}, **HTML
    )

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert session_user_id(client) == str(user.pk)
    assert pending_of(client) is None
    assert f"Signed in as <strong>{ALICE}</strong>" in client.get("/").content.decode()


def test_a_wrong_code_does_not_sign_in(oauth_local: OAuthProvider) -> None:
    _user, secret = totp_user()
    client = Client(enforce_csrf_checks=True)
    assert sign_in(client)["Location"] == "/login/mfa"
    client.get("/login/mfa", **HTML)
    live = {pyotp.TOTP(secret).at(time.time() + 30 * k) for k in (-1, 0, 1, 2)}
    wrong = next(c for c in ("000000", "111111", "222222", "333333") if c not in live)

    response = client.post(
        "/login/mfa", {"code": wrong, "_token": client.cookies[CSRF_COOKIE].value}, **HTML
    )

    assert response.status_code == 401
    assert session_user_id(client) is None


def test_with_oauth_mfa_off_the_callback_signs_in_directly(local_provider: OAuthProvider) -> None:
    user, _secret = totp_user()
    client = Client()
    with oauth_settings([local_provider], MFA=False):
        response = sign_in(client, next="/posts")

    assert response.status_code == 302
    assert response["Location"] == "/posts"
    assert session_user_id(client) == str(user.pk)
    assert pending_of(client) is None


def test_a_user_without_totp_is_signed_in_directly_with_mfa_on(
    oauth_local: OAuthProvider,
) -> None:
    user = User.objects.create_user(ALICE, "a local password")
    client = Client()

    response = sign_in(client, next="/posts")

    assert response["Location"] == "/posts"
    assert session_user_id(client) == str(user.pk)


# -- async ----------------------------------------------------------------------------------------
ASYNC_URLS = "tests.oauth.urls_async"


@pytest.mark.django_db(transaction=True)
async def test_async_views_redirect_and_callback_under_asgi(
    oauth_local: OAuthProvider,
) -> None:
    client = AsyncClient()
    with override_settings(ROOT_URLCONF=ASYNC_URLS):
        started = await client.get("/auth/local/redirect", {"next": "/posts"})
        assert started.status_code == 302
        authorize_url = started["Location"]
        params = query_of(authorize_url)
        assert params["redirect_uri"] == REDIRECT_URI
        assert params["code_challenge_method"] == "S256"
        session = await client.asession()
        assert params["state"] in session[SESSION_KEY]
        assert session[SESSION_KEY][params["state"]]["o"] == params["nonce"]

        callback = authorize_at_provider(authorize_url)
        response = await client.get(local_path(callback))

    assert response.status_code == 200, response.content
    assert response.json() == {
        "provider": "local",
        "provider_user_id": "alice",
        "email": ALICE,
        "email_verified": True,
        "name": "Alice Example",
        "next": "/posts",
        "has_access_token": True,
    }
    session = await client.asession()
    assert params["state"] not in session[SESSION_KEY]


@pytest.mark.django_db(transaction=True)
async def test_async_callback_refusals_are_problem_responses(
    oauth_local: OAuthProvider,
) -> None:
    client = AsyncClient()
    with override_settings(ROOT_URLCONF=ASYNC_URLS):
        state = query_of((await client.get("/auth/local/redirect"))["Location"])["state"]
        missing = await client.get("/auth/local/callback?code=c", **JSON)
        wrong = await client.get("/auth/local/callback?code=c&state=nope", **JSON)
        unknown = await client.get("/auth/nope/redirect", **JSON)
        no_code = await client.get(
            f"/auth/local/callback?state={state}&iss={oauth_local.issuer}", **JSON
        )

    assert (missing.status_code, problem(missing)["code"]) == (403, "oauth_state_missing")
    assert (wrong.status_code, problem(wrong)["code"]) == (403, "oauth_state_mismatch")
    assert (unknown.status_code, problem(unknown)["code"]) == (404, "oauth_unknown_provider")
    assert (no_code.status_code, problem(no_code)["code"]) == (400, "oauth_code_missing")


@pytest.mark.django_db(transaction=True)
async def test_async_replay_with_a_kept_cookie_is_refused(oauth_local: OAuthProvider) -> None:
    from appframework.security.tokens import session_cookie_name

    client = AsyncClient()
    with override_settings(ROOT_URLCONF=ASYNC_URLS):
        callback = local_path(
            authorize_at_provider((await client.get("/auth/local/redirect"))["Location"])
        )
        kept = AsyncClient()
        kept.cookies[session_cookie_name()] = client.cookies[session_cookie_name()].value
        first = await client.get(callback)
        replay = await kept.get(callback, **JSON)

    assert first.status_code == 200
    assert replay.status_code == 403
    assert problem(replay)["code"] == "oauth_state_replayed"
