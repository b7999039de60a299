"""System checks for missing middleware; the authorized decorator's 401-404-403 order."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.checks import check_middleware
from testproject.blog.models import Post
from tests.conftest import login_client

CSRF = "appframework.security.CsrfMiddleware"
AUTH = "django.contrib.auth.middleware.AuthenticationMiddleware"


def _ids(settings: Any) -> set[str]:
    return {m.id for m in check_middleware()}


def test_auth_provider_without_csrf_middleware_is_error_e006(settings: Any) -> None:
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != CSRF]
    assert "appframework.E006" in _ids(settings)


def test_disabled_csrf_without_its_middleware_is_no_error(settings: Any) -> None:
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != CSRF]
    settings.APPFRAMEWORK = {"CSRF": {"ENABLED": False}}
    assert "appframework.E006" not in _ids(settings)


def test_auth_provider_without_authentication_middleware_is_warning_w004(settings: Any) -> None:
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != AUTH]
    assert "appframework.W004" in _ids(settings)


def test_project_settings_raise_neither(settings: Any) -> None:
    assert not {"appframework.E006", "appframework.W004"} & _ids(settings)


@pytest.mark.django_db
def test_authorized_decorator_answers_401_to_anonymous_even_for_a_missing_object() -> None:
    # Login is checked before the lookup: anonymous clients cannot probe which ids exist.
    assert Client().post("/posts/999999/publish").status_code == 401


@pytest.mark.django_db
def test_authorized_decorator_answers_404_to_a_user_for_a_missing_object(user: Any) -> None:
    assert login_client(Client(), user).post("/posts/999999/publish").status_code == 404


@pytest.mark.django_db
def test_authorized_decorator_answers_403_for_an_existing_object_denied(user: Any) -> None:
    post = Post.objects.create(title="t", author=user)
    assert login_client(Client(), user).post(f"/posts/{post.pk}/publish").status_code == 403
