"""System checks of appframework.oauth: E001, E002, W001 (docs/checks.md), and the
OAuth state cache in W005 (``manage.py check --deploy``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core import checks
from django.test import override_settings

from appframework.checks import check_shared_caches
from appframework.oauth import generic_oidc
from appframework.oauth.checks import check_sessions
from appframework.oauth.checks import check_settings as check_oauth_settings
from tests.oauth.conftest import app_settings_with, oauth_settings
from tests.system_checks import run_checks

OAUTH_IDS = {"appframework_oauth.E001", "appframework_oauth.E002", "appframework_oauth.W001"}
STATE_CACHE_USE = "OAUTH['STATE_CACHE'] (spent sign-in states)"


def provider(name: str = "p") -> Any:
    return generic_oidc(
        name,
        "id",
        "secret",
        authorize_url="https://idp.example/authorize",
        token_url="https://idp.example/token",
        userinfo_url="https://idp.example/userinfo",
        redirect_uri=f"https://app.example/auth/{name}/callback",
    )


def ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages if m.id is not None]


def assert_documented(messages: list[checks.CheckMessage]) -> None:
    for message in messages:
        anchor = str(message.id).replace(".", "-")
        assert message.hint and f"#{anchor}" in message.hint, message


# -- the demo settings ----------------------------------------------------------------------------
def test_the_demo_settings_pass_the_oauth_checks_clean() -> None:
    assert check_sessions() == []
    assert check_oauth_settings() == []
    assert not OAUTH_IDS & set(ids(run_checks()))


# -- E001 -----------------------------------------------------------------------------------------
def test_e001_without_session_middleware() -> None:
    middleware = [m for m in settings.MIDDLEWARE if not m.endswith(".SessionMiddleware")]
    with override_settings(MIDDLEWARE=middleware):
        messages = check_sessions()
        assert "appframework_oauth.E001" in ids(run_checks())

    assert ids(messages) == ["appframework_oauth.E001"]
    assert isinstance(messages[0], checks.Error)
    assert_documented(messages)


def test_e001_without_the_auth_app() -> None:
    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with override_settings(INSTALLED_APPS=apps):
        messages = check_sessions()

    assert ids(messages) == ["appframework_oauth.E001"]


# -- E002 -----------------------------------------------------------------------------------------
E002_CASES = {
    "providers-not-a-provider": ({"PROVIDERS": ["google"]}, "PROVIDERS must hold OAuthProvider"),
    "providers-two-with-one-name": (
        {"PROVIDERS": [provider("same"), provider("same")]},
        "two PROVIDERS share a name",
    ),
    "providers-a-number": ({"PROVIDERS": 42}, "PROVIDERS must be a list"),
    "providers-a-dict": ({"PROVIDERS": {"p": provider()}}, "PROVIDERS must be a list"),
    "timeout-zero": ({"TIMEOUT": 0}, "TIMEOUT must be a positive"),
    "timeout-negative": ({"TIMEOUT": -1.5}, "TIMEOUT must be a positive"),
    "timeout-a-string": ({"TIMEOUT": "10"}, "TIMEOUT must be a positive"),
    "timeout-a-bool": ({"TIMEOUT": True}, "TIMEOUT must be a positive"),
    "timeout-none": ({"TIMEOUT": None}, "TIMEOUT must be a positive"),
    "state-ttl-zero": ({"STATE_TTL": 0}, "STATE_TTL must be a positive"),
    "state-ttl-negative": ({"STATE_TTL": -600}, "STATE_TTL must be a positive"),
    "state-ttl-a-string": ({"STATE_TTL": "600"}, "STATE_TTL must be a positive"),
    "state-ttl-a-bool": ({"STATE_TTL": True}, "STATE_TTL must be a positive"),
    "state-cache-unknown-alias": ({"STATE_CACHE": "nowhere"}, "STATE_CACHE 'nowhere' is not"),
    "user-handler-not-importable": (
        {"USER_HANDLER": "tests.oauth.no_such_module.handler"},
        "Could not import 'tests.oauth.no_such_module.handler'",
    ),
    "user-handler-not-callable": (
        {"USER_HANDLER": "appframework.oauth.state.MAX_PENDING"},
        "USER_HANDLER is not callable",
    ),
}


@pytest.mark.parametrize(("values", "fragment"), E002_CASES.values(), ids=E002_CASES)
def test_e002_each_bad_value(values: dict[str, Any], fragment: str) -> None:
    oauth = {"PROVIDERS": [provider()], **values}
    with oauth_settings(oauth.pop("PROVIDERS"), **oauth):
        messages = check_oauth_settings()

    assert ids(messages) == ["appframework_oauth.E002"]
    assert isinstance(messages[0], checks.Error)
    assert fragment in messages[0].msg
    assert_documented(messages)


@pytest.mark.parametrize(
    "providers",
    [[], [provider("a"), provider("b")], "testproject.blog.sso.oauth_providers"],
    ids=["none", "two", "import-string"],
)
def test_e002_quiet_for_good_values(providers: Any) -> None:
    with oauth_settings(providers, TIMEOUT=0.5, STATE_TTL=60, STATE_CACHE="revocations"):
        assert check_oauth_settings() == []


def test_e002_reports_every_bad_value() -> None:
    with oauth_settings([provider()], TIMEOUT=0, STATE_TTL=0, STATE_CACHE="nowhere"):
        messages = check_oauth_settings()

    assert ids(messages) == ["appframework_oauth.E002"] * 3


# -- W001 -----------------------------------------------------------------------------------------
def test_w001_mfa_on_and_no_challenge_url() -> None:
    with app_settings_with(MFA={"CHALLENGE_URL": None}):
        messages = check_oauth_settings()
        assert "appframework_oauth.W001" in ids(run_checks())

    assert ids(messages) == ["appframework_oauth.W001"]
    assert isinstance(messages[0], checks.Warning)
    assert_documented(messages)


def test_w001_quiet_with_oauth_mfa_off() -> None:
    with app_settings_with(MFA={"CHALLENGE_URL": None}, OAUTH={"MFA": False}):
        assert check_oauth_settings() == []


# -- W005 (deploy) --------------------------------------------------------------------------------
def _w005_naming_the_state_cache() -> list[checks.CheckMessage]:
    return [
        m for m in check_shared_caches() if m.id == "appframework.W005" and STATE_CACHE_USE in m.msg
    ]


@pytest.mark.django_db  # the deploy run includes the demo's checks, which read users
def test_w005_lists_the_oauth_state_cache_when_it_names_a_locmem_alias() -> None:
    with app_settings_with(OAUTH={"STATE_CACHE": "default"}):
        (message,) = _w005_naming_the_state_cache()

        assert "Cache 'default'" in message.msg
        assert "LocMemCache" in message.msg
        deploy = run_checks(include_deployment_checks=True)
        assert any(m.id == "appframework.W005" and STATE_CACHE_USE in m.msg for m in deploy)
        assert not any(
            m.id == "appframework.W005" and STATE_CACHE_USE in m.msg for m in run_checks()
        )


def test_w005_does_not_list_the_state_cache_left_at_auto() -> None:
    """The test settings' "default" is a LocMemCache: AUTO puts the states in the
    suite's database store, which every process shares."""
    assert "STATE_CACHE" not in settings.APPFRAMEWORK.get("OAUTH", {})
    assert _w005_naming_the_state_cache() == []


def test_w005_names_the_alias_the_state_cache_uses() -> None:
    with app_settings_with(OAUTH={"STATE_CACHE": "revocations"}):
        (message,) = _w005_naming_the_state_cache()

    assert "Cache 'revocations'" in message.msg


def test_w005_does_not_list_a_shared_state_cache() -> None:
    caches = {
        **settings.CACHES,
        "shared": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "oauth_states",
        },
    }
    with override_settings(CACHES=caches), app_settings_with(OAUTH={"STATE_CACHE": "shared"}):
        assert _w005_naming_the_state_cache() == []
        assert check_oauth_settings() == []
