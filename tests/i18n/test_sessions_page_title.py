"""The sessions page's title in the page's language: Django's own sessions app has the
msgid "Sessions" too (its German is "Sessions"), and its catalogue, earlier in
INSTALLED_APPS, wins for the bare msgid; the suite's string has a context of its own."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.conftest import login_client

pytestmark = pytest.mark.django_db

TITLES = {"de": "Sitzungen", "es": "Sesiones", "fr": "Sessions", "en": "Sessions"}


@pytest.mark.parametrize("language", sorted(TITLES))
def test_the_sessions_page_heading_and_title_are_the_suites_translation(
    language: str, user: Any
) -> None:
    client = login_client(Client(), user)
    response = client.get(reverse("appframework:sessions"), HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert f'<html lang="{language}">' in page
    assert f"<h1>{TITLES[language]}</h1>" in page
    assert f"<title>{TITLES[language]} · " in page


def test_german_sessions_heading_is_not_djangos_sessions_app_string(user: Any) -> None:
    client = login_client(Client(), user)
    response = client.get(reverse("appframework:sessions"), HTTP_ACCEPT_LANGUAGE="de")
    assert "<h1>Sessions</h1>" not in response.content.decode()
