"""``execute_graphql()``: the function the view calls; usable from a console or a test.

It never raises for client input: every outcome is a response dict with ``data`` and,
only when there are errors, ``errors`` (a list of ``{"message", "locations", "path"}``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.http import HttpRequest
from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    GraphQLSchema,
    OperationType,
    execute,
    get_operation_ast,
)

from appframework.auth.scopes import READ, WRITE, insufficient_scope
from appframework.auth.tokens import ApiToken, current_api_token, current_api_token_sync
from appframework.conf import app_settings, derived_setting
from appframework.container import container
from appframework.exceptions import AppFrameworkError

from .documents import DocumentCache, Limits, Prepared
from .schema import get_schema

__all__ = [
    "aexecute_graphql",
    "configured_limits",
    "document_cache",
    "execute_graphql",
    "format_error",
    "internal_error",
]

logger = logging.getLogger("appframework.graphql")

GENERIC_MESSAGE = "Internal server error."

# graphql-core appends " Did you mean 'a', 'b' or 'c'?" (names only, so no "?" inside)
# to validation and input-coercion messages; 3.2 has no switch to leave it out.
_SUGGESTION = re.compile(r" ?Did you mean [^?]*\?")


@derived_setting
def document_cache() -> DocumentCache:
    """The process-wide document cache (rebuilt when settings change)."""
    return DocumentCache(int(app_settings.GRAPHQL.DOCUMENT_CACHE_SIZE or 0))


@derived_setting
def configured_limits() -> Limits:
    """The document limits of ``APPFRAMEWORK["GRAPHQL"]`` (rebuilt when settings change)."""
    conf = app_settings.GRAPHQL
    return Limits(
        max_depth=conf.MAX_DEPTH,
        max_tokens=conf.MAX_TOKENS,
        max_aliases=conf.MAX_ALIASES,
        max_root_fields=conf.MAX_ROOT_FIELDS,
        max_fields=conf.MAX_FIELDS,
        introspection=bool(conf.INTROSPECTION),
    )


def format_error(error: GraphQLError, *, hide_suggestions: bool = False) -> dict[str, Any]:
    """``message``, ``locations``, ``path`` (and ``extensions``) of one error.

    An unexpected exception inside a resolver is logged with its traceback and, unless
    ``DEBUG`` is on, shown as a generic message; the suite's own exceptions (Forbidden,
    Unauthorized, ...) are meant for clients and keep theirs, with their HTTP status as
    ``extensions.status``. ``hide_suggestions`` drops graphql-core's "Did you mean ...?"
    hints, which would reveal the schema's names with introspection switched off.
    """
    formatted: dict[str, Any] = dict(error.formatted)
    original = error.original_error
    if isinstance(original, AppFrameworkError):
        formatted["message"] = str(original.detail)
        extensions = dict(formatted.get("extensions") or {})
        extensions.setdefault("status", original.status_code)
        extensions.setdefault("code", original.code)
        formatted["extensions"] = extensions
    elif original is not None and not isinstance(original, GraphQLError):
        logger.error(
            "Unexpected error in GraphQL resolver at %s",
            error.path,
            exc_info=(type(original), original, original.__traceback__),
        )
        if not settings.DEBUG:
            formatted["message"] = GENERIC_MESSAGE
    if hide_suggestions and error.path is None:
        # No path: reported before execution (syntax, validation, variables), in
        # graphql-core's words. A resolver's error has a path and is the application's.
        formatted["message"] = _SUGGESTION.sub("", formatted["message"])
    return formatted


def _response(result: ExecutionResult | Prepared) -> dict[str, Any]:
    hide = not configured_limits().introspection
    errors = result.errors
    body: dict[str, Any] = {"data": None if isinstance(result, Prepared) else result.data}
    if errors:
        body["errors"] = [format_error(e, hide_suggestions=hide) for e in errors]
    return body


def internal_error(exc: BaseException) -> dict[str, Any]:
    """Log ``exc`` and the response dict that reports it (message masked unless DEBUG)."""
    logger.error("GraphQL execution failed", exc_info=exc)
    message = f"{type(exc).__name__}: {exc}" if settings.DEBUG else GENERIC_MESSAGE
    return {"data": None, "errors": [{"message": message}]}


def _prepared(schema: GraphQLSchema, query: str, *, cached_only: bool = False) -> Prepared | None:
    cache = document_cache()
    if cached_only:
        return cache.peek(schema, query, configured_limits())
    return cache.get(schema, query, configured_limits())


def _beyond_scope(
    token: ApiToken | None, document: DocumentNode, operation_name: str | None
) -> Prepared | None:
    """The refusal of an operation the bearer token's scopes do not cover (``write``
    for a mutation, ``read`` for a query or subscription); None when they do, or the
    token is not limited."""
    if token is None or token.scopes is None:
        return None
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return None  # no such operation: execute() says so in its own words
    needed = WRITE if operation.operation == OperationType.MUTATION else READ
    if token.has_scope(needed):
        return None
    error = insufficient_scope(needed)
    return Prepared(None, (GraphQLError(str(error.detail), original_error=error),))


def _start(
    request: HttpRequest | None,
    query: str,
    variables: Mapping[str, Any] | None,
    operation_name: str | None,
    schema: GraphQLSchema,
    context: Any,
    prepared: Prepared | None = None,
    token: ApiToken | None = None,
) -> Any:
    """Prepared (errors before execution) or what ``execute`` returned (maybe awaitable)."""
    if prepared is None:
        prepared = _prepared(schema, query)
        assert prepared is not None
    if prepared.document is None:
        return prepared
    refused = _beyond_scope(token, prepared.document, operation_name)
    if refused is not None:
        return refused
    return execute(
        schema,
        prepared.document,
        context_value=context
        if context is not None
        else {"request": request, "container": container},
        variable_values=dict(variables) if variables is not None else None,
        operation_name=operation_name,
    )


def execute_graphql(
    request: HttpRequest | None = None,
    *,
    query: str,
    variables: Mapping[str, Any] | None = None,
    operation_name: str | None = None,
    schema: GraphQLSchema | None = None,
    context: Any = None,
) -> dict[str, Any]:
    """Run ``query`` against ``schema`` (default: the configured one) and return the
    response dict. ``request`` may be None outside HTTP; ``info.context`` is
    ``{"request": request, "container": container}`` unless ``context`` is given.
    A bearer token limited to scopes runs a mutation only with ``write`` and a query
    only with ``read``: otherwise nothing runs and the one error has
    ``extensions.code`` ``insufficient_scope`` (status 403).
    Async resolvers are awaited on a private event loop, so this works from any sync
    code; in async code use :func:`aexecute_graphql`.
    """
    try:
        schema = schema or get_schema()
        token = current_api_token_sync(request) if request is not None else None
        result = _start(request, query, variables, operation_name, schema, context, None, token)
        if not isinstance(result, ExecutionResult | Prepared):
            result = async_to_sync(_await)(result)
        return _response(result)
    except Exception as exc:  # the no-5xx guarantee: anything else is logged and reported
        return internal_error(exc)


async def aexecute_graphql(
    request: HttpRequest | None = None,
    *,
    query: str,
    variables: Mapping[str, Any] | None = None,
    operation_name: str | None = None,
    schema: GraphQLSchema | None = None,
    context: Any = None,
) -> dict[str, Any]:
    """The async twin of :func:`execute_graphql`, for async views and resolvers."""
    try:
        schema = schema or get_schema()
        # A cache miss parses and validates (milliseconds of CPU): not on the event loop.
        prepared = _prepared(schema, query, cached_only=True) or await sync_to_async(_prepared)(
            schema, query
        )
        token = await current_api_token(request) if request is not None else None
        result = _start(request, query, variables, operation_name, schema, context, prepared, token)
        if not isinstance(result, ExecutionResult | Prepared):
            result = await result
        return _response(result)
    except Exception as exc:
        return internal_error(exc)


async def _await(awaitable: Any) -> Any:
    return await awaitable
