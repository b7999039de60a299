"""Opt-in security response headers (nosniff, frame options, referrer policy, optional
CSP and HSTS; ``SECURITY_HEADERS_*``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .._middleware import HybridMiddleware
from ..conf import app_settings, derived_setting
from ..http import wants_json

__all__ = ["SecurityHeadersMiddleware", "security_headers"]


@derived_setting
def security_headers() -> tuple[tuple[tuple[str, str], ...], str | None]:
    """(headers for every response, the HSTS value for HTTPS responses or None)."""
    conf = app_settings.SECURITY_HEADERS
    headers: list[tuple[str, str]] = []
    if conf.CONTENT_TYPE_OPTIONS:
        headers.append(("X-Content-Type-Options", "nosniff"))
    if conf.FRAME_OPTIONS:
        headers.append(("X-Frame-Options", str(conf.FRAME_OPTIONS)))
    if conf.REFERRER_POLICY:
        headers.append(("Referrer-Policy", str(conf.REFERRER_POLICY)))
    if conf.CSP:
        headers.append(("Content-Security-Policy", str(conf.CSP)))
    hsts = f"max-age={int(conf.HSTS_MAX_AGE)}" if conf.HSTS else None
    return tuple(headers), hsts


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
        from ..exceptions import BadRequestException
        from ..middleware import response_for_error

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
        headers, hsts = security_headers()
        # Django's @xframe_options_exempt marks responses that may be framed.
        framable = getattr(response, "xframe_options_exempt", False)
        for name, value in headers:
            if framable and name == "X-Frame-Options":
                continue
            response.headers.setdefault(name, value)
        # Browsers ignore HSTS over plain HTTP (RFC 6797 §8.1), and sending it there
        # would only mislead; Django's SecurityMiddleware does the same.
        if hsts is not None and request.is_secure():
            response.headers.setdefault("Strict-Transport-Security", hsts)
