"""The GraphiQL page: pinned CDN assets with Subresource Integrity, or self-hosted ones.

GraphiQL 4.1.2 is the last release with a UMD build (5.x ships ESM only), paired with
React 18.3.1 UMD (React 19 has none). ``APPFRAMEWORK["GRAPHQL"]["GRAPHIQL_ASSETS"]``
replaces any of the URLs (for offline use or a strict CSP); a replaced asset is loaded
without an integrity hash unless one is given as ``"<key>_integrity"``.

For a local copy of the four files, :func:`assets_from_directory` builds that setting
and :func:`asset_urlpatterns` serves the files (docs/graphql.md, "Self-hosting GraphiQL").
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import FileResponse, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.template.loader import render_to_string
from django.urls import URLPattern, path
from django.views.decorators.http import require_safe

from appframework.conf import app_settings
from appframework.security.cookie import csrf_cookie_name
from appframework.security.csrf import csrf_token

__all__ = [
    "CDN_ASSETS",
    "LOCAL_FILES",
    "LOCAL_URL_PREFIX",
    "asset_urlpatterns",
    "assets",
    "assets_from_directory",
    "content_security_policy",
    "render_graphiql",
]

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

#: The file name of each asset in a local copy: the last segment of its CDN URL.
LOCAL_FILES: dict[str, str] = {key: url.rsplit("/", 1)[1] for key, (url, _) in CDN_ASSETS.items()}

#: Where :func:`asset_urlpatterns` serves a local copy unless told otherwise.
LOCAL_URL_PREFIX = "/graphiql-assets/"

_CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def assets() -> dict[str, dict[str, str]]:
    """``{key: {"url": ..., "integrity": ...}}`` after the project's overrides."""
    overrides: dict[str, str] = dict(app_settings.GRAPHQL.GRAPHIQL_ASSETS or {})
    result: dict[str, dict[str, str]] = {}
    for key, (url, integrity) in CDN_ASSETS.items():
        if key in overrides:
            url, integrity = overrides[key], overrides.get(f"{key}_integrity", "")
        result[key] = {"url": url, "integrity": integrity}
    return result


def _local_files(directory: str | Path) -> dict[str, Path]:
    """``{key: file}`` of a local copy; ImproperlyConfigured names what is missing."""
    root = Path(directory)
    files = {key: root / name for key, name in LOCAL_FILES.items()}
    missing = sorted(file.name for file in files.values() if not file.is_file())
    if missing:
        raise ImproperlyConfigured(
            f"The GraphiQL assets directory {str(root)!r} lacks {', '.join(missing)} "
            "(docs/graphql.md, 'Self-hosting GraphiQL', lists the files)."
        )
    return files


def assets_from_directory(
    directory: str | Path, url_prefix: str = LOCAL_URL_PREFIX
) -> dict[str, str]:
    """``GRAPHIQL_ASSETS`` for a local copy served at ``url_prefix`` by
    :func:`asset_urlpatterns`.

    The pinned integrity hashes are kept: a copy of any other version is refused by the
    browser (the page then says the assets failed to load) instead of half-working.
    """
    result: dict[str, str] = {}
    for key in _local_files(directory):
        result[key] = f"{url_prefix}{LOCAL_FILES[key]}"
        result[f"{key}_integrity"] = CDN_ASSETS[key][1]
    return result


def _file_view(file: Path) -> Callable[[HttpRequest], HttpResponseBase]:
    @require_safe
    def serve(request: HttpRequest) -> HttpResponseBase:
        response = FileResponse(file.open("rb"), content_type=_CONTENT_TYPES[file.suffix])
        # Pinned releases never change in place: let browsers keep them for a day.
        response["Cache-Control"] = "public, max-age=86400"
        return response

    return serve


def asset_urlpatterns(
    directory: str | Path | None, url_prefix: str = LOCAL_URL_PREFIX
) -> list[URLPattern]:
    """URL patterns serving exactly the four files of a local copy, or none when
    ``directory`` is empty. One fixed route per file: no part of the URL ever becomes
    part of a file path, so nothing else in (or outside) the directory is reachable."""
    if not directory:
        return []
    route = url_prefix.lstrip("/")
    return [
        path(f"{route}{file.name}", _file_view(file), name=f"graphiql-asset-{key}")
        for key, file in _local_files(directory).items()
    ]


def _source(url: str) -> str:
    # A CDN file by its exact URL (no other file of that host may run); a local copy
    # is this site's.
    return url if url.startswith(("https://", "http://")) else "'self'"


def content_security_policy(nonce: str, page_assets: dict[str, dict[str, str]]) -> str:
    """The page's own policy: its one inline script by nonce, the four asset files, and
    requests to this site only. GraphiQL styles its editor with inline style attributes,
    hence ``'unsafe-inline'`` for styles (never for scripts)."""
    scripts = " ".join(
        _source(page_assets[key]["url"]) for key in ("react", "react_dom", "graphiql_js")
    )
    styles = _source(page_assets["graphiql_css"]["url"])
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}' {scripts}; "
        f"style-src 'unsafe-inline' {styles}; img-src 'self' data:; font-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def render_graphiql(request: HttpRequest) -> HttpResponse:
    nonce = secrets.token_urlsafe(16)
    page_assets = assets()
    context: dict[str, Any] = {
        "csp_nonce": nonce,
        "assets": page_assets,
        "endpoint": request.path,
        "csrf_header": app_settings.CSRF.HEADER_NAME,
        "csrf_cookie": csrf_cookie_name(),
        "csrf_token": csrf_token(request) or "",
    }
    html = render_to_string("appframework_graphql/graphiql.html", context, request=request)
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    # The page is an app shell; never let a shared cache keep a user's CSRF token.
    response["Cache-Control"] = "no-store"
    # The suite's own page carries its own policy, whatever the project's CSP says.
    response["Content-Security-Policy"] = content_security_policy(nonce, page_assets)
    return response
