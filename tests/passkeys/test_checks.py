"""``appframework_passkeys`` checks: E001 sessions, E002 bad values, E003 an origin the
RP id cannot serve, W001 settings the site's hosts would never let through, W002 (deploy)
no RP id."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from appframework.passkeys import checks


def ids(messages: list[Any]) -> list[str]:
    return [m.id for m in messages]


def passkeys(**values: Any) -> Any:
    return override_settings(APPFRAMEWORK={"PASSKEYS": values})


def test_the_demo_settings_pass() -> None:
    assert checks.check_settings() == []
    assert checks.check_relying_party() == []
    assert checks.check_sessions() == []


@pytest.mark.parametrize(
    "values",
    [
        {"RP_ID": "https://example.com"},
        {"RP_ID": ""},
        {"RP_NAME": 5},
        {"ORIGINS": "https://example.com"},
        {"ORIGINS": ["example.com"]},
        {"ORIGINS": ["https://example.com/path"]},
        {"USER_VERIFICATION": "always"},
        {"CHALLENGE_TIMEOUT": 0},
        {"LOGIN_ATTEMPTS": True},
        {"LOGIN_WINDOW": 1.5},
        {"CHALLENGE_CACHE": "nope"},
    ],
)
def test_e002_bad_values(values: dict[str, Any]) -> None:
    with passkeys(**values):
        messages = checks.check_settings()
        assert ids(messages) == ["appframework_passkeys.E002"]
        assert "docs/checks.md#appframework_passkeys-E002" in messages[0].hint
        assert checks.check_relying_party() == []  # E002 first


def test_e003_an_origin_outside_the_rp_id() -> None:
    with (
        passkeys(RP_ID="example.com", ORIGINS=["https://example.org"]),
        override_settings(ALLOWED_HOSTS=["example.com", "example.org"]),
    ):
        assert ids(checks.check_relying_party()) == ["appframework_passkeys.E003"]


def test_w001_hosts_the_site_never_lets_in() -> None:
    with override_settings(ALLOWED_HOSTS=["www.example.com"]):
        with passkeys(RP_ID="example.com", ORIGINS=["https://www.example.com"]):
            assert checks.check_relying_party() == []
        with passkeys(RP_ID="example.com", ORIGINS=["https://shop.example.com"]):
            assert ids(checks.check_relying_party()) == ["appframework_passkeys.W001"]
        with (
            override_settings(CSRF_TRUSTED_ORIGINS=["https://shop.example.com"]),
            passkeys(RP_ID="example.com", ORIGINS=["https://shop.example.com"]),
        ):
            assert checks.check_relying_party() == []
        with passkeys(RP_ID="other.example"):
            assert ids(checks.check_relying_party()) == ["appframework_passkeys.W001"]
    with (
        override_settings(ALLOWED_HOSTS=[".example.com"]),
        passkeys(RP_ID="example.com", ORIGINS=["https://a.example.com"]),
    ):
        assert checks.check_relying_party() == []


def test_w002_deploy_without_an_rp_id() -> None:
    assert ids(checks.check_rp_id_set()) == ["appframework_passkeys.W002"]
    with passkeys(RP_ID="example.com"):
        assert checks.check_rp_id_set() == []


def test_e001_without_sessions() -> None:
    with override_settings(
        MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
    ):
        assert ids(checks.check_sessions()) == ["appframework_passkeys.E001"]


def test_the_checks_are_registered() -> None:
    from django.core import checks as django_checks

    registered = django_checks.registry.registry.get_checks(include_deployment_checks=True)
    for check in (checks.check_sessions, checks.check_settings, checks.check_relying_party):
        assert check in registered
    assert checks.check_rp_id_set in registered
