"""appframework.conf.app_settings: defaults, validation, lazy imports, cache reset."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from appframework.conf import AUTO, DEFAULTS, app_settings

EXEMPT_PATH = "tests.core.test_settings.exempt_everything"


def exempt_everything(request: Any) -> bool:
    return True


def _with(**sections: dict[str, Any]) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    for section, values in sections.items():
        app.setdefault(section, {}).update(values)
    return override_settings(APPFRAMEWORK=app)


EXPECTED_DEFAULTS = {
    ("AUTH", "USERNAME_FIELD"): AUTO,
    ("AUTH", "PASSWORD_FIELD"): AUTO,
    ("AUTH", "CSRF_EXEMPT"): None,
    ("AUTH", "API_TOKEN_EXPIRES_IN"): 2592000,
    ("CSRF", "ENABLED"): True,
    ("CSRF", "COOKIE_NAME"): AUTO,
    ("CSRF", "HEADER_NAME"): "X-CSRF-Token",
    ("CSRF", "FORM_FIELD"): "_token",
    ("CSRF", "PROTECT_IF_COOKIE_PRESENT"): AUTO,
    ("SECURITY_HEADERS", "CSP"): None,
    ("SECURITY_HEADERS", "FRAME_OPTIONS"): "DENY",
    ("SECURITY_HEADERS", "CONTENT_TYPE_OPTIONS"): True,
    ("SECURITY_HEADERS", "REFERRER_POLICY"): "strict-origin-when-cross-origin",
    ("SECURITY_HEADERS", "HSTS"): False,
    ("SECURITY_HEADERS", "HSTS_MAX_AGE"): 31536000,
    ("GRAPHQL", "PATH"): "/graphql",
    ("GRAPHQL", "MAX_DEPTH"): 15,
    ("GRAPHQL", "MAX_TOKENS"): 10000,
}


@pytest.mark.parametrize("empty", [{}, None])
@pytest.mark.parametrize("section,key", list(EXPECTED_DEFAULTS), ids=lambda v: v)
def test_defaults(section: str, key: str, empty: Any) -> None:
    with override_settings(APPFRAMEWORK=empty):
        assert getattr(getattr(app_settings, section), key) == EXPECTED_DEFAULTS[(section, key)]


def test_every_default_is_readable() -> None:
    from django.utils.module_loading import import_string

    from appframework.conf import IMPORT_STRINGS

    with override_settings(APPFRAMEWORK={}):
        for section, values in DEFAULTS.items():
            for key, value in values.items():
                if (section, key) in IMPORT_STRINGS and isinstance(value, str):
                    value = import_string(value)
                assert getattr(getattr(app_settings, section), key) == value


def test_user_value_overrides_default() -> None:
    with _with(CSRF={"HEADER_NAME": "X-Other"}):
        assert app_settings.CSRF.HEADER_NAME == "X-Other"
        assert app_settings.CSRF.COOKIE_NAME == "csrf_token"


def test_unknown_section_raises_naming_it() -> None:
    with (
        override_settings(APPFRAMEWORK={"CSFR": {"ENABLED": False}}),
        pytest.raises(ImproperlyConfigured, match="CSFR"),
    ):
        app_settings.CSRF  # noqa: B018


def test_unknown_key_raises_naming_it() -> None:
    with _with(CSRF={"COOKIE": "x"}), pytest.raises(ImproperlyConfigured) as excinfo:
        app_settings.CSRF  # noqa: B018
    message = str(excinfo.value)
    assert "'COOKIE'" in message or "COOKIE;" in message or "COOKIE " in message
    assert "CSRF" in message


def test_unknown_key_in_another_section_fails_any_access() -> None:
    with (
        _with(SECURITY_HEADERS={"HSTS_PRELOAD": True}),
        pytest.raises(ImproperlyConfigured, match="HSTS_PRELOAD"),
    ):
        app_settings.AUTH  # noqa: B018


def test_section_that_is_not_a_dict_raises() -> None:
    with (
        override_settings(APPFRAMEWORK={"CSRF": ["ENABLED"]}),
        pytest.raises(ImproperlyConfigured, match="CSRF"),
    ):
        app_settings.CSRF  # noqa: B018


def test_appframework_not_a_dict_raises() -> None:
    with (
        override_settings(APPFRAMEWORK=[("CSRF", {})]),
        pytest.raises(ImproperlyConfigured, match="APPFRAMEWORK"),
    ):
        app_settings.CSRF  # noqa: B018


def test_unknown_attribute_is_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NOPE"):
        app_settings.CSRF.NOPE  # noqa: B018
    with pytest.raises(AttributeError, match="NOPE"):
        app_settings.NOPE  # noqa: B018


def test_import_string_is_resolved_to_the_callable() -> None:
    with _with(AUTH={"CSRF_EXEMPT": EXEMPT_PATH}):
        assert app_settings.AUTH.CSRF_EXEMPT is exempt_everything


def test_callable_given_directly_is_kept() -> None:
    with _with(AUTH={"CSRF_EXEMPT": exempt_everything}):
        assert app_settings.AUTH.CSRF_EXEMPT is exempt_everything


@pytest.mark.parametrize(
    "bad", ["no.such.module.predicate", "tests.core.test_settings.missing", "nodots"]
)
def test_bad_import_string_raises_only_when_accessed(bad: str) -> None:
    with _with(AUTH={"CSRF_EXEMPT": bad}):
        # other keys, even of the same section, are fine
        assert app_settings.AUTH.USERNAME_FIELD is AUTO
        assert app_settings.CSRF.ENABLED is True
        with pytest.raises(ImproperlyConfigured) as excinfo:
            app_settings.AUTH.CSRF_EXEMPT  # noqa: B018
    message = str(excinfo.value)
    assert "APPFRAMEWORK['AUTH']['CSRF_EXEMPT']" in message
    assert bad in message


def test_import_is_not_done_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    import appframework.conf as conf

    calls: list[str] = []
    real = conf.import_string

    def spy(path: str) -> Any:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(conf, "import_string", spy)
    with _with(AUTH={"CSRF_EXEMPT": EXEMPT_PATH}):
        app_settings.AUTH.USERNAME_FIELD  # noqa: B018
        assert calls == []
        app_settings.AUTH.CSRF_EXEMPT  # noqa: B018
        app_settings.AUTH.CSRF_EXEMPT  # noqa: B018
        assert calls == [EXEMPT_PATH]


def test_override_settings_is_seen_immediately() -> None:
    assert app_settings.CSRF.COOKIE_NAME == "csrf_token"  # cached now
    with _with(CSRF={"COOKIE_NAME": "xsrf"}):
        assert app_settings.CSRF.COOKIE_NAME == "xsrf"
        with _with(CSRF={"COOKIE_NAME": "inner"}):
            assert app_settings.CSRF.COOKIE_NAME == "inner"
        assert app_settings.CSRF.COOKIE_NAME == "xsrf"
    assert app_settings.CSRF.COOKIE_NAME == "csrf_token"


def test_pytest_django_settings_fixture_is_seen(settings: Any) -> None:
    assert app_settings.SECURITY_HEADERS.FRAME_OPTIONS == "DENY"
    settings.APPFRAMEWORK = {"SECURITY_HEADERS": {"FRAME_OPTIONS": "SAMEORIGIN"}}
    assert app_settings.SECURITY_HEADERS.FRAME_OPTIONS == "SAMEORIGIN"


def test_derived_values_follow_session_cookie_name() -> None:
    from appframework.security.csrf import _protect_cookie

    assert _protect_cookie() == "sessionid"
    with override_settings(SESSION_COOKIE_NAME="app_session"):
        assert _protect_cookie() == "app_session"
    assert _protect_cookie() == "sessionid"


def test_unrelated_setting_change_keeps_working() -> None:
    with override_settings(TIME_ZONE="Europe/Paris"):
        assert app_settings.CSRF.COOKIE_NAME == "csrf_token"
