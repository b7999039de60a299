"""System checks appframework.E001-E005, W001-W003 (docs/checks.md)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.conf import settings
from django.core import checks
from django.test import override_settings

from appframework.auth.checks import check_backend, check_user_model
from appframework.checks import check_middleware, check_secret_key, check_settings
from tests.system_checks import run_checks

OUR_IDS = {
    "appframework.E001",
    "appframework.E002",
    "appframework.E003",
    "appframework.E004",
    "appframework.E005",
    "appframework.W001",
    "appframework.W002",
    "appframework.W003",
}

# The demo's (and so the tests') session middleware: the headless one, a subclass of
# Django's, which the checks accept in its place.
SESSION = "appframework.headless.middleware.SessionMiddleware"
CSRF = "appframework.security.CsrfMiddleware"
DJANGO_CSRF = "django.middleware.csrf.CsrfViewMiddleware"
ERRORS = "appframework.middleware.ErrorMiddleware"


def _app(**sections: dict[str, Any]) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    for section, values in sections.items():
        app.setdefault(section, {}).update(values)
    return override_settings(APPFRAMEWORK=app)


def _middleware(transform: Any) -> Any:
    return override_settings(MIDDLEWARE=transform(list(settings.MIDDLEWARE)))


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages if m.id in OUR_IDS]


def _all_ids() -> list[str]:
    return _ids(run_checks())


def _assert_hinted(messages: list[checks.CheckMessage]) -> None:
    for message in messages:
        assert message.hint, message
        assert message.msg, message


def not_callable_target() -> None:
    pass


NOT_CALLABLE = {"a": "dict"}


# -- clean settings ----------------------------------------------------------------------
def test_clean_test_settings_produce_none() -> None:
    assert _all_ids() == []


@pytest.mark.parametrize(
    "check", [check_secret_key, check_settings, check_middleware, check_backend, check_user_model]
)
def test_each_check_is_clean_on_test_settings(check: Any) -> None:
    assert check() == []


def test_checks_are_registered() -> None:
    registered = checks.registry.registry.get_checks()
    for check in (
        check_secret_key,
        check_settings,
        check_middleware,
        check_backend,
        check_user_model,
    ):
        assert check in registered, check.__name__


# -- E001 ------------------------------------------------------------------------------
def test_e001_sessions_without_secret() -> None:
    with override_settings(SECRET_KEY=""):
        messages = check_secret_key()
        assert "appframework.E001" in _all_ids()
    assert _ids(messages) == ["appframework.E001"]
    assert isinstance(messages[0], checks.Error)
    _assert_hinted(messages)


def test_e001_not_raised_without_sessions() -> None:
    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with override_settings(SECRET_KEY="", INSTALLED_APPS=apps, MIDDLEWARE=[ERRORS]):
        assert check_secret_key() == []


def test_e001_with_session_middleware_only() -> None:
    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with override_settings(SECRET_KEY="", INSTALLED_APPS=apps, MIDDLEWARE=[SESSION]):
        assert _ids(check_secret_key()) == ["appframework.E001"]


# -- E002 ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["abc", 0, -1, 1.5, True, None, "3600"])
def test_e002_bad_api_token_expires_in(value: Any) -> None:
    with _app(AUTH={"API_TOKEN_EXPIRES_IN": value}):
        messages = check_settings()
        assert "appframework.E002" in _all_ids()
    assert _ids(messages) == ["appframework.E002"]
    assert "API_TOKEN_EXPIRES_IN" in messages[0].msg
    _assert_hinted(messages)


def test_e002_bad_csrf_exempt_path() -> None:
    with _app(AUTH={"CSRF_EXEMPT": "no.such.module.predicate"}):
        messages = check_settings()
        assert "appframework.E002" in _all_ids()
    assert _ids(messages) == ["appframework.E002"]
    assert "APPFRAMEWORK['AUTH']['CSRF_EXEMPT']" in messages[0].msg
    assert "no.such.module.predicate" in messages[0].msg
    _assert_hinted(messages)


def test_e002_csrf_exempt_not_callable() -> None:
    with _app(AUTH={"CSRF_EXEMPT": "tests.core.test_checks.NOT_CALLABLE"}):
        messages = check_settings()
    assert _ids(messages) == ["appframework.E002"]
    assert "CSRF_EXEMPT" in messages[0].msg
    _assert_hinted(messages)


def test_e002_good_csrf_exempt_path_is_clean() -> None:
    with _app(AUTH={"CSRF_EXEMPT": "tests.core.test_checks.not_callable_target"}):
        assert check_settings() == []


def test_e002_unknown_key() -> None:
    with _app(CSRF={"COOKIE": "x"}):
        messages = check_settings()
    assert _ids(messages) == ["appframework.E002"]
    assert "COOKIE" in messages[0].msg
    _assert_hinted(messages)


def test_e002_bad_password_iterations() -> None:
    with _app(AUTH={"PASSWORD_ITERATIONS": -1}):
        messages = check_settings()
    assert _ids(messages) == ["appframework.E002"]
    assert "PASSWORD_ITERATIONS" in messages[0].msg


# -- E003 ------------------------------------------------------------------------------
def test_e003_auth_manager_missing_from_backends() -> None:
    with override_settings(AUTHENTICATION_BACKENDS=["django.contrib.auth.backends.ModelBackend"]):
        messages = check_backend()
        assert "appframework.E003" in _all_ids()
    assert _ids(messages) == ["appframework.E003"]
    assert "AuthManager" in messages[0].msg
    _assert_hinted(messages)


def test_e003_unimportable_backend_does_not_crash() -> None:
    with override_settings(AUTHENTICATION_BACKENDS=["no.such.Backend"]):
        assert _ids(check_backend()) == ["appframework.E003"]


def test_e003_subclass_of_auth_manager_is_fine() -> None:
    with override_settings(
        AUTHENTICATION_BACKENDS=[
            "django.contrib.auth.backends.ModelBackend",
            "tests.core.test_checks.MyManager",
        ]
    ):
        assert check_backend() == []


from appframework.auth import AuthManager  # noqa: E402


class MyManager(AuthManager):
    pass


# -- E004 ------------------------------------------------------------------------------
def test_e004_username_field_names_missing_column() -> None:
    with _app(AUTH={"USERNAME_FIELD": "nickname"}):
        messages = check_user_model()
        assert "appframework.E004" in _all_ids()
    assert _ids(messages) == ["appframework.E004"]
    assert "nickname" in messages[0].msg
    assert "USERNAME_FIELD" in messages[0].msg
    _assert_hinted(messages)


def test_e004_password_field_names_missing_column() -> None:
    with _app(AUTH={"PASSWORD_FIELD": "pw"}):
        messages = check_user_model()
    assert _ids(messages) == ["appframework.E004"]
    assert "'pw'" in messages[0].msg
    _assert_hinted(messages)


# -- E005 ------------------------------------------------------------------------------
def test_e005_csrf_before_session() -> None:
    def swap(mw: list[str]) -> list[str]:
        mw.remove(CSRF)
        mw.insert(mw.index(SESSION), CSRF)
        return mw

    with _middleware(swap):
        messages = check_middleware()
        assert "appframework.E005" in _all_ids()
    assert _ids(messages) == ["appframework.E005"]
    assert isinstance(messages[0], checks.Error)
    _assert_hinted(messages)


def test_e005_session_middleware_missing() -> None:
    with _middleware(lambda mw: [m for m in mw if m != SESSION]):
        assert "appframework.E005" in _ids(check_middleware())


def test_e005_accepts_djangos_own_session_middleware_too() -> None:
    def djangos(mw: list[str]) -> list[str]:
        return [
            "django.contrib.sessions.middleware.SessionMiddleware" if m == SESSION else m
            for m in mw
        ]

    with _middleware(djangos):
        assert "appframework.E005" not in _ids(check_middleware())


def test_e005_csrf_middleware_by_its_module_path() -> None:
    def swap(mw: list[str]) -> list[str]:
        mw.remove(CSRF)
        mw.insert(0, "appframework.security.csrf.CsrfMiddleware")
        return mw

    with _middleware(swap):
        assert "appframework.E005" in _ids(check_middleware())


# -- W001 ------------------------------------------------------------------------------
def test_w001_django_csrf_also_installed() -> None:
    with _middleware(lambda mw: [*mw, DJANGO_CSRF]):
        messages = check_middleware()
        assert "appframework.W001" in _all_ids()
    assert _ids(messages) == ["appframework.W001"]
    assert isinstance(messages[0], checks.Warning)
    _assert_hinted(messages)


# -- W002 ------------------------------------------------------------------------------
def test_w002_error_middleware_missing() -> None:
    with _middleware(lambda mw: [m for m in mw if m != ERRORS]):
        messages = check_middleware()
        assert "appframework.W002" in _all_ids()
    assert _ids(messages) == ["appframework.W002"]
    assert isinstance(messages[0], checks.Warning)
    _assert_hinted(messages)


# -- W003 ------------------------------------------------------------------------------
def test_w003_csrf_cookie_name_differs() -> None:
    with override_settings(CSRF_COOKIE_NAME="csrftoken"):
        messages = check_middleware()
        assert "appframework.W003" in _all_ids()
    assert _ids(messages) == ["appframework.W003"]
    assert "csrftoken" in messages[0].msg
    _assert_hinted(messages)


def test_w003_appframework_cookie_name_differs() -> None:
    with _app(CSRF={"COOKIE_NAME": "xsrf"}):
        assert _ids(check_middleware()) == ["appframework.W003"]


def test_w003_quiet_when_both_agree() -> None:
    with _app(CSRF={"COOKIE_NAME": "xsrf"}), override_settings(CSRF_COOKIE_NAME="xsrf"):
        assert check_middleware() == []


def test_w003_not_raised_without_csrf_middleware() -> None:
    with (
        override_settings(CSRF_COOKIE_NAME="csrftoken"),
        _middleware(lambda mw: [m for m in mw if m != CSRF]),
    ):
        assert "appframework.W003" not in _ids(check_middleware())


# -- every hint points at the docs ----------------------------------------------------------------
def test_hints_point_to_docs() -> None:
    with override_settings(SECRET_KEY=""):
        (message,) = check_secret_key()
    assert "docs/checks.md" in message.hint
