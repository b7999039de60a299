"""appframework.env.apply_environment: the environment variable table (docs/settings.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from appframework.env import ENVIRONMENT_VARIABLES, apply_environment

ROOT = Path(__file__).resolve().parents[2]

SPEC_VARIABLES = [
    "APP_SECRET_KEY",
    "SESSION_COOKIE_NAME",
    "SESSION_MAX_AGE",
    "SESSION_HTTPS_ONLY",
    "CSRF_ENABLED",
    "CSRF_COOKIE_NAME",
    "CSRF_HEADER_NAME",
    "API_TOKEN_EXPIRES_IN",
    "SECURITY_HEADERS_CSP",
    "SECURITY_HEADERS_FRAME_OPTIONS",
    "SECURITY_HEADERS_CONTENT_TYPE_OPTIONS",
    "SECURITY_HEADERS_REFERRER_POLICY",
    "SECURITY_HEADERS_HSTS",
    "SECURITY_HEADERS_HSTS_MAX_AGE",
]


def apply(environ: dict[str, str] | None = None, **namespace: Any) -> dict[str, Any]:
    ns: dict[str, Any] = dict(namespace)
    apply_environment(ns, environ or {})
    return ns


def get(ns: dict[str, Any], target: str | tuple[str, str]) -> Any:
    if isinstance(target, tuple):
        return ns["APPFRAMEWORK"][target[0]][target[1]]
    return ns[target]


def test_every_spec_variable_is_handled() -> None:
    assert set(SPEC_VARIABLES) <= set(ENVIRONMENT_VARIABLES)


# variable, [targets], value when unset, raw value when set, parsed value when set
CASES: list[tuple[str, list[Any], Any, str, Any]] = [
    ("SESSION_MAX_AGE", ["SESSION_COOKIE_AGE"], 1209600, "3600", 3600),
    ("SESSION_HTTPS_ONLY", ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"], False, "true", True),
    ("CSRF_ENABLED", [("CSRF", "ENABLED")], True, "false", False),
    (
        "CSRF_COOKIE_NAME",
        [("CSRF", "COOKIE_NAME"), "CSRF_COOKIE_NAME"],
        "csrf_token",
        "xsrf",
        "xsrf",
    ),
    ("CSRF_HEADER_NAME", [("CSRF", "HEADER_NAME")], "X-CSRF-Token", "X-XSRF-Token", "X-XSRF-Token"),
    ("API_TOKEN_EXPIRES_IN", [("AUTH", "API_TOKEN_EXPIRES_IN")], 2592000, "600", 600),
    (
        "SECURITY_HEADERS_FRAME_OPTIONS",
        [("SECURITY_HEADERS", "FRAME_OPTIONS")],
        "DENY",
        "SAMEORIGIN",
        "SAMEORIGIN",
    ),
    (
        "SECURITY_HEADERS_CONTENT_TYPE_OPTIONS",
        [("SECURITY_HEADERS", "CONTENT_TYPE_OPTIONS")],
        True,
        "false",
        False,
    ),
    (
        "SECURITY_HEADERS_REFERRER_POLICY",
        [("SECURITY_HEADERS", "REFERRER_POLICY")],
        "strict-origin-when-cross-origin",
        "no-referrer",
        "no-referrer",
    ),
    ("SECURITY_HEADERS_HSTS", [("SECURITY_HEADERS", "HSTS")], False, "true", True),
    ("SECURITY_HEADERS_HSTS_MAX_AGE", [("SECURITY_HEADERS", "HSTS_MAX_AGE")], 31536000, "60", 60),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("variable,targets,default,raw,parsed", CASES, ids=IDS)
def test_default_when_unset(
    variable: str, targets: list[Any], default: Any, raw: str, parsed: Any
) -> None:
    ns = apply({})
    for target in targets:
        assert get(ns, target) == default, target


@pytest.mark.parametrize("variable,targets,default,raw,parsed", CASES, ids=IDS)
def test_value_when_set(
    variable: str, targets: list[Any], default: Any, raw: str, parsed: Any
) -> None:
    ns = apply({variable: raw})
    for target in targets:
        assert get(ns, target) == parsed, target


def test_app_secret_key_unset_leaves_secret_key_unset() -> None:
    assert "SECRET_KEY" not in apply({})


def test_app_secret_key_set_becomes_secret_key() -> None:
    assert apply({"APP_SECRET_KEY": "s3cret-value"})["SECRET_KEY"] == "s3cret-value"


def test_app_secret_key_empty_is_an_error() -> None:
    with pytest.raises(ImproperlyConfigured, match="APP_SECRET_KEY"):
        apply({"APP_SECRET_KEY": ""})


def test_session_cookie_name_unset_leaves_django_default() -> None:
    assert "SESSION_COOKIE_NAME" not in apply({})


def test_session_cookie_name_set() -> None:
    assert apply({"SESSION_COOKIE_NAME": "app_session"})["SESSION_COOKIE_NAME"] == "app_session"


def test_csp_unset_means_no_csp() -> None:
    ns = apply({})
    assert ns["APPFRAMEWORK"].get("SECURITY_HEADERS", {}).get("CSP") is None


def test_csp_set() -> None:
    ns = apply({"SECURITY_HEADERS_CSP": "default-src 'self'"})
    assert ns["APPFRAMEWORK"]["SECURITY_HEADERS"]["CSP"] == "default-src 'self'"


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("on", True),
        (" True ", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
    ],
)
def test_boolean_spellings(raw: str, expected: bool) -> None:
    assert apply({"SESSION_HTTPS_ONLY": raw})["SESSION_COOKIE_SECURE"] is expected


BAD = [
    ("SESSION_MAX_AGE", "abc"),
    ("SESSION_MAX_AGE", "-1"),
    ("SESSION_MAX_AGE", "1.5"),
    ("SESSION_MAX_AGE", ""),
    ("SESSION_HTTPS_ONLY", "maybe"),
    ("CSRF_ENABLED", "maybe"),
    ("CSRF_ENABLED", ""),
    ("API_TOKEN_EXPIRES_IN", "abc"),
    ("API_TOKEN_EXPIRES_IN", "30d"),
    ("SECURITY_HEADERS_CONTENT_TYPE_OPTIONS", "nosniff"),
    ("SECURITY_HEADERS_HSTS", "2"),
    ("SECURITY_HEADERS_HSTS_MAX_AGE", "1y"),
    ("SECURITY_HEADERS_HSTS_MAX_AGE", "-5"),
    ("CSRF_COOKIE_NAME", "a b"),
    ("CSRF_COOKIE_NAME", ""),
    ("CSRF_HEADER_NAME", "X-CSRF;Token"),
    ("SESSION_COOKIE_NAME", "a=b"),
]


@pytest.mark.parametrize("variable,raw", BAD, ids=[f"{v}={r!r}" for v, r in BAD])
def test_bad_value_raises_naming_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(ImproperlyConfigured) as excinfo:
        apply({variable: raw})
    assert variable in str(excinfo.value)


def test_api_token_expires_in_zero_is_refused_at_start_up() -> None:
    """A zero lifetime makes every token expire at once: the start-up checks refuse it."""
    from appframework.checks import check_settings

    ns = apply({"API_TOKEN_EXPIRES_IN": "0"})
    with override_settings(APPFRAMEWORK=ns["APPFRAMEWORK"]):
        ids = [m.id for m in check_settings()]
    assert "appframework.E002" in ids


# -- explicit settings win -------------------------------------------------------------
@pytest.mark.parametrize(
    "variable,raw,explicit",
    [
        ("APP_SECRET_KEY", "from-env", {"SECRET_KEY": "explicit"}),
        ("SESSION_COOKIE_NAME", "from_env", {"SESSION_COOKIE_NAME": "explicit"}),
        ("SESSION_MAX_AGE", "10", {"SESSION_COOKIE_AGE": 5}),
        (
            "SESSION_HTTPS_ONLY",
            "true",
            {"SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False},
        ),
        ("CSRF_ENABLED", "false", {"APPFRAMEWORK": {"CSRF": {"ENABLED": True}}}),
        (
            "CSRF_COOKIE_NAME",
            "from_env",
            {"APPFRAMEWORK": {"CSRF": {"COOKIE_NAME": "explicit"}}, "CSRF_COOKIE_NAME": "explicit"},
        ),
        (
            "CSRF_HEADER_NAME",
            "X-From-Env",
            {"APPFRAMEWORK": {"CSRF": {"HEADER_NAME": "X-Explicit"}}},
        ),
        ("API_TOKEN_EXPIRES_IN", "10", {"APPFRAMEWORK": {"AUTH": {"API_TOKEN_EXPIRES_IN": 99}}}),
        (
            "SECURITY_HEADERS_CSP",
            "from-env",
            {"APPFRAMEWORK": {"SECURITY_HEADERS": {"CSP": "explicit"}}},
        ),
        (
            "SECURITY_HEADERS_FRAME_OPTIONS",
            "SAMEORIGIN",
            {"APPFRAMEWORK": {"SECURITY_HEADERS": {"FRAME_OPTIONS": "DENY"}}},
        ),
        (
            "SECURITY_HEADERS_CONTENT_TYPE_OPTIONS",
            "false",
            {"APPFRAMEWORK": {"SECURITY_HEADERS": {"CONTENT_TYPE_OPTIONS": True}}},
        ),
        (
            "SECURITY_HEADERS_REFERRER_POLICY",
            "no-referrer",
            {"APPFRAMEWORK": {"SECURITY_HEADERS": {"REFERRER_POLICY": "same-origin"}}},
        ),
        ("SECURITY_HEADERS_HSTS", "true", {"APPFRAMEWORK": {"SECURITY_HEADERS": {"HSTS": False}}}),
        (
            "SECURITY_HEADERS_HSTS_MAX_AGE",
            "60",
            {"APPFRAMEWORK": {"SECURITY_HEADERS": {"HSTS_MAX_AGE": 120}}},
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isupper() else "",
)
def test_explicit_setting_wins_over_environment(
    variable: str, raw: str, explicit: dict[str, Any]
) -> None:
    import copy

    ns = apply({variable: raw}, **copy.deepcopy(explicit))
    for key, value in explicit.items():
        if key == "APPFRAMEWORK":
            for section, values in value.items():
                for name, v in values.items():
                    assert ns["APPFRAMEWORK"][section][name] == v, (section, name)
        else:
            assert ns[key] == value, key


def test_explicit_setting_wins_over_default() -> None:
    ns = apply({}, SESSION_COOKIE_AGE=60, APPFRAMEWORK={"SECURITY_HEADERS": {"HSTS": True}})
    assert ns["SESSION_COOKIE_AGE"] == 60
    assert ns["APPFRAMEWORK"]["SECURITY_HEADERS"]["HSTS"] is True
    assert ns["APPFRAMEWORK"]["SECURITY_HEADERS"]["HSTS_MAX_AGE"] == 31536000


def test_explicit_appframework_cookie_name_also_names_djangos_csrf_cookie() -> None:
    """Only APPFRAMEWORK['CSRF']['COOKIE_NAME'] is given: Django's CSRF_COOKIE_NAME (the
    cookie Django's @csrf_protect, e.g. the admin's, sets) must follow it, or check W003
    fires on a project that did nothing wrong."""
    ns = apply({}, APPFRAMEWORK={"CSRF": {"COOKIE_NAME": "xsrf"}})
    assert ns["APPFRAMEWORK"]["CSRF"]["COOKIE_NAME"] == "xsrf"
    assert ns["CSRF_COOKIE_NAME"] == "xsrf"


def test_bad_value_is_an_error_even_when_an_explicit_setting_would_win() -> None:
    with pytest.raises(ImproperlyConfigured, match="SESSION_MAX_AGE"):
        apply({"SESSION_MAX_AGE": "abc"}, SESSION_COOKIE_AGE=5)


def test_session_engine_defaults_to_the_suites_signed_cookie_store() -> None:
    assert apply({})["SESSION_ENGINE"] == "appframework.auth.session_store"


def test_explicit_session_engine_wins() -> None:
    ns = apply({}, SESSION_ENGINE="django.contrib.sessions.backends.cache")
    assert ns["SESSION_ENGINE"] == "django.contrib.sessions.backends.cache"


def test_appframework_must_be_a_dict() -> None:
    with pytest.raises(ImproperlyConfigured, match="APPFRAMEWORK"):
        apply({}, APPFRAMEWORK=["nope"])


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_MAX_AGE", "77")
    ns: dict[str, Any] = {}
    apply_environment(ns)
    assert ns["SESSION_COOKIE_AGE"] == 77


def test_returns_the_namespace() -> None:
    ns: dict[str, Any] = {}
    assert apply_environment(ns, {}) is ns


def test_running_settings_came_through_the_helper() -> None:
    from django.conf import settings

    assert settings.SESSION_ENGINE == "appframework.auth.session_store"
    assert settings.CSRF_COOKIE_NAME == "csrf_token"
    assert settings.APPFRAMEWORK["CSRF"]["COOKIE_NAME"] == "csrf_token"


# -- start-up ----------------------------------------------------------------------------
def _manage_check(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT_VARIABLES}
    environ.update(DJANGO_SETTINGS_MODULE="testproject.settings", **env)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_manage_check_fails_on_bad_session_max_age() -> None:
    result = _manage_check(SESSION_MAX_AGE="abc")
    assert result.returncode != 0
    assert "SESSION_MAX_AGE" in result.stderr


def test_manage_check_passes_with_good_environment() -> None:
    result = _manage_check(SESSION_MAX_AGE="3600", CSRF_ENABLED="true")
    assert result.returncode == 0, result.stderr
    # Nothing is reported: the demo's SAML replay cache is left at AUTO, which with its
    # locmem "default" is the suite's database store, shared by every worker.
    reported = re.findall(r"\b(?:appframework|blog)\w*\.[CEWID]\d{3}\b", result.stderr)
    assert reported == [], result.stderr


def test_sessions_without_secret_is_error_e001() -> None:
    from appframework.checks import check_secret_key

    with override_settings(SECRET_KEY=""):
        errors = check_secret_key()
    assert [e.id for e in errors] == ["appframework.E001"]
    assert errors[0].hint
    assert "APP_SECRET_KEY" in errors[0].hint


def test_secret_present_passes_e001() -> None:
    from appframework.checks import check_secret_key

    assert check_secret_key() == []
