"""Cookie sessions: login/logout state changes, AuthManager as a Django backend, and the
session attacks X1 (fixation), X2 (replay after logout), X3 (tampering / key rotation)
and X8a (an Authorization header makes the session ignored)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import Permission
from django.contrib.sessions.serializers import JSONSerializer
from django.core import signing
from django.test import AsyncClient, Client, override_settings

from appframework.auth import AuthManager, TokenManager
from appframework.conf import app_settings

from .conftest import bearer, client_with_session, cookie_for, session_cookie_name

pytestmark = pytest.mark.urls("tests.auth.urls")

SESSION_SALT = "django.contrib.sessions.backends.signed_cookies"


def whoami(client: Client, **extra: Any) -> dict[str, Any]:
    response = client.get("/t/whoami", **extra)
    assert response.status_code == 200
    return response.json()


def replay(cookie: str) -> dict[str, Any]:
    """What the server makes of ``cookie`` sent from a brand-new client."""
    return whoami(client_with_session(cookie))


def csrf_value(client: Client) -> str:
    return client.cookies[app_settings.CSRF.COOKIE_NAME].value


def form_login(client: Client, email: str, password: str) -> Any:
    """The demo login form: GET /login (CSRF cookie), POST email/password/_token."""
    assert client.get("/login").status_code == 200
    return client.post(
        "/login", {"email": email, "password": password, "_token": csrf_value(client)}
    )


def form_logout(client: Client, *, everywhere: bool = False) -> Any:
    data = {"_token": csrf_value(client)}
    if everywhere:
        data["everywhere"] = "1"
    return client.post("/logout", data)


def decode_session(cookie: str) -> dict[str, Any]:
    data: dict[str, Any] = signing.loads(cookie, salt=SESSION_SALT, serializer=JSONSerializer)
    return data


def flip(value: str, index: int) -> str:
    char = value[index]
    replacement = "A" if char != "A" else "B"
    return value[:index] + replacement + value[index + 1 :]


# -- the state table through real HTTP requests ---------------------------------------------
@pytest.mark.django_db
def test_state_table_anonymous_login_authenticated_logout_anonymous(
    csrf_client: Client, user: Any, password: str
) -> None:
    assert "You are anonymous" in csrf_client.get("/").content.decode()
    assert whoami(csrf_client)["current_user"] is None

    response = form_login(csrf_client, user.email, password)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert f"Signed in as <strong>{user.email}</strong>" in csrf_client.get("/").content.decode()
    assert whoami(csrf_client) == {
        "current_user": user.pk,
        "request_user": user.pk,
        "authenticated": True,
    }

    response = form_logout(csrf_client)
    assert response.status_code == 302
    assert "You are anonymous" in csrf_client.get("/").content.decode()
    assert whoami(csrf_client) == {
        "current_user": None,
        "request_user": None,
        "authenticated": False,
    }


@pytest.mark.django_db
def test_login_form_with_wrong_password_answers_401_and_stays_anonymous(
    csrf_client: Client, user: Any
) -> None:
    response = form_login(csrf_client, user.email, "wrong password")
    assert response.status_code == 401
    assert "Wrong email or password." in response.content.decode()
    assert session_cookie_name() not in csrf_client.cookies
    assert whoami(csrf_client)["current_user"] is None


@pytest.mark.django_db
def test_logout_route_deletes_the_session_cookie(
    csrf_client: Client, user: Any, password: str
) -> None:
    form_login(csrf_client, user.email, password)
    response = form_logout(csrf_client)
    morsel = response.cookies[session_cookie_name()]
    assert morsel.value == ""
    assert str(morsel["max-age"]) == "0"


@pytest.mark.django_db
def test_logout_route_rejects_post_without_csrf_token(
    csrf_client: Client, user: Any, password: str
) -> None:
    form_login(csrf_client, user.email, password)
    assert csrf_client.post("/logout").status_code == 403
    assert whoami(csrf_client)["current_user"] == user.pk


@pytest.mark.django_db
def test_login_and_logout_functions_from_sync_views(
    client: Client, user: Any, password: str
) -> None:
    assert client.post("/t/login", {"email": user.email, "password": password}).json() == {
        "ok": True,
        "id": user.pk,
    }
    assert whoami(client)["current_user"] == user.pk
    client.post("/t/logout")
    assert whoami(client)["current_user"] is None


# -- the cookie is a signed_cookies session (the suite's engine extends Django's) ------------
def test_session_engine_is_the_suites_signed_cookie_store() -> None:
    from django.contrib.sessions.backends.signed_cookies import SessionStore as Signed

    from appframework.auth.session_store import SessionStore

    assert settings.SESSION_ENGINE == "appframework.auth.session_store"
    assert issubclass(SessionStore, Signed)


@pytest.mark.django_db
def test_session_cookie_is_a_signed_payload_holding_the_user_id(
    session_cookie: str, user: Any
) -> None:
    data = decode_session(session_cookie)
    assert data["_auth_user_id"] == str(user.pk)
    assert data["_auth_user_backend"] == "appframework.auth.AuthManager"
    assert data["_auth_user_hash"] == user.get_session_auth_hash()


@pytest.mark.django_db
def test_login_stores_no_server_side_session_row(
    csrf_client: Client, user: Any, password: str
) -> None:
    from django.contrib.sessions.models import Session

    form_login(csrf_client, user.email, password)
    assert whoami(csrf_client)["current_user"] == user.pk
    assert not Session.objects.exists()


@pytest.mark.django_db
def test_session_cookie_is_httponly_and_samesite_lax(
    csrf_client: Client, user: Any, password: str
) -> None:
    response = form_login(csrf_client, user.email, password)
    morsel = response.cookies[session_cookie_name()]
    assert morsel["httponly"]
    assert morsel["samesite"].lower() == "lax"


@pytest.mark.django_db
def test_session_cookie_older_than_session_max_age_is_anonymous(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    age = settings.SESSION_COOKIE_AGE
    with monkeypatch.context() as m:
        m.setattr(
            signing.TimestampSigner,
            "timestamp",
            lambda self: signing.b62_encode(int(time.time()) - age - 60),
        )
        old_cookie = cookie_for(user)
    assert replay(old_cookie)["current_user"] is None


# -- AuthManager.attempt ----------------------------------------------------------------------
@pytest.mark.django_db
def test_attempt_sync_returns_the_user_for_the_right_password(user: Any, password: str) -> None:
    assert AuthManager().attempt_sync(user.email, password) == user


@pytest.mark.django_db
def test_attempt_sync_returns_none_for_wrong_password(user: Any) -> None:
    assert AuthManager().attempt_sync(user.email, "wrong password") is None


@pytest.mark.django_db
def test_attempt_sync_returns_none_for_unknown_user(user: Any, password: str) -> None:
    assert AuthManager().attempt_sync("mallory@example.com", password) is None


@pytest.mark.django_db
def test_attempt_sync_returns_none_for_inactive_user(user: Any, password: str) -> None:
    user.is_active = False
    user.save()
    assert AuthManager().attempt_sync(user.email, password) is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("username", "secret"),
    [
        (None, "pw"),
        (123, "pw"),
        (b"alice@example.com", "pw"),
        ("alice@example.com", None),
        ("alice@example.com", 123),
        ("alice@example.com", b"pw"),
        ("", "pw"),
        ({"email": 1}, "pw"),
    ],
    ids=repr,
)
def test_attempt_sync_returns_none_for_non_str_or_empty_input(
    user: Any, username: Any, secret: Any
) -> None:
    assert AuthManager().attempt_sync(username, secret) is None


@pytest.mark.django_db
def test_attempt_sync_returns_none_for_over_long_password(user: Any) -> None:
    assert AuthManager().attempt_sync(user.email, "x" * 100_000) is None


@pytest.mark.django_db(transaction=True)
async def test_attempt_async_returns_user_for_right_password_and_none_otherwise(
    user: Any, other_user: Any, password: str
) -> None:
    manager = AuthManager()
    assert await manager.attempt(user.email, password) == user
    assert await manager.attempt(other_user.email, password) == other_user
    assert await manager.attempt(user.email, "wrong password") is None
    assert await manager.attempt("nobody@example.com", password) is None
    assert await manager.attempt(None, password) is None  # type: ignore[arg-type]


# -- AuthManager as a Django authentication backend -------------------------------------------
@pytest.mark.django_db
def test_django_authenticate_uses_auth_manager(user: Any, password: str) -> None:
    authenticated = authenticate(None, username=user.email, password=password)
    assert authenticated == user
    assert authenticated.backend == "appframework.auth.AuthManager"
    assert authenticate(None, username=user.email, password="wrong") is None
    assert authenticate(None, email=user.email, password=password) == user


@pytest.mark.django_db
def test_django_authenticate_refuses_inactive_user(user: Any, password: str) -> None:
    user.is_active = False
    user.save()
    assert authenticate(None, username=user.email, password=password) is None


@pytest.mark.django_db
def test_admin_login_works_for_staff_user(user: Any, password: str) -> None:
    user.is_staff = True
    user.is_superuser = True
    user.save()
    client = Client(enforce_csrf_checks=True)
    page = client.get("/admin/login/?next=/admin/")
    assert page.status_code == 200
    masked = page.content.decode().split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]

    response = client.post(
        "/admin/login/?next=/admin/",
        {
            "username": user.email,
            "password": password,
            "csrfmiddlewaretoken": masked,
            "next": "/admin/",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    assert whoami(client)["current_user"] == user.pk


@pytest.mark.django_db
def test_admin_login_refuses_wrong_password(user: Any) -> None:
    user.is_staff = True
    user.save()
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/", {"username": user.email, "password": "wrong"}
    )
    assert response.status_code == 200  # the form again, with an error
    assert session_cookie_name() not in client.cookies
    assert client.get("/admin/").status_code == 302


@pytest.mark.django_db
def test_django_login_required_view_works_with_our_sessions(
    client: Client, session_cookie: str, user: Any
) -> None:
    response = client.get("/t/login-required")
    assert response.status_code == 302
    assert response["Location"].startswith("/login?next=")

    authed = client_with_session(session_cookie)
    response = authed.get("/t/login-required")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db
def test_request_user_is_the_logged_in_user(session_cookie: str, user: Any) -> None:
    assert replay(session_cookie)["request_user"] == user.pk


@pytest.mark.django_db
def test_has_perm_works_for_a_user_granted_the_django_permission(
    user: Any, other_user: Any
) -> None:
    permission = Permission.objects.get(codename="change_post", content_type__app_label="blog")
    user.user_permissions.add(permission)
    user = type(user).objects.get(pk=user.pk)  # drop the permission cache

    assert user.has_perm("blog.change_post") is True
    assert user.has_perm("blog.delete_post") is False
    assert other_user.has_perm("blog.change_post") is False


# -- X1 session fixation -----------------------------------------------------------------------
@pytest.mark.django_db
def test_login_changes_the_pre_login_session_cookie_value(
    csrf_client: Client, user: Any, password: str
) -> None:
    csrf_client.get("/t/session-touch")
    before = csrf_client.cookies[session_cookie_name()].value
    assert before

    form_login(csrf_client, user.email, password)
    after = csrf_client.cookies[session_cookie_name()].value
    assert after and after != before


@pytest.mark.django_db
def test_pre_login_cookie_does_not_authenticate_after_login(
    csrf_client: Client, user: Any, password: str
) -> None:
    csrf_client.get("/t/session-touch")
    before = csrf_client.cookies[session_cookie_name()].value
    form_login(csrf_client, user.email, password)

    assert whoami(csrf_client)["current_user"] == user.pk
    assert replay(before)["current_user"] is None


@pytest.mark.django_db
def test_attacker_chosen_session_cookie_is_replaced_on_login_and_does_not_authenticate(
    csrf_client: Client, user: Any, password: str
) -> None:
    planted = "attacker-chosen-session-value"
    csrf_client.cookies[session_cookie_name()] = planted
    response = form_login(csrf_client, user.email, password)
    assert response.status_code == 302

    assert csrf_client.cookies[session_cookie_name()].value != planted
    assert whoami(csrf_client)["current_user"] == user.pk
    assert replay(planted)["current_user"] is None


# -- X2 replay after logout ------------------------------------------------------------------------
@pytest.mark.django_db
def test_captured_cookie_is_anonymous_after_plain_logout(
    csrf_client: Client, user: Any, password: str
) -> None:
    """A copy of the signed cookie taken before a plain logout does not outlive it: the
    session's nonce is recorded as ended until the cookie would have expired."""
    form_login(csrf_client, user.email, password)
    captured = csrf_client.cookies[session_cookie_name()].value
    assert replay(captured)["current_user"] == user.pk
    form_logout(csrf_client)
    assert whoami(csrf_client)["current_user"] is None

    assert replay(captured)["current_user"] is None


@pytest.mark.django_db
def test_logout_everywhere_makes_captured_cookie_anonymous(
    csrf_client: Client, user: Any, password: str
) -> None:
    form_login(csrf_client, user.email, password)
    captured = csrf_client.cookies[session_cookie_name()].value
    other_device = cookie_for(user)
    assert replay(other_device)["current_user"] == user.pk

    assert form_logout(csrf_client, everywhere=True).status_code == 302

    assert whoami(csrf_client)["current_user"] is None
    assert replay(captured)["current_user"] is None
    assert replay(other_device)["current_user"] is None


@pytest.mark.django_db
def test_logout_function_with_everywhere_true_makes_captured_cookie_anonymous(
    client: Client, session_cookie: str, user: Any
) -> None:
    device = client_with_session(session_cookie)
    assert device.post("/t/logout", {"everywhere": "1"}).status_code == 200
    assert replay(session_cookie)["current_user"] is None


@pytest.mark.django_db
def test_logout_everywhere_bumps_the_session_version(
    client: Client, session_cookie: str, user: Any
) -> None:
    before = user.session_version
    client_with_session(session_cookie).post("/t/logout", {"everywhere": "1"})
    user.refresh_from_db()
    assert user.session_version == before + 1


@pytest.mark.django_db
def test_user_can_log_in_again_after_logout_everywhere(
    csrf_client: Client, user: Any, password: str
) -> None:
    form_login(csrf_client, user.email, password)
    form_logout(csrf_client, everywhere=True)
    assert form_login(csrf_client, user.email, password).status_code == 302
    assert whoami(csrf_client)["current_user"] == user.pk


@pytest.mark.django_db
def test_invalidate_sessions_makes_captured_cookie_anonymous(
    session_cookie: str, user: Any
) -> None:
    assert replay(session_cookie)["current_user"] == user.pk
    user.invalidate_sessions()
    assert replay(session_cookie)["current_user"] is None


@pytest.mark.django_db
def test_invalidate_sessions_leaves_other_users_sessions_alone(user: Any, other_user: Any) -> None:
    bobs = cookie_for(other_user)
    user.invalidate_sessions()
    assert replay(bobs)["current_user"] == other_user.pk


@pytest.mark.django_db
def test_password_change_makes_captured_cookie_anonymous(session_cookie: str, user: Any) -> None:
    user.set_password("a brand new passphrase")
    user.save()
    assert replay(session_cookie)["current_user"] is None


@pytest.mark.django_db
def test_deactivated_user_session_cookie_is_anonymous(session_cookie: str, user: Any) -> None:
    user.is_active = False
    user.save()
    assert replay(session_cookie)["current_user"] is None


@pytest.mark.django_db
def test_deleted_user_session_cookie_is_anonymous(session_cookie: str, user: Any) -> None:
    user.delete()
    assert replay(session_cookie)["current_user"] is None


# -- X3 tampering, other salts/keys, key rotation -------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("where", ["payload", "timestamp", "signature", "last-char"])
def test_tampered_session_cookie_is_anonymous(session_cookie: str, user: Any, where: str) -> None:
    payload, timestamp, signature = session_cookie.rsplit(":", 2)
    index = {
        "payload": len(payload) // 2,
        "timestamp": len(payload) + 1,
        "signature": len(payload) + len(timestamp) + 2 + len(signature) // 2,
        "last-char": len(session_cookie) - 1,
    }[where]
    tampered = flip(session_cookie, index)
    assert tampered != session_cookie
    assert replay(tampered)["current_user"] is None


@pytest.mark.django_db
def test_session_payload_signed_with_another_salt_is_anonymous(
    session_cookie: str, user: Any
) -> None:
    data = decode_session(session_cookie)
    forged = signing.dumps(
        data, salt="appframework.api-token", compress=True, serializer=JSONSerializer
    )
    assert replay(forged)["current_user"] is None


@pytest.mark.django_db
def test_session_payload_signed_with_another_key_is_anonymous(
    session_cookie: str, user: Any
) -> None:
    data = decode_session(session_cookie)
    forged = signing.dumps(
        data, key="not-the-server-key", salt=SESSION_SALT, compress=True, serializer=JSONSerializer
    )
    assert replay(forged)["current_user"] is None


@pytest.mark.django_db
def test_api_token_used_as_session_cookie_is_anonymous(user: Any) -> None:
    assert replay(TokenManager().issue(user))["current_user"] is None


@pytest.mark.django_db
def test_forged_session_without_valid_auth_hash_is_anonymous(user: Any) -> None:
    # Even correctly signed (a leaked key), the session hash binds the cookie to the user row.
    forged = signing.dumps(
        {
            "_auth_user_id": str(user.pk),
            "_auth_user_backend": "appframework.auth.AuthManager",
            "_auth_user_hash": "0" * 64,
        },
        salt=SESSION_SALT,
        compress=True,
        serializer=JSONSerializer,
    )
    assert replay(forged)["current_user"] is None


@pytest.mark.django_db
def test_rotating_secret_key_makes_session_cookie_anonymous(session_cookie: str, user: Any) -> None:
    with override_settings(
        SECRET_KEY="a-completely-new-secret-key-0123456789abcdef", SECRET_KEY_FALLBACKS=[]
    ):
        assert replay(session_cookie)["current_user"] is None


@pytest.mark.django_db
def test_old_key_in_secret_key_fallbacks_keeps_the_session(session_cookie: str, user: Any) -> None:
    with override_settings(
        SECRET_KEY="a-completely-new-secret-key-0123456789abcdef",
        SECRET_KEY_FALLBACKS=[settings.SECRET_KEY],
    ):
        assert replay(session_cookie)["current_user"] == user.pk


# -- X8a: an Authorization header makes the session ignored ----------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize(
    "authorization", ["Bearer garbage", "Basic YWxpY2U6cHc=", "Bearer", "whatever"]
)
def test_session_is_ignored_when_authorization_header_is_present(
    session_cookie: str, user: Any, authorization: str
) -> None:
    data = whoami(client_with_session(session_cookie), HTTP_AUTHORIZATION=authorization)
    assert data == {"current_user": None, "request_user": None, "authenticated": False}


@pytest.mark.django_db
def test_valid_bearer_and_other_users_session_authenticate_only_the_bearer(
    session_cookie: str, user: Any, other_user: Any
) -> None:
    token = TokenManager().issue(other_user)
    response = client_with_session(session_cookie).get("/t/api/whoami", **bearer(token))
    assert response.json() == {"api_user": other_user.pk, "current_user": None}


@pytest.mark.django_db
def test_require_auth_sync_is_401_with_valid_session_and_authorization_header(
    session_cookie: str,
) -> None:
    response = client_with_session(session_cookie).get(
        "/t/require", HTTP_AUTHORIZATION="Bearer garbage"
    )
    assert response.status_code == 401


@pytest.mark.django_db
def test_post_with_session_and_bad_bearer_and_no_csrf_token_is_401_and_creates_nothing(
    session_cookie: str, user: Any
) -> None:
    from testproject.blog.models import Post

    client = client_with_session(session_cookie, enforce_csrf_checks=True)
    response = client.post(
        "/posts",
        data='{"title": "forged"}',
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer garbage",
    )
    assert response.status_code == 401
    assert not Post.objects.exists()


@pytest.mark.django_db(transaction=True)
async def test_async_current_user_is_none_when_authorization_header_is_present(
    session_cookie: str, user: Any
) -> None:
    client = AsyncClient()
    client.cookies[session_cookie_name()] = session_cookie
    assert (await client.get("/t/awhoami")).json()["current_user"] == user.pk  # control
    response = await client.get("/t/awhoami", headers={"Authorization": "Bearer garbage"})
    assert response.json() == {"current_user": None, "request_user": None, "authenticated": False}


# -- sync and async helpers from views -----------------------------------------------------------
@pytest.mark.django_db
def test_current_user_sync_from_sync_view_returns_session_user(
    session_cookie: str, user: Any
) -> None:
    assert replay(session_cookie)["current_user"] == user.pk


@pytest.mark.django_db
def test_current_user_sync_from_sync_view_returns_none_for_anonymous(client: Client) -> None:
    assert whoami(client)["current_user"] is None


@pytest.mark.django_db
def test_require_auth_sync_returns_the_user(session_cookie: str, user: Any) -> None:
    response = client_with_session(session_cookie).get("/t/require")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db
def test_require_auth_sync_anonymous_is_401_problem_json(client: Client) -> None:
    response = client.get("/t/require", HTTP_ACCEPT="application/json")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == 401


@pytest.mark.django_db(transaction=True)
async def test_current_user_from_async_view_returns_session_user(
    session_cookie: str, user: Any
) -> None:
    client = AsyncClient()
    client.cookies[session_cookie_name()] = session_cookie
    response = await client.get("/t/awhoami")
    assert response.json() == {
        "current_user": user.pk,
        "request_user": user.pk,
        "authenticated": True,
    }


@pytest.mark.django_db(transaction=True)
async def test_current_user_from_async_view_returns_none_for_anonymous() -> None:
    response = await AsyncClient().get("/t/awhoami")
    assert response.json() == {"current_user": None, "request_user": None, "authenticated": False}


@pytest.mark.django_db(transaction=True)
async def test_require_auth_from_async_view_returns_the_user(
    session_cookie: str, user: Any
) -> None:
    client = AsyncClient()
    client.cookies[session_cookie_name()] = session_cookie
    response = await client.get("/t/arequire")
    assert response.status_code == 200
    assert response.json() == {"id": user.pk}


@pytest.mark.django_db(transaction=True)
async def test_require_auth_from_async_view_anonymous_is_401_problem_json() -> None:
    response = await AsyncClient().get("/t/arequire", headers={"Accept": "application/json"})
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == 401
    assert body["title"] == "Unauthorized"


@pytest.mark.django_db(transaction=True)
async def test_alogin_and_alogout_from_async_views_follow_the_state_table(
    user: Any, password: str
) -> None:
    client = AsyncClient()
    response = await client.post("/t/alogin", {"email": user.email, "password": password})
    assert response.json() == {"ok": True, "id": user.pk}
    assert (await client.get("/t/awhoami")).json()["current_user"] == user.pk

    await client.post("/t/alogout")
    assert (await client.get("/t/awhoami")).json()["current_user"] is None


@pytest.mark.django_db(transaction=True)
async def test_alogin_with_wrong_password_stays_anonymous(user: Any) -> None:
    client = AsyncClient()
    response = await client.post("/t/alogin", {"email": user.email, "password": "wrong"})
    assert response.status_code == 401
    assert (await client.get("/t/awhoami")).json()["current_user"] is None


@pytest.mark.django_db(transaction=True)
async def test_alogin_changes_the_pre_login_cookie_value(user: Any, password: str) -> None:
    client = AsyncClient()
    client.cookies[session_cookie_name()] = "attacker-chosen-session-value"
    await client.post("/t/alogin", {"email": user.email, "password": password})
    assert client.cookies[session_cookie_name()].value != "attacker-chosen-session-value"


@pytest.mark.django_db(transaction=True)
async def test_alogout_everywhere_makes_captured_cookie_anonymous(user: Any, password: str) -> None:
    client = AsyncClient()
    await client.post("/t/alogin", {"email": user.email, "password": password})
    captured = client.cookies[session_cookie_name()].value

    await client.post("/t/alogout", {"everywhere": "1"})

    replayer = AsyncClient()
    replayer.cookies[session_cookie_name()] = captured
    assert (await replayer.get("/t/awhoami")).json()["current_user"] is None


@pytest.mark.django_db
def test_session_is_ignored_with_authorization_header_even_when_csrf_is_disabled(
    settings: Any, session_cookie: str, user: Any
) -> None:
    import copy

    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("CSRF", {})["ENABLED"] = False
    settings.APPFRAMEWORK = app
    client = client_with_session(session_cookie)
    assert whoami(client)["current_user"] == user.pk  # control
    data = whoami(client, HTTP_AUTHORIZATION="Bearer garbage")
    assert data == {"current_user": None, "request_user": None, "authenticated": False}


@pytest.mark.django_db
def test_django_login_required_view_redirects_when_authorization_header_is_present(
    session_cookie: str,
) -> None:
    response = client_with_session(session_cookie).get(
        "/t/login-required", HTTP_AUTHORIZATION="Bearer garbage"
    )
    assert response.status_code == 302
