"""The demo's language selector: its form (every page's header) posts to Django's
set_language view, and the account pages follow the choice from then on."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import Client

from tests.demo.browsing import form_token

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_stack")]


@pytest.mark.parametrize(
    ("language", "heading"),
    [("de", "Anmelden"), ("fr", "Connexion"), ("es", "Iniciar sesión")],
)
def test_choosing_a_language_in_the_selector_turns_the_login_page_into_it(
    language: str, heading: str
) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/login").content.decode()
    assert "<h1>Log in</h1>" in page
    assert 'action="/i18n/setlang/"' in page
    chosen = client.post(
        "/i18n/setlang/", {"language": language, "next": "/login", **form_token(page)}
    )
    assert chosen.status_code == 302
    assert chosen["Location"] == "/login"
    page = unescape(client.get("/login").content.decode())
    assert f'<html lang="{language}">' in page
    assert f"<h1>{heading}</h1>" in page
    assert "<h1>Log in</h1>" not in page
    assert f'<option value="{language}" selected>' in page
