"""The demo admin's user pages: a user added there can log in; the hash is never shown.

The user model keeps its hash in ``password_hash`` (``Authenticatable``), so the admin
uses its own forms: the add page asks for the password twice (Django's password
validators apply) and stores it through ``set_password``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client, override_settings

from testproject.blog.models import User

pytestmark = pytest.mark.django_db

ADD = "/admin/blog/user/add/"
NEW_PASSWORD = "plum tree overture 42"
VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]


@pytest.fixture
def admin_client(db: Any, password: str) -> Client:
    """A superuser signed in to the admin through its login form, CSRF enforced."""
    User.objects.create_superuser("root@example.com", password)
    client = Client(enforce_csrf_checks=True)
    page = client.get("/admin/login/")
    response = client.post(
        "/admin/login/",
        {
            "username": "root@example.com",
            "password": password,
            "csrfmiddlewaretoken": _masked_token(page.content.decode()),
        },
    )
    assert response.status_code == 302, response.content[:500]
    return client


def _masked_token(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, html[:500]
    return match.group(1)


def _submit(client: Client, url: str, data: dict[str, str]) -> Any:
    """GET the admin form, then POST it back with its CSRF token, as a browser does."""
    page = client.get(url)
    assert page.status_code == 200, page.content[:500]
    return client.post(url, {**data, "csrfmiddlewaretoken": _masked_token(page.content.decode())})


def _add(client: Client, email: str, password1: str, password2: str | None = None) -> Any:
    return _submit(
        client,
        ADD,
        {
            "email": email,
            "name": "Carol",
            "password1": password1,
            "password2": password1 if password2 is None else password2,
            "_save": "Save",
        },
    )


def _demo_login(email: str, password: str) -> int:
    client = Client(enforce_csrf_checks=True)
    client.get("/login")
    return client.post(
        "/login",
        {"email": email, "password": password, "_token": client.cookies["csrf_token"].value},
    ).status_code


# -- the add page ---------------------------------------------------------------------------------
def test_add_page_asks_for_the_password_twice(admin_client: Client) -> None:
    html = admin_client.get(ADD).content.decode()
    assert 'name="password1"' in html and 'type="password"' in html
    assert 'name="password2"' in html
    assert 'name="password_hash"' not in html
    assert 'name="session_version"' not in html


def test_user_added_in_the_admin_logs_in_through_the_demo_form(admin_client: Client) -> None:
    response = _add(admin_client, "carol@Example.COM", NEW_PASSWORD)
    assert response.status_code == 302, response.content[:2000]
    carol = User.objects.get(email="carol@example.com")  # domain normalised like create_user
    assert response["Location"] == f"/admin/blog/user/{carol.pk}/change/"
    assert carol.name == "Carol"
    assert carol.has_usable_password()
    assert NEW_PASSWORD not in carol.password_hash
    assert _demo_login("carol@example.com", NEW_PASSWORD) == 302
    assert _demo_login("carol@example.com", "not the password") == 401


def test_mismatched_confirmation_is_refused(admin_client: Client) -> None:
    response = _add(admin_client, "carol@example.com", NEW_PASSWORD, "something else 42")
    assert response.status_code == 200
    assert "The two password fields didn" in response.content.decode()
    assert not User.objects.filter(email="carol@example.com").exists()


def test_a_password_is_required(admin_client: Client) -> None:
    response = _add(admin_client, "carol@example.com", "", "")
    assert response.status_code == 200
    assert not User.objects.filter(email="carol@example.com").exists()


@override_settings(AUTH_PASSWORD_VALIDATORS=VALIDATORS)
@pytest.mark.parametrize(
    ("weak", "message"),
    [("short1", "too short"), ("password123", "too common")],
)
def test_configured_password_validators_apply(
    admin_client: Client, weak: str, message: str
) -> None:
    response = _add(admin_client, "carol@example.com", weak)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not User.objects.filter(email="carol@example.com").exists()


def test_demo_settings_configure_django_validators() -> None:
    from django.conf import settings

    names = {v["NAME"].rsplit(".", 1)[1] for v in settings.AUTH_PASSWORD_VALIDATORS}
    assert {"MinimumLengthValidator", "CommonPasswordValidator"} <= names


def test_an_address_differing_only_in_case_is_refused(admin_client: Client, user: Any) -> None:
    response = _add(admin_client, user.email.upper(), NEW_PASSWORD)
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    assert User.objects.filter(email__iexact=user.email).count() == 1


# -- the change page --------------------------------------------------------------------------------
def test_change_page_never_shows_the_hash(admin_client: Client, user: Any) -> None:
    html = admin_client.get(f"/admin/blog/user/{user.pk}/change/").content.decode()
    assert user.password_hash not in html
    assert "pbkdf2" not in html
    assert 'name="password_hash"' not in html
    assert 'name="session_version"' not in html
    assert "set." in html
    assert 'href="../password/"' in html


def test_change_page_says_when_the_password_is_unusable(admin_client: Client, user: Any) -> None:
    user.set_unusable_password()
    user.save()
    html = admin_client.get(f"/admin/blog/user/{user.pk}/change/").content.decode()
    assert "unusable" in html
    assert "Set password" in html


def test_saving_the_change_page_keeps_the_password(
    admin_client: Client, user: Any, password: str
) -> None:
    before = user.password_hash
    response = _submit(
        admin_client,
        f"/admin/blog/user/{user.pk}/change/",
        {"email": user.email, "name": "Alice Renamed", "is_active": "on", "_save": "Save"},
    )
    assert response.status_code == 302, response.content[:2000]
    user.refresh_from_db()
    assert user.name == "Alice Renamed"
    assert user.password_hash == before
    assert _demo_login(user.email, password) == 302


def test_change_password_page_sets_a_new_password(
    admin_client: Client, user: Any, password: str
) -> None:
    response = _submit(
        admin_client,
        f"/admin/blog/user/{user.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content[:2000]
    assert _demo_login(user.email, NEW_PASSWORD) == 302
    assert _demo_login(user.email, password) == 401
