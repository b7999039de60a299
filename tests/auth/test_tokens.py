"""Bearer API tokens: readable signed payload, bearer rules 1-3, header parsing, expiry,
key rotation (X5), revocation by password change / logout everywhere (X4)."""

from __future__ import annotations

import copy
import json
import time
import types
from typing import Any

import pytest
from django.core import signing
from django.test import AsyncClient, Client, override_settings

from appframework.auth import TokenManager, current_api_user_sync, require_api_auth_sync
from appframework.exceptions import UnauthorizedException

from .conftest import bearer, client_with_session, cookie_for

pytestmark = pytest.mark.urls("tests.auth.urls")

NEW_KEY = "a-completely-new-secret-key-0123456789abcdef"


def set_token_lifetime(settings: Any, seconds: int) -> None:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("AUTH", {})["API_TOKEN_EXPIRES_IN"] = seconds
    settings.APPFRAMEWORK = app


def issue_at(user: Any, age_seconds: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """A token issued ``age_seconds`` ago."""
    with monkeypatch.context() as m:
        m.setattr(
            signing.TimestampSigner,
            "timestamp",
            lambda self: signing.b62_encode(int(time.time()) - age_seconds),
        )
        return TokenManager().issue(user)


def move_clock(monkeypatch: pytest.MonkeyPatch, seconds: int) -> None:
    """Move the clock that django.core.signing reads forward by ``seconds``."""
    real_time = time.time
    monkeypatch.setattr(signing, "time", types.SimpleNamespace(time=lambda: real_time() + seconds))


def flip(value: str, index: int) -> str:
    replacement = "A" if value[index] != "A" else "B"
    return value[:index] + replacement + value[index + 1 :]


def api_me(client: Client, authorization: str | None) -> Any:
    extra = {} if authorization is None else {"HTTP_AUTHORIZATION": authorization}
    return client.get("/api/me", **extra)


# -- payload ------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_token_payload_is_readable_base64_json_holding_the_user_id(token: str, user: Any) -> None:
    payload, timestamp, signature = token.split(":")
    data = json.loads(signing.b64_decode(payload.encode()))
    assert data["uid"] == user.pk
    assert timestamp and signature


@pytest.mark.django_db
def test_token_payload_does_not_contain_the_password_hash(token: str, user: Any) -> None:
    decoded = signing.b64_decode(token.split(":")[0].encode()).decode()
    assert user.password_hash not in decoded
    assert user.password_hash.split("$")[-1] not in decoded


@pytest.mark.django_db
def test_issue_refuses_an_unsaved_user() -> None:
    from testproject.blog.models import User

    with pytest.raises(ValueError):
        TokenManager().issue(User(email="ghost@example.com"))


# -- rule 1-3 -----------------------------------------------------------------------------------
@pytest.mark.django_db
def test_verify_sync_returns_the_user_for_a_valid_token(token: str, user: Any) -> None:
    assert TokenManager().verify_sync(token) == user


@pytest.mark.django_db
def test_verify_of_token_for_user_a_never_returns_user_b(user: Any, other_user: Any) -> None:
    manager = TokenManager()
    token_a, token_b = manager.issue(user), manager.issue(other_user)
    assert token_a != token_b
    assert manager.verify_sync(token_a).pk == user.pk
    assert manager.verify_sync(token_b).pk == other_user.pk


@pytest.mark.django_db
def test_token_with_user_id_swapped_to_another_user_is_rejected(
    token: str, user: Any, other_user: Any
) -> None:
    payload, timestamp, signature = token.split(":")
    data = json.loads(signing.b64_decode(payload.encode()))
    data["uid"] = other_user.pk
    swapped = signing.b64_encode(json.dumps(data, separators=(",", ":")).encode()).decode()
    assert TokenManager().verify_sync(f"{swapped}:{timestamp}:{signature}") is None


@pytest.mark.django_db(transaction=True)
async def test_verify_async_returns_user_for_valid_token_and_none_for_garbage(
    token: str, user: Any
) -> None:
    manager = TokenManager()
    assert await manager.verify(token) == user
    assert await manager.verify("garbage") is None
    assert await manager.verify(flip(token, 3)) is None


@pytest.mark.django_db
def test_api_me_returns_the_token_user(client: Client, token: str, user: Any) -> None:
    response = api_me(client, f"Bearer {token}")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk, "email": user.email}


@pytest.mark.django_db
def test_api_me_without_authorization_is_401_with_www_authenticate_bearer(client: Client) -> None:
    response = api_me(client, None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.django_db
def test_api_me_with_invalid_token_is_401_with_invalid_token_error(client: Client) -> None:
    response = api_me(client, "Bearer not-a-token")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.django_db
def test_current_api_user_sync_returns_none_without_header(rf: Any) -> None:
    assert current_api_user_sync(rf.get("/")) is None


@pytest.mark.django_db
def test_require_api_auth_sync_raises_unauthorized_without_header(rf: Any) -> None:
    with pytest.raises(UnauthorizedException) as excinfo:
        require_api_auth_sync(rf.get("/"))
    assert excinfo.value.response_headers() == {"WWW-Authenticate": "Bearer"}


@pytest.mark.django_db
def test_current_api_user_sync_from_sync_view_returns_token_user(
    client: Client, token: str, user: Any
) -> None:
    assert client.get("/t/api/whoami", **bearer(token)).json()["api_user"] == user.pk


@pytest.mark.django_db
def test_require_api_auth_sync_from_sync_view_returns_user_or_401(
    client: Client, token: str, user: Any
) -> None:
    assert client.get("/t/api/require", **bearer(token)).json() == {"id": user.pk}
    response = client.get("/t/api/require")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db(transaction=True)
async def test_current_api_user_from_async_view_returns_token_user(token: str, user: Any) -> None:
    response = await AsyncClient().get(
        "/t/api/awhoami", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.json() == {"api_user": user.pk, "current_user": None}


@pytest.mark.django_db(transaction=True)
async def test_require_api_auth_from_async_view_returns_user_or_401(token: str, user: Any) -> None:
    client = AsyncClient()
    ok = await client.get("/t/api/arequire", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    assert ok.json() == {"id": user.pk}
    denied = await client.get("/t/api/arequire", headers={"Authorization": "Bearer nope"})
    assert denied.status_code == 401
    assert denied["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.django_db
def test_session_cookie_does_not_authenticate_api_routes(client: Client, user: Any) -> None:
    response = client_with_session(cookie_for(user)).get("/api/me")
    assert response.status_code == 401


@pytest.mark.django_db
def test_demo_token_route_issues_a_bearer_token_that_api_me_accepts(user: Any) -> None:
    client = client_with_session(cookie_for(user))
    response = client.post("/token")
    assert response.status_code == 200
    body = response.json()
    assert body["type"] == "Bearer"
    assert api_me(Client(), f"Bearer {body['token']}").json()["id"] == user.pk


@pytest.mark.django_db
def test_demo_token_route_is_401_for_anonymous(client: Client) -> None:
    assert client.post("/token").status_code == 401


# -- tampering -----------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("part", [0, 1, 2])
def test_token_with_a_flipped_character_is_rejected(client: Client, token: str, part: int) -> None:
    pieces = token.split(":")
    offset = sum(len(p) + 1 for p in pieces[:part])
    tampered = flip(token, offset + len(pieces[part]) // 2)
    assert TokenManager().verify_sync(tampered) is None
    response = api_me(client, f"Bearer {tampered}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.django_db
def test_token_signed_with_another_secret_is_rejected(user: Any) -> None:
    with override_settings(SECRET_KEY=NEW_KEY):
        foreign = TokenManager().issue(user)
    assert TokenManager().verify_sync(foreign) is None


@pytest.mark.django_db
def test_rotating_secret_key_invalidates_tokens(token: str) -> None:
    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[]):
        assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_token_signed_with_key_in_secret_key_fallbacks_is_accepted(token: str, user: Any) -> None:
    from django.conf import settings

    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[settings.SECRET_KEY]):
        assert TokenManager().verify_sync(token) == user


@pytest.mark.django_db
def test_token_signed_with_key_in_secret_key_fallbacks_is_accepted_by_api_me(
    client: Client, token: str, user: Any
) -> None:
    from django.conf import settings

    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[settings.SECRET_KEY]):
        assert api_me(client, f"Bearer {token}").status_code == 200


@pytest.mark.django_db
def test_session_cookie_used_as_bearer_token_is_rejected(user: Any) -> None:
    assert TokenManager().verify_sync(cookie_for(user)) is None


# -- expiry ------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_token_older_than_api_token_expires_in_is_rejected(
    settings: Any, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_token_lifetime(settings, 60)
    assert TokenManager().verify_sync(issue_at(user, 30, monkeypatch)) == user
    assert TokenManager().verify_sync(issue_at(user, 120, monkeypatch)) is None


@pytest.mark.django_db
def test_token_expires_when_the_clock_moves_past_its_lifetime(
    settings: Any, token: str, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_token_lifetime(settings, 60)
    move_clock(monkeypatch, 30)
    assert TokenManager().verify_sync(token) == user
    move_clock(monkeypatch, 61)
    assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_expired_token_on_api_me_is_401_invalid_token(
    client: Client, settings: Any, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_token_lifetime(settings, 60)
    response = api_me(client, f"Bearer {issue_at(user, 3600, monkeypatch)}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.django_db
def test_default_token_lifetime_is_30_days(user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    day = 24 * 3600
    assert TokenManager().verify_sync(issue_at(user, 29 * day, monkeypatch)) == user
    assert TokenManager().verify_sync(issue_at(user, 31 * day, monkeypatch)) is None


# -- X4 revocation ----------------------------------------------------------------------------------
@pytest.mark.django_db
def test_token_for_deleted_user_is_rejected(token: str, user: Any) -> None:
    user.delete()
    assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_token_for_inactive_user_is_rejected(token: str, user: Any) -> None:
    user.is_active = False
    user.save()
    assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_token_is_rejected_after_password_change(token: str, user: Any) -> None:
    user.set_password("a brand new passphrase")
    user.save()
    assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_token_is_rejected_after_invalidate_sessions(token: str, user: Any) -> None:
    user.invalidate_sessions()
    assert TokenManager().verify_sync(token) is None


@pytest.mark.django_db
def test_token_is_rejected_after_logout_everywhere(client: Client, user: Any) -> None:
    session = client_with_session(cookie_for(user))
    token = session.post("/token").json()["token"]
    assert api_me(Client(), f"Bearer {token}").status_code == 200
    session.post("/logout", {"everywhere": "1"})
    assert api_me(Client(), f"Bearer {token}").status_code == 401


@pytest.mark.django_db
def test_token_survives_plain_logout_by_default(
    client: Client, user: Any, settings: Any
) -> None:
    # A token is a credential of its own: a plain logout ends the cookie, not the
    # tokens (unless logout(revoke_tokens=True) or REVOKE_TOKENS_ON_LOGOUT says so). The
    # demo turns REVOKE_TOKENS_ON_LOGOUT on; the library's default is off.
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app["AUTH"].pop("REVOKE_TOKENS_ON_LOGOUT", None)
    settings.APPFRAMEWORK = app
    session = client_with_session(cookie_for(user))
    token = session.post("/token").json()["token"]
    session.post("/logout")
    assert api_me(Client(), f"Bearer {token}").status_code == 200


# -- Authorization header parsing --------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_bearer_scheme_is_case_insensitive(
    client: Client, token: str, user: Any, scheme: str
) -> None:
    response = api_me(client, f"{scheme} {token}")
    assert response.status_code == 200
    assert response.json()["id"] == user.pk


BAD_HEADERS: dict[str, str] = {
    "garbage": "garbage",
    "empty": "",
    "basic-scheme": "Basic YWxpY2U6cGFzc3dvcmQ=",
    "bearer-no-token": "Bearer",
    "bearer-space-only": "Bearer ",
    "oddly-spaced": "Bearer  a b",
    "random-token": "Bearer abc.def.ghi",
    "colons-only": "Bearer ::",
    "huge-100kb": "Bearer " + "a" * 100_000,
    "non-ascii": "Bearer tökén:ä:ö",
    "json-injection": 'Bearer {"uid":1}',
    "null-byte": "Bearer abc\x00def",
}


@pytest.mark.django_db
@pytest.mark.parametrize("header", list(BAD_HEADERS.values()), ids=list(BAD_HEADERS))
def test_malformed_authorization_header_is_401_never_500(
    client: Client, user: Any, header: str
) -> None:
    response = api_me(client, header)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
@pytest.mark.parametrize("header", list(BAD_HEADERS.values()), ids=list(BAD_HEADERS))
def test_malformed_authorization_header_gives_no_api_user(rf: Any, user: Any, header: str) -> None:
    assert current_api_user_sync(rf.get("/", HTTP_AUTHORIZATION=header)) is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "template",
    ["Bearer\t{t}", "Bearer {t} extra", "Basic {t}", "Token {t}", "{t}", "Bearer{t}"],
    ids=["tab-separated", "trailing-word", "basic-scheme", "token-scheme", "no-scheme", "no-space"],
)
def test_valid_token_in_malformed_header_is_rejected(
    client: Client, token: str, template: str
) -> None:
    response = api_me(client, template.format(t=token))
    assert response.status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value",
    ["", "garbage", "a:b:c", "::", "x" * 100_000, "tökén", None, 12345, b"bytes"],
    ids=["empty", "garbage", "three-parts", "colons", "100kb", "non-ascii", "none", "int", "bytes"],
)
def test_verify_sync_returns_none_for_garbage(user: Any, value: Any) -> None:
    assert TokenManager().verify_sync(value) is None
