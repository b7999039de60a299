"""{% csrf_token %}, get_token() and the admin login keep working with the suite's CSRF."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.middleware.csrf import _unmask_cipher_token
from django.test import Client, override_settings

from testproject.blog.models import User

from .helpers import COOKIE, JSON_ACCEPT, URLS, anonymous_session_cookie

pytestmark = [pytest.mark.urls(URLS)]


@pytest.fixture
def staff(db: Any, password: str) -> User:
    return User.objects.create_user("admin@example.com", password, is_staff=True, is_superuser=True)


@pytest.fixture
def checked_everywhere() -> Any:
    """Every unsafe request is checked, session cookie or not."""
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("CSRF", {})["PROTECT_IF_COOKIE_PRESENT"] = None
    with override_settings(APPFRAMEWORK=app):
        yield


def _middleware_token(html: bytes) -> str:
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, "no csrfmiddlewaretoken in the page"
    return match.group(1).decode()


def _session_user_id(client: Client) -> Any:
    morsel = client.cookies.get(settings.SESSION_COOKIE_NAME)
    if morsel is None or not morsel.value:
        return None
    return SessionStore(session_key=morsel.value).get(SESSION_KEY)


def test_admin_login_form_renders_csrfmiddlewaretoken(csrf_client: Client, db: Any) -> None:
    response = csrf_client.get("/admin/login/")
    assert response.status_code == 200
    masked = _middleware_token(response.content)
    assert len(masked) == 64
    assert _unmask_cipher_token(masked) == csrf_client.cookies[COOKIE].value


def test_admin_login_page_sets_one_csrf_cookie(csrf_client: Client, db: Any) -> None:
    response = csrf_client.get("/admin/login/")
    assert set(response.cookies) & {COOKIE, "csrftoken"} == {COOKIE}
    assert not response.cookies[COOKIE]["httponly"]


def test_admin_login_with_masked_token_logs_in(
    csrf_client: Client, staff: User, password: str, checked_everywhere: Any
) -> None:
    page = csrf_client.get("/admin/login/?next=/admin/")
    masked = _middleware_token(page.content)
    response = csrf_client.post(
        "/admin/login/?next=/admin/",
        {
            "username": staff.email,
            "password": password,
            "csrfmiddlewaretoken": masked,
            "next": "/admin/",
        },
    )
    assert response.status_code == 302, response.content[:500]
    assert response["Location"] == "/admin/"
    assert _session_user_id(csrf_client) == str(staff.pk)
    assert csrf_client.get("/admin/").status_code == 200


def test_admin_login_with_anonymous_session_and_masked_token_logs_in(
    csrf_client: Client, staff: User, password: str
) -> None:
    anonymous_session_cookie(csrf_client)
    masked = _middleware_token(csrf_client.get("/admin/login/").content)
    response = csrf_client.post(
        "/admin/login/",
        {"username": staff.email, "password": password, "csrfmiddlewaretoken": masked},
    )
    assert response.status_code == 302
    assert _session_user_id(csrf_client) == str(staff.pk)


@pytest.mark.parametrize("token", [None, "x" * 64, "A" * 32])
def test_admin_login_without_a_good_token_is_refused(
    csrf_client: Client, staff: User, password: str, checked_everywhere: Any, token: str | None
) -> None:
    csrf_client.get("/admin/login/")
    data = {"username": staff.email, "password": password}
    if token is not None:
        data["csrfmiddlewaretoken"] = token
    response = csrf_client.post("/admin/login/", data)
    assert response.status_code == 403
    assert _session_user_id(csrf_client) is None


def test_admin_login_with_a_token_masked_for_another_cookie_is_refused(
    csrf_client: Client, staff: User, password: str, checked_everywhere: Any
) -> None:
    other = Client(enforce_csrf_checks=True)
    foreign = _middleware_token(other.get("/admin/login/").content)
    csrf_client.get("/admin/login/")
    response = csrf_client.post(
        "/admin/login/",
        {"username": staff.email, "password": password, "csrfmiddlewaretoken": foreign},
    )
    assert response.status_code == 403


def test_admin_logout_form_works_after_login(
    csrf_client: Client, staff: User, password: str
) -> None:
    masked = _middleware_token(csrf_client.get("/admin/login/").content)
    csrf_client.post(
        "/admin/login/",
        {"username": staff.email, "password": password, "csrfmiddlewaretoken": masked},
    )
    index = csrf_client.get("/admin/")
    assert index.status_code == 200
    masked_after = _middleware_token(index.content)
    assert _unmask_cipher_token(masked_after) == csrf_client.cookies[COOKIE].value
    assert csrf_client.post("/admin/logout/", {}).status_code == 403
    response = csrf_client.post("/admin/logout/", {"csrfmiddlewaretoken": masked_after})
    # Django's admin logout follows LOGOUT_REDIRECT_URL (the demo's home page).
    assert (response.status_code, response["Location"]) == (302, "/")
    assert _session_user_id(csrf_client) is None


def test_get_token_returns_masked_form_of_the_same_token(csrf_client: Client) -> None:
    response = csrf_client.get("/sec/token")
    body = response.json()
    assert len(body["django"]) == 64
    assert body["django"] != body["token"]
    assert (
        _unmask_cipher_token(body["django"]) == body["token"] == csrf_client.cookies[COOKIE].value
    )


def test_get_token_masks_differently_each_time(csrf_client: Client) -> None:
    first = csrf_client.get("/sec/token").json()
    second = csrf_client.get("/sec/token").json()
    assert first["token"] == second["token"]
    assert first["django"] != second["django"]
    assert _unmask_cipher_token(first["django"]) == _unmask_cipher_token(second["django"])


def test_masked_token_in_header_is_accepted(csrf_client: Client, checked_everywhere: Any) -> None:
    masked = csrf_client.get("/sec/token").json()["django"]
    response = csrf_client.post(
        "/sec/echo", {}, content_type="application/json", HTTP_X_CSRF_TOKEN=masked
    )
    assert response.status_code == 200


def test_demo_page_meta_tag_carries_a_usable_token(
    csrf_client: Client, user: Any, checked_everywhere: Any
) -> None:
    page = csrf_client.get("/login")
    match = re.search(rb'<meta name="csrf-token" content="([^"]+)">', page.content)
    assert match
    response = csrf_client.post(
        "/sec/echo", {}, content_type="application/json", HTTP_X_CSRF_TOKEN=match.group(1).decode()
    )
    assert response.status_code == 200


def test_plain_test_client_skips_csrf_like_django(client: Client, user: Any) -> None:
    from tests.conftest import login_client

    login_client(client, user)
    response = client.post("/sec/echo", {}, content_type="application/json", **JSON_ACCEPT)
    assert response.status_code == 200


# -- Django's own CSRF names are honoured -----------------------------------------------------
@pytest.fixture
def djangos_cookie_name(settings: Any) -> str:
    """A project that never named the suite's cookie and keeps Django's ``csrftoken``."""
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.get("CSRF", {}).pop("COOKIE_NAME", None)
    settings.APPFRAMEWORK = app
    settings.CSRF_COOKIE_NAME = "csrftoken"
    return "csrftoken"


def test_the_suites_cookie_is_djangos_csrf_cookie_name(djangos_cookie_name: str, db: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.get("/admin/login/")
    assert set(response.cookies) & {COOKIE, djangos_cookie_name} == {djangos_cookie_name}


def test_javascript_sending_x_csrftoken_from_djangos_cookie_passes(
    djangos_cookie_name: str, user: Any
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user, backend="appframework.auth.AuthManager")
    client.get("/sec/token-only")
    token = client.cookies[djangos_cookie_name].value
    ok = client.post("/sec/echo", b"{}", content_type="application/json", HTTP_X_CSRFTOKEN=token)
    bare = client.post("/sec/echo", b"{}", content_type="application/json", **JSON_ACCEPT)
    assert (ok.status_code, bare.status_code) == (200, 403)


def test_apply_environment_follows_a_projects_own_csrf_cookie_name() -> None:
    from appframework.env import apply_environment

    settings_module = apply_environment({"CSRF_COOKIE_NAME": "csrftoken"}, environ={})
    assert settings_module["APPFRAMEWORK"]["CSRF"]["COOKIE_NAME"] == "csrftoken"
    assert apply_environment({}, environ={})["CSRF_COOKIE_NAME"] == "csrf_token"
