"""The CSRF cookie, pre-rendered: it goes out on every response to a client without a
valid token, so building it must cost little next to a trivial view."""

from __future__ import annotations

import functools
import time
from http.cookies import Morsel
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date

from ..conf import AUTO, app_settings, derived_setting

__all__ = ["csrf_cookie_name", "set_csrf_cookie"]

_TOKEN = "AppframeworkCsrfTokenPlaceholder"  # alphanumeric: never quoted
_EXPIRES = "AppframeworkCsrfExpiresPlaceholder"


class _RenderedMorsel(Morsel[str]):
    """A Morsel whose header line was rendered once from a template (same text as
    ``Morsel.OutputString``); its attributes stay readable like any other."""

    rendered: str | None = None

    def OutputString(self, attrs: Any = None) -> str:
        if attrs is None and self.rendered is not None:
            return self.rendered
        return super().OutputString(attrs)


@derived_setting
def csrf_cookie_name() -> str:
    """``CSRF["COOKIE_NAME"]``, or Django's ``CSRF_COOKIE_NAME`` when it is ``AUTO``."""
    name = app_settings.CSRF.COOKIE_NAME
    return str(settings.CSRF_COOKIE_NAME if name is AUTO else name)


@derived_setting
def _template() -> tuple[str, dict[str, Any], str, int | None]:
    """(cookie name, its attributes, its rendered line with placeholders, max-age)."""
    name = csrf_cookie_name()
    max_age = settings.CSRF_COOKIE_AGE
    probe = HttpResponse()
    probe.set_cookie(
        name,
        _TOKEN,
        max_age=max_age,
        domain=settings.CSRF_COOKIE_DOMAIN,
        path=settings.CSRF_COOKIE_PATH,
        secure=settings.CSRF_COOKIE_SECURE,
        httponly=False,  # readable: the page's script reads it to echo it back
        samesite=settings.CSRF_COOKIE_SAMESITE,
    )
    morsel = probe.cookies[name]
    if max_age is not None:
        morsel["expires"] = _EXPIRES
    return name, dict(morsel), morsel.OutputString(), None if max_age is None else int(max_age)


@functools.lru_cache(maxsize=4)
def _expires_at(second: int, max_age: int) -> str:
    return http_date(second + max_age)


def set_csrf_cookie(response: HttpResponse, token: str) -> None:
    name, attributes, rendered, max_age = _template()
    morsel = _RenderedMorsel()
    dict.update(morsel, attributes)
    morsel.set(name, token, token)
    line = rendered.replace(_TOKEN, token)
    if max_age is not None:
        expires = _expires_at(int(time.time()), max_age)
        dict.__setitem__(morsel, "expires", expires)
        line = line.replace(_EXPIRES, expires)
    morsel.rendered = line
    response.cookies[name] = morsel
    if response.has_header("Vary"):
        patch_vary_headers(response, ("Cookie",))
    else:
        response.headers["Vary"] = "Cookie"
