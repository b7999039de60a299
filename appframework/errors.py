"""The suite's one mapping from an exception to an HTTP answer.

:func:`app_error` says which of the suite's errors an exception is (Django's ``Http404``,
``PermissionDenied``, ``BadRequest``, ``SuspiciousOperation``, a store outage ...);
:func:`response_for_error` answers it, negotiated on ``Accept``: an RFC 9457
``application/problem+json`` document for API clients, a small HTML page for browsers.
The error middleware, Django's error handlers (:mod:`appframework.views`), the account
pages and the API framework adapters all answer through here.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse

from .exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    NotFoundException,
    PayloadTooLargeException,
    ServiceUnavailableException,
)
from .http import PROBLEM_JSON, problem_document, problem_response, wants_json

__all__ = [
    "answer_outage",
    "app_error",
    "field_errors",
    "form_errors",
    "is_outage",
    "problem",
    "problem_http_response",
    "problem_json_response",
    "response_for_error",
    "status_error",
]


def app_error(exception: BaseException, *, log: bool = True) -> AppFrameworkError | None:
    """The suite's error for ``exception``, or None when it is not an HTTP answer.

    Django's own exceptions get the suite's default texts: their messages are written
    for developers and may name internals. ``log=False`` where Django has logged the
    exception already (its error handlers).
    """
    if isinstance(exception, AppFrameworkError):
        return exception
    if isinstance(exception, Http404):
        return NotFoundException()
    if isinstance(exception, PermissionDenied):
        return ForbiddenException()
    if isinstance(exception, RequestDataTooBig):
        return PayloadTooLargeException()
    if isinstance(exception, SuspiciousOperation):
        if log:
            # Django logs these on django.security.<Name>; so do we, as it would have.
            logging.getLogger(f"django.security.{exception.__class__.__name__}").error(
                str(exception)
            )
        return BadRequestException()
    if isinstance(exception, BadRequest):
        return BadRequestException()
    if is_outage(exception):
        if log:
            logging.getLogger("appframework.outage").error(
                "A shared store is unavailable: %s", exception, exc_info=exception
            )
        return ServiceUnavailableException()
    return None


@functools.cache
def _outage_types() -> tuple[type[BaseException], ...]:
    from django.db import InterfaceError, OperationalError

    types: list[type[BaseException]] = [InterfaceError, OperationalError]
    try:
        import redis.exceptions
    except ImportError:
        pass
    else:
        # Connection refused or reset, a timeout, a server still loading its data set.
        types += [
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            redis.exceptions.BusyLoadingError,
        ]
    return tuple(types)


@functools.cache
def _broker_error() -> type[BaseException] | None:
    try:
        from kombu.exceptions import OperationalError
    except ImportError:
        return None
    return OperationalError


def is_outage(exception: BaseException) -> bool:
    """Whether ``exception`` says a store is unreachable (the Redis cache, the
    database, the Celery broker) rather than that the request or the code is wrong."""
    if isinstance(exception, _outage_types()):
        return True
    broker_error = _broker_error()
    if broker_error is not None and isinstance(exception, broker_error):
        # Kombu wraps every error of the transport in OperationalError, an out-of-memory
        # refusal or a missing permission too: only a connection that failed is an outage.
        cause = exception.__cause__
        return isinstance(cause, OSError) or (cause is not None and is_outage(cause))
    return False


def response_for_error(request: HttpRequest, exc: AppFrameworkError) -> HttpResponse:
    """The response for one of the suite's errors, negotiated on ``Accept``."""
    json_body = wants_json(request)
    return problem_response(
        exc.status_code,
        exc.detail,
        title=exc.title,
        code=exc.code,
        headers=exc.response_headers(),
        json_body=json_body,
        login_url=None if json_body or exc.status_code != 401 else _login_url(request),
    )


def _login_url(request: HttpRequest) -> str | None:
    """``LOGIN_URL`` with ``next`` back to this page, so a browser meeting a 401 is not
    left at a dead end; None when the project has no login page (Django's default
    ``/accounts/login/`` counts only if it resolves)."""
    from django.conf import settings
    from django.contrib.auth.views import redirect_to_login
    from django.shortcuts import resolve_url
    from django.urls import NoReverseMatch, Resolver404, resolve

    try:
        url = resolve_url(settings.LOGIN_URL)
        resolve(url.split("?", 1)[0])
    except (NoReverseMatch, Resolver404):
        return None
    # A GET page is worth coming back to; after a refused POST, the form's page is not
    # known, so the login page keeps its own default.
    if request.method not in ("GET", "HEAD"):
        return url
    location: str = redirect_to_login(request.get_full_path(), url)["Location"]
    return location


def answer_outage(request: HttpRequest, exception: BaseException) -> HttpResponse:
    """The 503 for a store outage met in a middleware, before any view; any other
    exception is raised again. Django would answer an exception raised there with its
    500 page (under ``DEBUG``, the debug page showing the settings), whatever the error
    handlers say: a middleware that reads a shared store answers the outage itself."""
    if not is_outage(exception):
        raise exception
    error = app_error(exception)
    assert error is not None  # an outage always maps to ServiceUnavailableException
    return response_for_error(request, error)


def status_error(status: int, detail: Any, code: str) -> AppFrameworkError:
    """A suite error for a status the suite has no class of (406, 409, ...)."""
    error = AppFrameworkError(detail, code=code)
    error.status_code = status
    error.title = HTTPStatus(status).phrase
    return error


def problem(error: AppFrameworkError, errors: dict[str, Any] | None = None) -> dict[str, Any]:
    """The problem document of ``error``; ``errors`` (field → ``[{code, message}]``) is
    added for invalid input."""
    document = problem_document(error.status_code, error.detail, title=error.title, code=error.code)
    if errors is not None:
        document["errors"] = errors
    return document


def field_errors(items: Iterable[tuple[str, str, str]]) -> dict[str, list[dict[str, str]]]:
    """``(field, code, message)`` triples as ``{field: [{"code", "message"}]}``."""
    errors: dict[str, list[dict[str, str]]] = {}
    for name, code, message in items:
        errors.setdefault(name, []).append({"code": code, "message": message})
    return errors


def form_errors(form: Any) -> dict[str, list[dict[str, str]]]:
    """A Django form's errors as problem ``errors`` (``non_field_errors`` for the
    form-wide ones)."""
    return field_errors(
        (
            name if name and name != "__all__" else "non_field_errors",
            str(e.code or "invalid"),
            str(" ".join(e.messages)),
        )
        for name, error_list in form.errors.as_data().items()
        for e in error_list
    )


def problem_json_response(
    error: AppFrameworkError, errors: dict[str, Any] | None = None
) -> HttpResponse:
    """``error`` as problem+json whatever the client accepts (a JSON API's answer)."""
    response = HttpResponse(
        json.dumps(problem(error, errors)), status=error.status_code, content_type=PROBLEM_JSON
    )
    for name, value in error.response_headers().items():
        response[name] = value
    return response


def problem_http_response(
    request: HttpRequest, error: AppFrameworkError, errors: dict[str, Any] | None = None
) -> HttpResponse:
    """The response for ``error``: the suite's one mapping (negotiated on ``Accept``);
    with field ``errors``, the problem document carrying them."""
    if errors is None:
        return response_for_error(request, error)
    return problem_json_response(error, errors)
