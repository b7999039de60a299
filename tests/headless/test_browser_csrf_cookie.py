"""A single-page app served as static files gets its CSRF cookie from the browser API
itself: any GET hands it out, and its value lets the login POST through."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

API = "/api/auth/browser/v1"


@pytest.mark.django_db
def test_a_get_of_the_browser_api_hands_out_the_csrf_cookie(user: Any, password: str) -> None:
    browser = Client(enforce_csrf_checks=True)
    refused = browser.post(
        f"{API}/auth/login",
        json.dumps({"email": user.email, "password": password}),
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "csrf_cookie_missing"

    browser = Client(enforce_csrf_checks=True)
    answer = browser.get(f"{API}/session")
    token = answer.cookies["csrf_token"].value
    assert token
    signed_in = browser.post(
        f"{API}/auth/login",
        json.dumps({"email": user.email, "password": password}),
        content_type="application/json",
        headers={"X-CSRF-Token": token},
    )
    assert signed_in.status_code == 200, signed_in.content
    assert signed_in.json()["status"] == "authenticated"


@pytest.mark.django_db
def test_the_app_api_sets_no_csrf_cookie() -> None:
    answer = Client().get("/api/auth/app/v1/session", headers={"X-Session-Token": ""})
    assert "csrf_token" not in answer.cookies
