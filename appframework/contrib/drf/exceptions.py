"""``EXCEPTION_HANDLER`` for DRF: every error of a DRF view in the suite's format."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import set_rollback

from ...bounded_json import JsonNestingError
from ...errors import app_error, field_errors, problem, status_error
from ...exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    TooManyRequestsException,
    UnauthorizedException,
)
from ...http import PROBLEM_JSON
from ..problems import flatten

__all__ = ["exception_handler", "suite_error"]


def _code(exc: drf.APIException) -> str:
    codes = exc.get_codes()
    return codes if isinstance(codes, str) else str(exc.default_code)


def _raised_parsing(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while DRF parsed the request body (``Request._parse``)."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_parse" and code.co_filename.endswith("rest_framework/request.py"):
            return True
        tb = tb.tb_next
    return False


def suite_error(exc: BaseException) -> tuple[AppFrameworkError | None, dict[str, Any] | None]:
    """The suite's error for ``exc`` and, for a ``ValidationError``, its field errors
    (``{field: [{code, message}]}``); ``(None, None)`` for an unexpected exception."""
    if isinstance(exc, RecursionError) and _raised_parsing(exc):
        # DRF's stock JSONParser lets the decoder's RecursionError through (it catches
        # ValueError only): a body nested thousands deep is the client's 400, not a 500.
        return JsonNestingError(), None
    if isinstance(exc, drf.ValidationError):
        errors = field_errors(
            flatten(exc.get_full_details(), "", api_settings.NON_FIELD_ERRORS_KEY)
        )
        # 400, as DRF answers invalid input; the fields are in ``errors``.
        return BadRequestException(_("The submitted data is not valid."), code="invalid"), errors
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        challenge = getattr(exc, "auth_header", None)
        if not challenge:
            # DRF's rule: a 401 must name a scheme in WWW-Authenticate (RFC 9110); when
            # the first authentication class names none (a session), the answer is 403.
            # The code still says "not authenticated", not "not allowed".
            return status_error(403, exc.detail, _code(exc)), None
        return UnauthorizedException(exc.detail, code=_code(exc), www_authenticate=challenge), None
    if isinstance(exc, drf.PermissionDenied) and getattr(exc, "auth_header", None):
        # A token used beyond its scopes: RFC 6750's challenge goes with the 403.
        return ForbiddenException(
            exc.detail, code=_code(exc), www_authenticate=exc.auth_header
        ), None
    if isinstance(exc, drf.Throttled):
        return TooManyRequestsException(exc.detail, code="throttled", retry_after=exc.wait), None
    if isinstance(exc, drf.APIException):
        return status_error(exc.status_code, exc.detail, _code(exc)), None
    return app_error(exc), None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's ``EXCEPTION_HANDLER``: DRF's exceptions, the suite's and Django's as the same
    problem document every other view of the site answers. JSON clients get
    ``application/problem+json``; the browsable API shows the document in its page.
    Anything else is left to DRF (a 500, in the suite's format through its handlers)."""
    error, errors = suite_error(exc)
    if error is None:
        return None
    response = Response(
        problem(error, errors), status=error.status_code, headers=error.response_headers()
    )
    renderer = getattr(context.get("request"), "accepted_renderer", None)
    if renderer is None or "json" in str(getattr(renderer, "media_type", "")):
        response.content_type = PROBLEM_JSON
    set_rollback()
    return response
