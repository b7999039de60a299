"""Shared HTTP helpers: content negotiation and ``application/problem+json`` bodies."""

from __future__ import annotations

import json
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

__all__ = ["has_authorization", "problem_response", "wants_json"]


def has_authorization(request: HttpRequest) -> bool:
    """The request presents its own credential (``Authorization``): it is judged by that
    alone, never by the session cookie (and is exempt from CSRF, SPEC rule 3)."""
    return "HTTP_AUTHORIZATION" in request.META


def wants_json(request: HttpRequest) -> bool:
    """True for API clients: JSON named in ``Accept``, a JSON body, or no HTML accepted.

    Browsers send ``text/html`` first, so they keep Django's HTML error pages; curl's
    ``*/*`` and fetch's ``application/json`` get problem details.
    """
    accept = request.headers.get("Accept", "")
    if "json" in accept:
        return True
    if "json" in request.headers.get("Content-Type", ""):
        return True
    return "text/html" not in accept


def problem_response(
    status: int,
    detail: str,
    *,
    title: str | None = None,
    headers: dict[str, str] | None = None,
    json_body: bool = True,
) -> HttpResponse:
    """An RFC 9457 problem document (or a short HTML page when ``json_body`` is false)."""
    title = title or HTTPStatus(status).phrase
    if json_body:
        body = json.dumps(
            {"type": "about:blank", "title": title, "status": status, "detail": detail}
        )
        response = HttpResponse(body, status=status, content_type="application/problem+json")
    else:
        body = f"<!doctype html><title>{status} {escape(title)}</title><h1>{escape(title)}</h1><p>{escape(detail)}</p>"
        response = HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
    for name, value in (headers or {}).items():
        response[name] = value
    return response
