"""The JSON API of personal access tokens, for both clients (browser and app)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client

from appframework.auth.access_tokens import create_access_token
from appframework.auth.models import PersonalAccessToken
from tests.conftest import age_proof, csrf_cookie

pytestmark = pytest.mark.django_db

JSON = "application/json"


class Api:
    """One client of the JSON API, signed in with the password (a recent proof)."""

    def __init__(self, kind: str, email: str, password: str) -> None:
        self.kind = kind
        self.base = f"/api/auth/{kind}/v1"
        self.client = (
            Client(HTTP_X_SESSION_TOKEN="") if kind == "app" else Client(enforce_csrf_checks=True)
        )
        answer = self.call("post", "auth/login", {"email": email, "password": password})
        assert answer.status_code == 200, answer.content
        if kind == "app":
            self.client = Client(HTTP_X_SESSION_TOKEN=answer["X-Session-Token"])

    def call(self, method: str, path: str, data: Any = None) -> Any:
        extra: dict[str, Any] = {"HTTP_ACCEPT": JSON}
        if self.kind == "browser" and method != "get":
            extra.update(
                HTTP_X_CSRF_TOKEN=csrf_cookie(self.client), HTTP_ORIGIN="http://testserver"
            )
        body = json.dumps(data) if data is not None else ""
        send = getattr(self.client, method)
        if method == "get":
            return send(f"{self.base}/{path}", **extra)
        return send(f"{self.base}/{path}", body, content_type=JSON, **extra)

    def stale(self) -> None:
        """The proof of the sign-in gets old."""
        from appframework.auth.reauth import AUTHENTICATED_AT_SESSION_KEY

        if self.kind == "app":
            from appframework.auth.models import UserSession

            row = UserSession.objects.get()
            row.data[AUTHENTICATED_AT_SESSION_KEY]["at"] = int(time.time()) - 3600
            row.save()
        else:
            age_proof(self.client)


@pytest.fixture(params=["browser", "app"])
def api(request: pytest.FixtureRequest, user: Any, password: str) -> Api:
    return Api(request.param, user.email, password)


def test_create_list_and_revoke(api: Api, user: Any) -> None:
    made = api.call(
        "post", "account/tokens", {"name": "deploy", "expires_in_days": 30, "scopes": ["read"]}
    )
    assert made.status_code == 201, made.content
    body = made.json()
    secret, token = body["secret"], body["token"]
    assert secret.startswith("afp_") and secret.startswith(token["prefix"])
    assert set(token) == {
        "id",
        "name",
        "prefix",
        "scopes",
        "created_at",
        "expires_at",
        "last_used_at",
    }
    assert token["name"] == "deploy" and token["scopes"] == ["read"]
    assert token["expires_at"] is not None and token["last_used_at"] is None
    listed = api.call("get", "account/tokens").json()["tokens"]
    assert [t["id"] for t in listed] == [token["id"]]
    assert secret not in json.dumps(listed)
    # The token works as a bearer token on the suite's APIs.
    assert Client().get("/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 200
    gone = api.call("delete", f"account/tokens/{token['id']}")
    assert gone.status_code == 200 and gone.json() == {"tokens": []}
    refused = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_no_expiry_and_no_scopes(api: Api) -> None:
    made = api.call("post", "account/tokens", {"name": "ci"})
    assert made.status_code == 201
    assert made.json()["token"]["expires_at"] is None and made.json()["token"]["scopes"] == []


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"name": ""},
        {"name": "x" * 101},
        {"name": "x", "expires_in_days": 0},
        {"name": "x", "expires_in_days": 366},
        {"name": "x", "expires_in_days": "soon"},
        {"name": "x", "expires_in_days": True},
        {"name": "x", "scopes": ["admin"]},
        {"name": "x", "scopes": "read"},
        {"name": 5},
    ],
)
def test_bad_input_is_422(api: Api, data: dict[str, Any]) -> None:
    answer = api.call("post", "account/tokens", data)
    assert answer.status_code == 422, answer.content
    assert answer["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "invalid"
    assert not PersonalAccessToken.objects.exists()


def test_another_users_token_is_404(api: Api, other_user: Any) -> None:
    theirs, _secret = create_access_token(other_user, "theirs")
    answer = api.call("delete", f"account/tokens/{theirs.pk}")
    assert answer.status_code == 404
    assert api.call("delete", "account/tokens/999999").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_stale_proof_is_401_reauthentication_required(api: Api, user: Any) -> None:
    token, _secret = create_access_token(user, "old")
    api.stale()
    made = api.call("post", "account/tokens", {"name": "x"})
    assert made.status_code == 401 and made.json()["code"] == "reauthentication_required"
    revoke = api.call("delete", f"account/tokens/{token.pk}")
    assert revoke.status_code == 401 and revoke.json()["code"] == "reauthentication_required"
    # Listing is no change.
    assert api.call("get", "account/tokens").status_code == 200


def test_signed_out_is_401() -> None:
    assert Client().get("/api/auth/browser/v1/account/tokens").status_code == 401
