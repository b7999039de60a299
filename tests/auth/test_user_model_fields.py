"""The login name and the password column follow the user model unless configured: an
``AbstractUser`` with Django's ``password`` column works with no suite settings."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.test.utils import isolate_apps

from appframework.auth import Authenticatable
from appframework.auth.checks import check_user_model
from appframework.auth.mixins import password_field_of, username_field_of
from testproject.blog.models import User


@isolate_apps("testproject.blog")
def test_an_abstract_user_logs_in_by_username_with_djangos_password_column() -> None:
    class Member(Authenticatable, AbstractUser):
        class Meta:
            app_label = "blog"

    assert username_field_of(Member) == "username"
    assert password_field_of(Member) == "password"
    member = Member(username="ada")
    member.set_password("correct horse battery staple")
    assert member.password.startswith("pbkdf2_sha256$")
    assert member.check_password("correct horse battery staple")


@isolate_apps("testproject.blog")
def test_a_model_with_password_hash_keeps_the_suites_column() -> None:
    class Account(Authenticatable, AbstractBaseUser):
        password = None  # type: ignore[assignment]
        handle = models.CharField(max_length=30, unique=True)
        password_hash = models.CharField(max_length=255, default="!")
        USERNAME_FIELD = "handle"

        class Meta:
            app_label = "blog"

    assert (username_field_of(Account), password_field_of(Account)) == ("handle", "password_hash")


def test_a_configured_field_wins(settings: Any) -> None:
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("AUTH", {}).update(USERNAME_FIELD="name", PASSWORD_FIELD="password_hash")
    settings.APPFRAMEWORK = app
    assert (username_field_of(User), password_field_of(User)) == ("name", "password_hash")


def test_the_demo_user_follows_its_model() -> None:
    assert (username_field_of(User), password_field_of(User)) == ("email", "password_hash")
    assert check_user_model() == []


@pytest.mark.parametrize("key", ["USERNAME_FIELD", "PASSWORD_FIELD"])
def test_a_configured_field_the_model_lacks_is_e004(settings: Any, key: str) -> None:
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("AUTH", {})[key] = "no_such_column"
    settings.APPFRAMEWORK = app
    errors = check_user_model()
    assert [e.id for e in errors] == ["appframework.E004"]
    assert "no_such_column" in errors[0].msg and key in errors[0].msg


@pytest.mark.django_db
def test_login_by_the_models_username_field_with_no_suite_settings(password: str) -> None:
    from appframework.auth import AuthManager

    user = User.objects.create_user("grace@example.com", password)
    assert AuthManager().attempt_sync("grace@example.com", password) == user


@isolate_apps("testproject.blog")
def test_the_suites_mixins_before_abstract_user_keep_its_meta() -> None:
    from appframework.authorization import HasRoles
    from appframework.mfa.models import MfaEnrollable

    # No Meta of their own (an app label from the module instead): the point is what
    # they inherit.
    class Member(Authenticatable, HasRoles, MfaEnrollable, AbstractUser):
        __module__ = "testproject.blog.models"

    class Plain(AbstractUser):
        __module__ = "testproject.blog.models"

    assert Member._meta.verbose_name == Plain._meta.verbose_name == "user"
    assert Member._meta.verbose_name_plural == Plain._meta.verbose_name_plural == "users"
    assert {f.name for f in Member._meta.get_fields()} >= {"roles", "mfa_secret", "password"}


@pytest.mark.django_db
def test_the_demo_models_need_no_migration() -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
