"""A browser meeting a 401 gets a way forward: the HTML error page links ``LOGIN_URL``
with ``next`` back to the page; API clients get the same problem document as before."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

HTML = {"HTTP_ACCEPT": "text/html"}


def test_a_401_page_for_a_browser_links_the_login_page_with_next() -> None:
    response = Client().get("/account/token", **HTML)
    assert response.status_code == 401
    assert '<a href="/login?next=/account/token">Log in</a>' in response.content.decode()


def test_the_next_of_the_login_link_is_encoded_and_escaped() -> None:
    response = Client().get('/account/token?x="><script>&y=1', **HTML)
    page = response.content.decode()
    assert "<script>" not in page
    assert 'href="/login?next=/account/token%3Fx%3D' in page


def test_a_401_for_an_api_client_is_the_problem_document_without_a_link() -> None:
    response = Client().get("/account/token", HTTP_ACCEPT="application/json")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/problem+json")
    assert "Log in" not in response.content.decode()


def test_a_refused_post_links_the_login_page_without_next() -> None:
    response = Client().post("/token", **HTML)
    assert response.status_code == 401
    assert '<a href="/login">Log in</a>' in response.content.decode()


@override_settings(ROOT_URLCONF="tests.core.error_urls")
def test_a_403_page_has_no_login_link() -> None:
    response = Client().get("/e/sync/raise/forbidden", **HTML)
    assert response.status_code == 403
    assert "Log in" not in response.content.decode()


@override_settings(LOGIN_URL="/accounts/login/")
def test_no_link_when_the_login_url_is_not_a_page_of_this_site() -> None:
    response = Client().get("/account/token", **HTML)
    assert response.status_code == 401
    assert "Log in" not in response.content.decode()
