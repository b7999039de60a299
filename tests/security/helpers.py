"""Small helpers shared by the CSRF test modules."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

URLS = "tests.security.urls"
COOKIE = "csrf_token"
HEADER = "HTTP_X_CSRF_TOKEN"
JSON_ACCEPT = {"HTTP_ACCEPT": "application/json"}
HTML_ACCEPT = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
UNSAFE = ["POST", "PUT", "PATCH", "DELETE"]
SAFE = ["GET", "HEAD", "OPTIONS", "TRACE"]


def prime(client: Client, path: str = "/sec/token-only", cookie: str = COOKIE) -> str:
    """A GET of a page that uses the token, then the CSRF cookie's value (valid for the
    client's current session)."""
    response = client.get(path)
    assert response.status_code == 200, response.content
    return client.cookies[cookie].value


def send_json(client: Client, method: str, path: str = "/sec/echo", **extra: Any) -> Any:
    return client.generic(method, path, data=b"{}", content_type="application/json", **extra)


def send_form(
    client: Client, method: str, fields: dict[str, str], path: str = "/sec/echo", **extra: Any
) -> Any:
    return client.generic(
        method,
        path,
        data=urlencode(fields),
        content_type="application/x-www-form-urlencoded",
        **extra,
    )


def send_multipart(
    client: Client, method: str, fields: dict[str, str], path: str = "/sec/echo", **extra: Any
) -> Any:
    return client.generic(
        method,
        path,
        data=encode_multipart(BOUNDARY, fields),
        content_type=MULTIPART_CONTENT,
        **extra,
    )


def anonymous_session_cookie(client: Client, **data: Any) -> str:
    """Give ``client`` a pre-login (anonymous) signed session cookie, as a site that
    keeps e.g. a cart in the session would."""
    store = SessionStore()
    store.update(data or {"cart": [1, 2]})
    store.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = store.session_key
    return str(store.session_key)


def problem_detail(response: Any) -> str:
    assert response["Content-Type"].startswith("application/problem+json"), response["Content-Type"]
    body = response.json()
    assert body["status"] == 403
    return str(body["detail"])
