"""A browser's moves through the demo, with Django's test client: forms carry the token
the page rendered, and CSRF is enforced as for a real browser."""

from __future__ import annotations

import re

from django.test import Client


def form_token(html: str) -> dict[str, str]:
    """The CSRF field of the page's first form: ``_token`` (the login form) or
    ``csrfmiddlewaretoken`` (``{% csrf_token %}``); both are accepted."""
    match = re.search(r'name="(_token|csrfmiddlewaretoken)" value="([^"]+)"', html)
    assert match, html[:500]
    return {match.group(1): match.group(2)}


def browser_login(email: str, password: str, client: Client | None = None) -> Client:
    """Sign in through the demo's /login form, CSRF enforced, as a browser does."""
    client = client or Client(enforce_csrf_checks=True)
    page = client.get("/login")
    response = client.post(
        "/login", {"email": email, "password": password, **form_token(page.content.decode())}
    )
    assert response.status_code == 302, response.content[:500]
    return client
