"""The GraphiQL page: pinned CDN assets with Subresource Integrity, or self-hosted ones.

GraphiQL 4.1.2 is the last release with a UMD build (5.x ships ESM only), paired with
React 18.3.1 UMD (React 19 has none). ``APPFRAMEWORK["GRAPHQL"]["GRAPHIQL_ASSETS"]``
replaces any of the URLs (for offline use or a strict CSP); a replaced asset is loaded
without an integrity hash unless one is given as ``"<key>_integrity"``.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from appframework.conf import app_settings
from appframework.security.csrf import csrf_token

__all__ = ["CDN_ASSETS", "assets", "render_graphiql"]

CDN_ASSETS: dict[str, tuple[str, str]] = {
    "react": (
        "https://unpkg.com/react@18.3.1/umd/react.production.min.js",
        "sha384-DGyLxAyjq0f9SPpVevD6IgztCFlnMF6oW/XQGmfe+IsZ8TqEiDrcHkMLKI6fiB/Z",
    ),
    "react_dom": (
        "https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js",
        "sha384-gTGxhz21lVGYNMcdJOyq01Edg0jhn/c22nsx0kyqP0TxaV5WVdsSH1fSDUf5YJj1",
    ),
    "graphiql_js": (
        "https://unpkg.com/graphiql@4.1.2/graphiql.min.js",
        "sha384-9XdHu7ajgGJziD4J1zNBKQ842Q/+zZfDv+ib1eMhZWBH6hPAs806x+Jbcf0yNO6B",
    ),
    "graphiql_css": (
        "https://unpkg.com/graphiql@4.1.2/graphiql.min.css",
        "sha384-1el1QShFBnnXTx9x/Cprg82hZWKt0ry29OAYIXt05swbi0KcZDFoj0CWguMpopJr",
    ),
}


def assets() -> dict[str, dict[str, str]]:
    """``{key: {"url": ..., "integrity": ...}}`` after the project's overrides."""
    overrides: dict[str, str] = dict(app_settings.GRAPHQL.GRAPHIQL_ASSETS or {})
    result: dict[str, dict[str, str]] = {}
    for key, (url, integrity) in CDN_ASSETS.items():
        if key in overrides:
            url, integrity = overrides[key], overrides.get(f"{key}_integrity", "")
        result[key] = {"url": url, "integrity": integrity}
    return result


def render_graphiql(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {
        "assets": assets(),
        "endpoint": request.path,
        "csrf_header": app_settings.CSRF.HEADER_NAME,
        "csrf_cookie": app_settings.CSRF.COOKIE_NAME,
        "csrf_token": csrf_token(request) or "",
    }
    html = render_to_string("appframework_graphql/graphiql.html", context, request=request)
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    # The page is an app shell; never let a shared cache keep a user's CSRF token.
    response["Cache-Control"] = "no-store"
    return response
