"""What the API framework adapters share: any error, whatever raised it, becomes one of
the suite's exceptions and is answered with the suite's problem document (``status``,
``title``, ``detail``, ``code``), its headers and, for invalid input, the field errors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from django.http import HttpRequest, HttpResponse

from ..errors import response_for_error
from ..exceptions import AppFrameworkError
from ..http import PROBLEM_JSON, problem_document

__all__ = ["field_errors", "flatten", "problem", "problem_http_response", "status_error"]


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


def _is_leaf(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"message", "code"}


def flatten(details: Any, prefix: str, default_field: str) -> Iterable[tuple[str, str, str]]:
    """DRF's nested ``get_full_details()`` as ``(dotted.field, code, message)``: nested
    serializers join with dots, a ``many=True`` list keeps its index."""
    if _is_leaf(details):
        yield (prefix or default_field, str(details["code"]), str(details["message"]))
    elif isinstance(details, Mapping):
        for key, value in details.items():
            yield from flatten(value, f"{prefix}.{key}" if prefix else str(key), default_field)
    elif isinstance(details, list):
        for index, value in enumerate(details):
            name = prefix if _is_leaf(value) else (f"{prefix}.{index}" if prefix else str(index))
            yield from flatten(value, name, default_field)


def problem_http_response(
    request: HttpRequest, error: AppFrameworkError, errors: dict[str, Any] | None = None
) -> HttpResponse:
    """The response for ``error``: the suite's one mapping (negotiated on ``Accept``);
    with field ``errors``, the problem document carrying them."""
    if errors is None:
        return response_for_error(request, error)
    response = HttpResponse(
        json.dumps(problem(error, errors)), status=error.status_code, content_type=PROBLEM_JSON
    )
    for name, value in error.response_headers().items():
        response[name] = value
    return response
