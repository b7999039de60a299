"""The suite's own pages, and the demo's /spa/, carry a strict Content-Security-Policy
(no inline script or style) unless the project has a policy of its own or turns it off."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse

import appframework
from appframework.security.page_csp import DEFAULT_PAGE_CSP
from tests.conftest import login_client

PUBLIC_PAGES = ["login", "signup", "password-reset", "login-code"]
SIGNED_IN_PAGES = [
    "email",
    "sessions",
    "tokens",
    "mfa-setup",
    "totp-activate",
    "passkeys",
    "reauthenticate",
    "password-change",
]


def _app_settings(**security_headers: Any) -> Any:
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("SECURITY_HEADERS", {}).update(security_headers)
    return override_settings(APPFRAMEWORK=app)


def _assert_strict(response: Any) -> None:
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert policy == DEFAULT_PAGE_CSP
    assert "unsafe-inline" not in policy
    assert "script-src 'self'" in policy and "style-src 'self'" in policy


@pytest.mark.django_db
@pytest.mark.parametrize("name", PUBLIC_PAGES)
def test_public_account_page_has_strict_csp(client: Client, name: str) -> None:
    _assert_strict(client.get(reverse(f"appframework:{name}")))


@pytest.mark.parametrize("name", SIGNED_IN_PAGES)
def test_signed_in_account_page_has_strict_csp(client: Client, user: Any, name: str) -> None:
    _assert_strict(login_client(client, user).get(reverse(f"appframework:{name}")))


@pytest.mark.django_db
def test_demo_spa_page_has_strict_csp(client: Client) -> None:
    _assert_strict(client.get("/spa/"))


@pytest.mark.django_db
def test_page_with_a_refused_form_keeps_the_csp(client: Client) -> None:
    response = client.post(reverse("appframework:login"), {"login": "x", "password": "y"})
    assert response.status_code >= 400
    assert response["Content-Security-Policy"] == DEFAULT_PAGE_CSP


@pytest.mark.django_db
def test_project_security_headers_csp_wins(client: Client) -> None:
    with _app_settings(CSP="default-src 'self' https://cdn.example"):
        response = client.get(reverse("appframework:login"))
    assert response["Content-Security-Policy"] == "default-src 'self' https://cdn.example"


@pytest.mark.django_db
def test_django_secure_csp_setting_makes_the_suite_step_aside(client: Client) -> None:
    with override_settings(SECURE_CSP={"default-src": ["'self'", "https://cdn.example"]}):
        response = client.get(reverse("appframework:login"))
    # Django's own middleware (when installed) sends its policy; the suite adds none.
    assert response.get("Content-Security-Policy") != DEFAULT_PAGE_CSP


@pytest.mark.django_db
def test_page_csp_none_turns_it_off(client: Client) -> None:
    with _app_settings(PAGE_CSP=None):
        response = client.get(reverse("appframework:login"))
    assert "Content-Security-Policy" not in response


@pytest.mark.django_db
def test_page_csp_setting_changes_the_policy(client: Client) -> None:
    with _app_settings(PAGE_CSP="default-src 'self'"):
        response = client.get("/spa/")
    assert response["Content-Security-Policy"] == "default-src 'self'"


def test_suite_templates_have_no_inline_script_style_or_handlers() -> None:
    roots = [Path(appframework.__file__).parent, Path(settings.BASE_DIR)]
    # A data block (type="application/json") is no script; a script with src is a file.
    inline = re.compile(
        r'<script(?![^>]*\b(?:src=|type="application/json"))[^>]*>|<style|\sstyle="|\son[a-z]+='
    )
    offenders = [
        str(path)
        for root in roots
        for path in root.rglob("templates/**/*.html")
        if inline.search(path.read_text())
    ]
    assert offenders == []
