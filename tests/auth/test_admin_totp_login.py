"""``appframework.admin``: the admin's /admin/login/ through password + TOTP, in the
admin's look, and the one INSTALLED_APPS line that makes ``admin.site`` such a site."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from tests.conftest import enable_totp

from .account_pages import HTML, URLCONF, admin_post, browser, next_step_code, pending, wrong_code

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]

LOGIN = "/admin/login/"
CODE = "/admin/login/code/"
STOCK_MESSAGE = "Please enter the correct"


@pytest.fixture
def staff(user: Any) -> Any:
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def totp_staff(staff: Any) -> dict[str, Any]:
    secret, codes = enable_totp(staff)
    return {"user": staff, "secret": secret, "codes": codes}


def _password(client: Client, user: Any, password: str, path: str = LOGIN) -> Any:
    return admin_post(client, path, {"username": user.email, "password": password})


def _in_admin(client: Client) -> bool:
    return bool(client.get("/admin/").status_code == 200)


def test_the_login_page_keeps_the_admins_look_and_labels_the_username_field() -> None:
    page = browser().get(LOGIN).content.decode()
    assert 'id="login-form"' in page
    assert "Django administration" in page
    assert re.search(r'<label for="id_username">Email:</label>', page), page


def test_staff_without_totp_signs_in_with_the_password(staff: Any, password: str) -> None:
    client = browser()
    response = _password(client, staff, password)
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert _in_admin(client)


def test_a_wrong_password_shows_the_admins_message(staff: Any) -> None:
    client = browser()
    response = _password(client, staff, "wrong")
    assert response.status_code == 200
    assert STOCK_MESSAGE in response.content.decode()
    assert not _in_admin(client)


def test_a_right_password_of_a_non_staff_user_reads_as_a_wrong_one(
    user: Any, password: str
) -> None:
    client = browser()
    response = _password(client, user, password)
    assert STOCK_MESSAGE in response.content.decode()
    assert pending(client) is None


def test_staff_with_totp_gets_the_admin_styled_code_form_not_the_stock_message(
    totp_staff: dict[str, Any], password: str
) -> None:
    client = browser()
    response = _password(client, totp_staff["user"], password)
    assert response.status_code == 302
    assert response["Location"] == CODE
    assert not _in_admin(client)
    page = client.get(CODE).content.decode()
    assert STOCK_MESSAGE not in page
    assert 'id="login-form"' in page and "Django administration" in page
    assert 'name="code"' in page
    assert 'name="password"' not in page


def test_the_right_code_opens_the_admin(
    totp_staff: dict[str, Any], password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    _password(client, totp_staff["user"], password)
    response = admin_post(client, CODE, {"code": next_step_code(monkeypatch, totp_staff["secret"])})
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert _in_admin(client)


def test_a_wrong_code_keeps_the_sign_in_pending(
    totp_staff: dict[str, Any], password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    _password(client, totp_staff["user"], password)
    response = admin_post(client, CODE, {"code": wrong_code(totp_staff["secret"])})
    assert response.status_code == 200
    page = response.content.decode()
    assert "That code is not valid." in page and 'class="errornote"' in page
    assert STOCK_MESSAGE not in page
    assert pending(client) is not None
    assert not _in_admin(client)
    code = next_step_code(monkeypatch, totp_staff["secret"])
    assert admin_post(client, CODE, {"code": code})["Location"] == "/admin/"


def test_a_code_of_a_spent_step_is_refused(
    totp_staff: dict[str, Any], password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = next_step_code(monkeypatch, totp_staff["secret"])
    first = browser()
    _password(first, totp_staff["user"], password)
    assert admin_post(first, CODE, {"code": code}).status_code == 302
    second = browser()
    _password(second, totp_staff["user"], password)
    response = admin_post(second, CODE, {"code": code})
    assert "That code is not valid." in response.content.decode()
    assert not _in_admin(second)


def test_a_recovery_code_works_once(totp_staff: dict[str, Any], password: str) -> None:
    spent = totp_staff["codes"][2]
    first = browser()
    _password(first, totp_staff["user"], password)
    assert admin_post(first, CODE, {"code": spent})["Location"] == "/admin/"
    assert _in_admin(first)
    second = browser()
    _password(second, totp_staff["user"], password)
    assert "That code is not valid." in admin_post(second, CODE, {"code": spent}).content.decode()
    assert not _in_admin(second)


def test_the_sixth_code_in_a_minute_is_a_429(totp_staff: dict[str, Any], password: str) -> None:
    client = browser()
    _password(client, totp_staff["user"], password)
    wrong = wrong_code(totp_staff["secret"])
    for _ in range(5):
        assert admin_post(client, CODE, {"code": wrong}).status_code == 200
    response = admin_post(client, CODE, {"code": totp_staff["codes"][0]})
    assert response.status_code == 429
    assert response["Retry-After"]
    assert not _in_admin(client)


def test_the_admin_login_is_throttled_with_a_429(staff: Any, password: str) -> None:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("RATE_LIMIT", {}).update(LOGIN_ATTEMPTS=2, LOGIN_WINDOW=300)
    client = browser()
    with override_settings(APPFRAMEWORK=app):
        for _ in range(2):
            _password(client, staff, "wrong")
        response = _password(client, staff, password)
    assert response.status_code == 429
    assert not _in_admin(client)


def test_the_next_of_the_admin_login_survives_the_code_form(
    totp_staff: dict[str, Any], password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    response = _password(
        client, totp_staff["user"], password, f"{LOGIN}?next=/admin/password_change/"
    )
    assert response["Location"] == CODE
    code = next_step_code(monkeypatch, totp_staff["secret"])
    assert admin_post(client, CODE, {"code": code})["Location"] == "/admin/password_change/"


def test_the_admin_login_needs_the_csrf_token(staff: Any, password: str) -> None:
    client = browser()
    response = client.post(LOGIN, {"username": staff.email, "password": password}, **HTML)
    assert response.status_code == 403
    assert not _in_admin(client)


def test_the_code_form_without_a_pending_sign_in_goes_to_the_login_page() -> None:
    assert browser().get(CODE)["Location"] == LOGIN


def test_the_installed_apps_line_makes_admin_site_the_totp_site() -> None:
    """``"appframework.admin.AdminConfig"`` in place of ``"django.contrib.admin"``."""
    from django.apps import apps
    from django.contrib.admin.sites import DefaultAdminSite

    from appframework.admin import AdminSite

    installed = [
        "appframework.admin.AdminConfig" if app == "django.contrib.admin" else app
        for app in settings.INSTALLED_APPS
    ]
    with override_settings(INSTALLED_APPS=installed):
        assert apps.get_app_config("admin").default_site == "appframework.admin.AdminSite"
        site = DefaultAdminSite()
        site._setup()
        assert isinstance(site._wrapped, AdminSite)
