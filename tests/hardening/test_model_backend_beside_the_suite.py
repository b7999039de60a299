"""Django's ``ModelBackend`` listed beside the suite's backend, as many existing projects
keep it: it never signs a user with a second factor in with the password alone, and
``check`` names it when it stands before the suite's backend."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY, authenticate
from django.test import Client, override_settings

from appframework.auth.checks import check_backend_order
from tests.conftest import enable_totp

pytestmark = pytest.mark.django_db

SUITE = "appframework.auth.AuthManager"
GATE = "appframework.authorization.GateBackend"
MODEL = "django.contrib.auth.backends.ModelBackend"


@pytest.mark.parametrize(
    "backends", [[SUITE, GATE, MODEL], [SUITE, MODEL]], ids=["after-gate", "after-suite"]
)
def test_djangos_login_view_with_modelbackend_after_the_suites_refuses_a_totp_user(
    user: Any, password: str, backends: list[str]
) -> None:
    """The reported request: Django's LoginView (here DRF's browsable-API login) with the
    right password of a user with TOTP on → 302 and signed in, no code asked."""
    enable_totp(user)
    client = Client()
    with override_settings(AUTHENTICATION_BACKENDS=backends):
        response = client.post(
            "/api/drf/auth/login/", {"username": user.email, "password": password}
        )
        assert response.status_code == 200  # the form again, "enter a correct ..."
        assert SESSION_KEY not in client.session
        assert authenticate(username=user.email, password=password) is None


def test_a_user_without_a_second_factor_still_signs_in_through_djangos_login_view(
    user: Any, password: str
) -> None:
    with override_settings(AUTHENTICATION_BACKENDS=[SUITE, GATE, MODEL]):
        client = Client()
        response = client.post(
            "/api/drf/auth/login/", {"username": user.email, "password": password}
        )
        assert response.status_code == 302
        assert client.session[BACKEND_SESSION_KEY] == SUITE


def test_a_wrong_password_is_not_tried_again_by_the_backends_after_the_suites(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.contrib.auth.backends import ModelBackend

    asked: list[str] = []
    monkeypatch.setattr(
        ModelBackend, "authenticate", lambda self, request, **kw: asked.append("model")
    )
    with override_settings(AUTHENTICATION_BACKENDS=[SUITE, MODEL]):
        assert authenticate(username=user.email, password="wrong") is None
        assert authenticate(username="nobody@example.com", password="wrong") is None
    assert asked == []


def test_a_session_from_before_the_suite_stays_signed_in_with_modelbackend_after_it(
    user: Any,
) -> None:
    """Adoption: sessions created by Django's own login name ModelBackend; listed after
    the suite's backend it keeps them, and asks nothing about passwords."""
    client = Client()
    client.force_login(user, backend=MODEL)
    with override_settings(AUTHENTICATION_BACKENDS=[SUITE, GATE, MODEL]):
        assert client.get("/account/token", HTTP_ACCEPT="text/html").status_code == 200


def test_check_names_a_modelbackend_listed_before_the_suites() -> None:
    with override_settings(AUTHENTICATION_BACKENDS=[MODEL, SUITE, GATE]):
        errors = check_backend_order()
    assert [e.id for e in errors] == ["appframework.E009"]
    assert MODEL in errors[0].msg


@pytest.mark.parametrize("backends", [[SUITE, GATE, MODEL], [SUITE, GATE], [GATE]])
def test_check_passes_modelbackend_after_the_suites_or_none_at_all(backends: list[str]) -> None:
    with override_settings(AUTHENTICATION_BACKENDS=backends):
        assert check_backend_order() == []
