"""Views that sign a browser in or out check CSRF whatever the request carries, and a
token handed out by a session ends with it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import login_client

pytestmark = [pytest.mark.django_db]



# -- an Authorization header never skips the check on views that sign in or out ------------
@pytest.mark.parametrize("header", ["Basic Zm9vOmJhcg==", "Bearer junk", "Junk"])
def test_a_cross_site_login_post_with_an_authorization_header_is_refused(
    user: Any, password: str, header: str
) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/login",
        {"email": user.email, "password": password},
        HTTP_AUTHORIZATION=header,
        HTTP_ORIGIN="https://evil.example",
    )
    assert response.status_code == 403
    assert "sessionid" not in response.cookies or not response.cookies["sessionid"].value


def test_a_login_post_with_an_authorization_header_and_no_token_is_refused(
    user: Any, password: str
) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/login", {"email": user.email, "password": password}, HTTP_AUTHORIZATION="Basic eDp5"
    )
    assert response.status_code == 403


def test_a_signed_in_page_still_signs_in_with_its_token(user: Any, password: str) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login")
    token = page.context["csrf_token"]
    response = client.post("/login", {"email": user.email, "password": password, "_token": token})
    assert response.status_code == 302


def test_logout_with_an_authorization_header_and_no_token_is_refused(user: Any) -> None:
    client = login_client(Client(enforce_csrf_checks=True), user)
    client.get("/")
    response = client.post("/logout", HTTP_AUTHORIZATION="Basic eDp5")
    assert response.status_code == 403
    assert client.get("/account/token").status_code == 200  # still signed in


def test_a_token_from_the_token_page_ends_with_the_session(user: Any) -> None:
    client = login_client(Client(), user)
    token = client.post("/token").json()["token"]
    assert Client().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
    client.post("/logout")
    assert Client().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401
