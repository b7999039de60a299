"""Opt-in security response headers (nosniff, frame options, referrer policy, optional
CSP and HSTS; ``SECURITY_HEADERS_*``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from ..conf import app_settings, derived_setting
from ..http import wants_json
from ..middleware_base import HybridMiddleware

__all__ = ["SecurityHeadersMiddleware", "security_headers"]


@derived_setting
def security_headers() -> tuple[tuple[tuple[str, str], ...], str | None]:
    """(headers for every response, the HSTS value for HTTPS responses or None)."""
    conf = app_settings.SECURITY_HEADERS
    headers: list[tuple[str, str]] = []
    # Django's SecurityMiddleware, listed before this one, sends the same nosniff header
    # on the way out (SECURE_CONTENT_TYPE_NOSNIFF): sending it here too would be work
    # done twice on every response.
    if conf.CONTENT_TYPE_OPTIONS and not _django_sends_nosniff():
        headers.append(("X-Content-Type-Options", "nosniff"))
    if conf.FRAME_OPTIONS:
        headers.append(("X-Frame-Options", str(conf.FRAME_OPTIONS)))
    if conf.REFERRER_POLICY:
        headers.append(("Referrer-Policy", str(conf.REFERRER_POLICY)))
    if conf.CSP:
        headers.append(("Content-Security-Policy", str(conf.CSP)))
    hsts = f"max-age={int(conf.HSTS_MAX_AGE)}" if conf.HSTS else None
    return tuple(headers), hsts


@derived_setting
def _checked_entries() -> tuple[tuple[str, tuple[str, str]], ...]:
    """The headers of :func:`security_headers` as Django's ``ResponseHeaders`` stores
    them, each name and value validated by it (a bad setting raises here, once)."""
    from django.http.response import ResponseHeaders

    checked = ResponseHeaders({})
    for name, value in security_headers()[0]:
        checked[name] = value
    return tuple(
        (name.lower(), checked._store[name.lower()]) for name, _value in security_headers()[0]
    )


def _django_sends_nosniff() -> bool:
    from ..checks import middleware_index

    django_index = middleware_index("django.middleware.security.SecurityMiddleware")
    own_index = middleware_index("appframework.security.SecurityHeadersMiddleware")
    return (
        bool(getattr(settings, "SECURE_CONTENT_TYPE_NOSNIFF", False))
        and django_index is not None
        and own_index is not None
        and django_index < own_index
    )


def _debug_dump_as_problem(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """Under ``DEBUG``, a request refused before any URL matched (a ``Host`` not in
    ``ALLOWED_HOSTS``, raised in a middleware) gets Django's debug dump — settings and
    traceback — even when the client asked for JSON. Here, outside the
    middleware that raised, an API client gets the suite's 400 problem instead; a
    browser keeps Django's page. (Without ``DEBUG``, ``handler400`` answers.)"""
    if (
        response.status_code == 400
        and getattr(request, "resolver_match", None) is None
        and settings.DEBUG
        and wants_json(request)
    ):
        from ..errors import response_for_error
        from ..exceptions import BadRequestException

        return response_for_error(request, BadRequestException())
    return response


class SecurityHeadersMiddleware(HybridMiddleware):
    """Adds the headers to every response; a header the view already set is kept."""

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        response = _debug_dump_as_problem(request, self.get_response(request))  # type: ignore[arg-type]
        self._apply(request, response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        response = _debug_dump_as_problem(request, await self.get_response(request))  # type: ignore[misc]
        self._apply(request, response)
        return response

    @staticmethod
    def _apply(request: HttpRequest, response: HttpResponse) -> None:
        _headers, hsts = security_headers()
        # Django's @xframe_options_exempt marks responses that may be framed.
        framable = getattr(response, "xframe_options_exempt", False)
        present = response.headers
        # ResponseHeaders keeps {lower-case name: (name, value)}; the values were checked
        # and encoded once, when the settings were read, so each response only gets the
        # entries (this runs on every response of the site).
        store = getattr(present, "_store", None)
        for key, entry in _checked_entries():
            if key in present or (framable and key == "x-frame-options"):
                continue
            if store is not None:
                store[key] = entry
            else:
                present[entry[0]] = entry[1]
        # Browsers ignore HSTS over plain HTTP (RFC 6797 §8.1), and sending it there
        # would only mislead; Django's SecurityMiddleware does the same.
        if hsts is not None and request.is_secure():
            response.headers.setdefault("Strict-Transport-Security", hsts)
