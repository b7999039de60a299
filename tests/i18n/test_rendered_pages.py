"""The shipped catalogues at work: the library's login page, rendered through the test
client in German, French and Spanish (the browser's Accept-Language, read by the
LocaleMiddleware of the test settings), shows the translated heading, button, links and
form error, and not the English."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.urls import reverse

from tests.auth.account_pages import URLCONF, browser, post

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]

# language: (heading and button, the passkey button, the reset link, wrong password)
PAGES = {
    "de": (
        "Anmelden",
        "Mit Passkey anmelden",
        "Passwort vergessen?",
        "E-Mail-Adresse oder Passwort ist falsch.",
    ),
    "fr": (
        # Django's own French for this string (its admin's catalogue comes first).
        "Connexion",
        "Se connecter avec une clé d'accès",
        "Mot de passe oublié ?",
        "Adresse e-mail ou mot de passe incorrect.",
    ),
    "es": (
        "Iniciar sesión",
        "Iniciar sesión con una llave de acceso",
        "¿Ha olvidado su contraseña?",
        "Correo electrónico o contraseña incorrectos.",
    ),
}


def _text(page: str) -> str:
    """The page's text with its markup's entities undone (' is &#x27; in it)."""
    return unescape(page)


@pytest.mark.parametrize("language", sorted(PAGES))
def test_the_login_page_is_rendered_in_the_browsers_language(language: str) -> None:
    heading, passkey, forgot, _error = PAGES[language]
    response = browser().get(reverse("appframework:login"), HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    page = _text(response.content.decode())
    assert f'<html lang="{language}">' in page
    assert f"<h1>{heading}</h1>" in page
    assert f'class="af-button af-button-primary">{heading}</button>' in page
    assert passkey in page
    assert forgot in page
    for english in (
        "<h1>Log in</h1>",
        ">Log in</button>",
        "Sign in with a passkey",
        "Forgot your password?",
    ):
        assert english not in page, english


@pytest.mark.parametrize("language", sorted(PAGES))
def test_a_wrong_password_is_reported_in_the_browsers_language(language: str, user: Any) -> None:
    *_, error = PAGES[language]
    client = browser()
    client.get(reverse("appframework:login"), HTTP_ACCEPT_LANGUAGE=language)
    response = post(
        client,
        reverse("appframework:login"),
        {"email": user.email, "password": "not the password"},
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 401
    page = _text(response.content.decode())
    assert error in page
    assert "Wrong email or password." not in page


def test_english_stays_the_default_without_a_preference() -> None:
    page = _text(browser().get(reverse("appframework:login")).content.decode())
    assert "<h1>Log in</h1>" in page
    assert "Forgot your password?" in page
