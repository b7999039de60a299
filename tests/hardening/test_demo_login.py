"""The demo's /login page as a browser and as an attacker see it.

The form keeps the typed email after a wrong password (escaped), never echoes the
password, is CSRF-checked even before any session exists (login CSRF), sets the CSRF
cookie when shown, and passes the request to the login throttle (per-address limits,
429 page).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from appframework.security.tokens import session_cookie_name

pytestmark = pytest.mark.django_db

COOKIE = "csrf_token"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}


def _form_token(html: str) -> str:
    # The account pages render Django's {% csrf_token %}: the suite accepts its field.
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, html
    return match.group(1)


def _rate_limit(**keys: Any) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("RATE_LIMIT", {}).update(keys)
    return override_settings(APPFRAMEWORK=app)


def _session_cookie(client: Client) -> str | None:
    morsel = client.cookies.get(session_cookie_name())
    return morsel.value if morsel is not None and morsel.value else None


# -- the page ----------------------------------------------------------------------------------
def test_get_login_sets_the_csrf_cookie_and_renders_the_token() -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.get("/login")
    assert response.status_code == 200
    assert response.cookies[COOKIE].value
    assert _form_token(response.content.decode())


def test_wrong_password_keeps_the_typed_email_escaped_and_drops_the_password(
    csrf_client: Client, user: Any
) -> None:
    csrf_client.get("/login")
    typed = 'alice"><script>alert(1)</script>@example.com'
    response = csrf_client.post(
        "/login",
        {"email": typed, "password": "hunter2-secret", "_token": csrf_client.cookies[COOKIE].value},
    )
    assert response.status_code == 401
    html = response.content.decode()
    assert "Wrong email or password." in html
    assert "<script>alert(1)" not in html
    assert 'value="alice&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;@example.com"' in html
    assert "hunter2-secret" not in html
    assert _session_cookie(csrf_client) is None


def test_wrong_password_for_a_real_account_keeps_its_address(
    csrf_client: Client, user: Any
) -> None:
    csrf_client.get("/login")
    response = csrf_client.post(
        "/login",
        {"email": user.email, "password": "wrong", "_token": csrf_client.cookies[COOKIE].value},
    )
    assert response.status_code == 401
    assert f'value="{user.email}"' in response.content.decode()


def test_a_fresh_form_has_an_empty_email() -> None:
    html = Client().get("/login").content.decode()
    email_inputs = re.findall(r'<input[^>]*\bname="email"[^>]*>', html)
    assert len(email_inputs) == 1, html
    # No value, or an empty one: nothing typed by someone before.
    value = re.search(r'\svalue="([^"]*)"', email_inputs[0])
    assert value is None or value.group(1) == "", email_inputs[0]


def test_other_methods_are_405(client: Client) -> None:
    response = client.put("/login", **HTML)
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD, POST"


# -- login CSRF --------------------------------------------------------------------------------
def test_cross_site_post_without_cookie_or_token_is_403(
    csrf_client: Client, user: Any, password: str
) -> None:
    """Another site's auto-submitting form: right credentials (the attacker's own), no
    session cookie, no token. Refused, so the visitor is not signed in as the attacker."""
    response = csrf_client.post("/login", {"email": user.email, "password": password}, **HTML)
    assert response.status_code == 403
    assert _session_cookie(csrf_client) is None


def test_cross_site_post_with_a_foreign_origin_is_403_even_with_a_token(
    csrf_client: Client, user: Any, password: str
) -> None:
    csrf_client.get("/login")
    response = csrf_client.post(
        "/login",
        {"email": user.email, "password": password, "_token": csrf_client.cookies[COOKIE].value},
        HTTP_ORIGIN="https://evil.example",
    )
    assert response.status_code == 403
    assert _session_cookie(csrf_client) is None


def test_post_with_the_cookie_but_no_token_is_403(
    csrf_client: Client, user: Any, password: str
) -> None:
    csrf_client.get("/login")
    response = csrf_client.post("/login", {"email": user.email, "password": password})
    assert response.status_code == 403
    assert _session_cookie(csrf_client) is None


def test_get_then_post_with_cookie_and_token_logs_in(
    csrf_client: Client, user: Any, password: str
) -> None:
    csrf_client.get("/login")
    response = csrf_client.post(
        "/login",
        {"email": user.email, "password": password, "_token": csrf_client.cookies[COOKIE].value},
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _session_cookie(csrf_client)
    assert f"Signed in as <strong>{user.email}</strong>" in csrf_client.get("/").content.decode()


def test_the_forms_own_token_field_works_as_a_browser_submits_it(
    csrf_client: Client, user: Any, password: str
) -> None:
    page = csrf_client.get("/login")
    token = _form_token(page.content.decode())
    response = csrf_client.post(
        "/login", {"email": user.email, "password": password, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302


# -- the throttle sees the client address ------------------------------------------------------
def _attempt(email: str, password: str, address: str) -> int:
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
    client.get("/login")
    return client.post(
        "/login",
        {"email": email, "password": password, "_token": client.cookies[COOKIE].value},
        **HTML,
    ).status_code


def test_too_many_wrong_passwords_answer_a_429_page(user: Any, password: str) -> None:
    with _rate_limit(LOGIN_ATTEMPTS=2, LOGIN_WINDOW=300):
        assert [_attempt(user.email, "wrong", "192.0.2.1") for _ in range(2)] == [401, 401]
        client = Client(enforce_csrf_checks=True, REMOTE_ADDR="192.0.2.1")
        client.get("/login")
        response = client.post(
            "/login",
            {"email": user.email, "password": password, "_token": client.cookies[COOKIE].value},
            **HTML,
        )
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 300  # within LOGIN_WINDOW
    assert response["Content-Type"].startswith("text/html")
    # The right password past the limit does not sign the visitor in.
    assert _session_cookie(client) is None
    assert session_cookie_name() not in response.cookies


def test_the_per_address_limit_applies_across_accounts(user: Any, password: str) -> None:
    """Only possible when the view passes ``request=``: the address is then known."""
    with _rate_limit(LOGIN_ATTEMPTS=None, LOGIN_ADDRESS_ATTEMPTS=3):
        statuses = [_attempt(f"u{n}@example.com", "wrong", "192.0.2.7") for n in range(3)]
        assert statuses == [401, 401, 401]
        assert _attempt(user.email, password, "192.0.2.7") == 429
        # Another address is not affected.
        assert _attempt(user.email, password, "198.51.100.9") == 302
