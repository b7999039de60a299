"""appframework.contrib.ninja.security: BearerAuth over the suite's API tokens and
SessionAuth over the suite's sessions, in real ninja operations (tests/contrib_ninja/urls.py).

The CSRF attacks on SessionAuth are in tests/hardening/test_csrf_api_frameworks.py."""

from __future__ import annotations

import copy
import time
import types
from typing import Any

import pytest
from django.core import signing
from django.test import Client

from appframework.auth import TokenManager
from tests.conftest import enable_totp, login_client

from .conftest import JSON, bearer, problem

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.contrib_ninja.urls")]

INVALID_TOKEN = 'Bearer error="invalid_token"'


def _me(user: Any) -> dict[str, Any]:
    return {"id": user.pk, "email": user.email, "type": "User"}


def _signed_in(user: Any) -> Client:
    """A browser signed in as ``user`` (CSRF enforced), its CSRF cookie primed."""
    client = login_client(Client(enforce_csrf_checks=True), user)
    assert client.get("/t/me", **JSON).status_code == 200
    return client


# -- BearerAuth ---------------------------------------------------------------------------------
def test_a_valid_suite_token_is_200_and_request_auth_is_the_user(user: Any) -> None:
    response = Client().get("/t/me", **bearer(user))
    assert response.status_code == 200, response.content
    assert response.json() == _me(user)


def test_a_garbage_token_is_401_invalid_token_with_the_bearer_challenge() -> None:
    response = Client().get("/t/me", HTTP_AUTHORIZATION="Bearer garbage", **JSON)
    body = problem(response, 401, "invalid_token")
    assert body["title"] == "Unauthorized"
    assert body["detail"] == "The bearer token is missing, malformed, expired or revoked."
    assert response["WWW-Authenticate"] == INVALID_TOKEN


def test_an_expired_token_is_401_invalid_token(
    user: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("AUTH", {})["API_TOKEN_EXPIRES_IN"] = 60
    settings.APPFRAMEWORK = app
    headers = bearer(user)
    assert Client().get("/t/me", **headers).status_code == 200  # still within its 60 s
    real_time = time.time
    # The clock django.core.signing reads, a minute and a second later.
    monkeypatch.setattr(signing, "time", types.SimpleNamespace(time=lambda: real_time() + 61))
    response = Client().get("/t/me", **headers)
    problem(response, 401, "invalid_token")
    assert response["WWW-Authenticate"] == INVALID_TOKEN


def test_a_revoked_token_is_401_invalid_token(user: Any) -> None:
    manager = TokenManager()
    token = manager.issue(user)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}", **JSON}
    assert Client().get("/t/me", **headers).status_code == 200
    assert manager.revoke(token) is True
    response = Client().get("/t/me", **headers)
    problem(response, 401, "invalid_token")
    assert response["WWW-Authenticate"] == INVALID_TOKEN


def test_no_credentials_is_a_401_not_authenticated_problem() -> None:
    response = Client().get("/t/me", **JSON)
    body = problem(response, 401, "not_authenticated")
    assert body == {
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": "Authentication is required.",
        "code": "not_authenticated",
    }


def test_no_credentials_401_carries_a_www_authenticate_challenge() -> None:
    # A 401 carries a challenge: the API accepts bearer tokens, so Bearer, as the
    # suite's own API views and its DRF adapter answer.
    response = Client().get("/t/me", **JSON)
    assert response.status_code == 401
    assert response.get("WWW-Authenticate") == "Bearer"


# -- SessionAuth --------------------------------------------------------------------------------
def test_a_signed_in_session_get_is_200_and_request_auth_is_the_user(user: Any) -> None:
    client = login_client(Client(enforce_csrf_checks=True), user)
    for path in ("/t/me", "/t/session-only"):
        response = client.get(path, **JSON)
        assert response.status_code == 200, (path, response.content)
        assert response.json() == _me(user)


def test_an_anonymous_request_to_a_session_operation_is_401() -> None:
    problem(Client().get("/t/session-only", **JSON), 401, "not_authenticated")


def test_a_pending_totp_challenge_is_401_not_signed_in(user: Any, password: str) -> None:
    enable_totp(user)
    client = Client()
    login = client.post("/login", {"email": user.email, "password": password})
    # The password step is done; the code is not given yet.
    assert login.status_code == 302 and login["Location"].endswith("/login/mfa")
    for path in ("/t/me", "/t/session-only"):
        problem(client.get(path, **JSON), 401, "not_authenticated")


def test_session_auth_with_csrf_off_lets_a_tokenless_post_through(user: Any) -> None:
    client = _signed_in(user)
    response = client.post("/t/csrf-off", b"{}", content_type="application/json", **JSON)
    assert response.status_code == 201, response.content
    assert response.json() == _me(user)
    # The same POST where SessionAuth() keeps its check: refused.
    refused = client.post("/t/csrf-on", b"{}", content_type="application/json", **JSON)
    assert refused.status_code == 403


def test_an_authorization_header_beside_a_valid_session_is_not_session_authenticated(
    user: Any,
) -> None:
    client = _signed_in(user)
    assert client.get("/t/session-only", **JSON).status_code == 200  # the session is good
    # Another scheme: not ours, and the session cookie is not used instead.
    basic = client.get("/t/session-only", HTTP_AUTHORIZATION="Basic YTpi", **JSON)
    problem(basic, 401, "not_authenticated")
    # A bad bearer token next to the cookie: the token decides (invalid), not the cookie.
    bad_token = client.get("/t/me", HTTP_AUTHORIZATION="Bearer not-a-token", **JSON)
    problem(bad_token, 401, "invalid_token")
    # Even a token-less POST with csrf=False gets no session user.
    post = client.post(
        "/t/csrf-off",
        b"{}",
        content_type="application/json",
        HTTP_AUTHORIZATION="Basic YTpi",
        **JSON,
    )
    problem(post, 401, "not_authenticated")
