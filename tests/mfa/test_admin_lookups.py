"""The admin never filters a changelist on the TOTP secret, the recovery-code hashes or
the password column: a staff user could otherwise read them a character at a time."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.test import Client

from appframework.mfa.admin import HiddenFieldsAdminMixin, lookup_touches_secret
from appframework.mfa.checks import check_hidden_fields
from testproject.blog.models import User
from tests.conftest import enable_totp

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(password: str) -> Client:
    User.objects.create_user("staff@example.com", password, is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(
        User.objects.get(email="staff@example.com"), backend="appframework.auth.AuthManager"
    )
    return client


@pytest.mark.parametrize(
    "query",
    [
        "mfa_secret__startswith=C",
        "mfa_secret=ABC",
        "mfa_recovery_codes__contains=x",
        "mfa_secret__regex=^[A-M]",
        "password_hash__startswith=pbkdf2",
    ],
)
def test_filtering_users_on_a_secret_is_refused(staff: Client, user: Any, query: str) -> None:
    secret, _ = enable_totp(user)
    response = staff.get(f"/admin/blog/user/?{query}&email={user.email}")
    assert response.status_code == 400
    assert secret.encode() not in response.content


def test_the_secret_cannot_be_recovered_one_character_at_a_time(staff: Client, user: Any) -> None:
    # The attack: whichever first character keeps the user listed is the secret's.
    enable_totp(user)
    listed = [
        c
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
        if user.email.encode()
        in staff.get(f"/admin/blog/user/?mfa_secret__startswith={c}&email={user.email}").content
    ]
    assert listed == []


def test_a_lookup_across_a_relation_to_the_user_is_refused(staff: Client, user: Any) -> None:
    enable_totp(user)
    response = staff.get("/admin/blog/post/?author__mfa_secret__startswith=A")
    assert response.status_code == 400


def test_ordinary_filters_still_work(staff: Client, user: Any) -> None:
    response = staff.get(f"/admin/blog/user/?is_staff__exact=0&email={user.email}")
    assert response.status_code == 200
    assert user.email.encode() in response.content


@pytest.mark.parametrize(
    ("lookup", "secret"),
    [
        ("mfa_secret", True),
        ("author__mfa_recovery_codes__len", True),
        ("password_hash__startswith", True),
        ("password", True),
        ("email__startswith", False),
        ("mfa_enabled", False),
    ],
)
def test_lookup_touches_secret(lookup: str, secret: bool) -> None:
    assert lookup_touches_secret(lookup) is secret


def test_check_e010_fails_for_a_user_admin_that_lets_secrets_be_filtered() -> None:
    from testproject.blog.admin import UserAdmin

    class PlainUserAdmin(admin.ModelAdmin):  # what a project writes before adopting
        pass

    site = admin.site
    original = site._registry[User]
    site._registry[User] = PlainUserAdmin(User, site)
    try:
        errors = [e for e in check_hidden_fields() if e.id == "appframework.E010"]
    finally:
        site._registry[User] = original
    assert any("filtered on mfa_secret" in e.msg for e in errors), errors
    assert isinstance(original, HiddenFieldsAdminMixin) and isinstance(original, UserAdmin)
    assert not [e for e in check_hidden_fields() if e.id == "appframework.E010"]
