"""The GraphQL endpoint: POST executes, GET shows GraphiQL (when enabled) or 405.

Status codes: 400 for a request that is not a GraphQL request (bad JSON, not an object,
no ``query``, a field of the wrong type), 415 for valid JSON sent without
``application/json``, 405 for other methods, and 200 for every execution result,
errors included. Every body is JSON, never HTML, except the GraphiQL page itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from appframework import bounded_json
from appframework.conf import app_settings

from .execution import aexecute_graphql, execute_graphql, internal_error
from .graphiql import render_graphiql

__all__ = ["GraphQLRequest", "async_graphql_view", "graphql_view", "parse_graphql_request"]

JSON = "application/json"


class RequestError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class GraphQLRequest:
    __slots__ = ("operation_name", "query", "variables")

    def __init__(
        self, query: str, variables: dict[str, Any] | None, operation_name: str | None
    ) -> None:
        self.query = query
        self.variables = variables
        self.operation_name = operation_name


def _json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> HttpResponse:
    try:
        try:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            encoded = content.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate ("\ud800" is valid JSON text) cannot be UTF-8: escape it.
            encoded = json.dumps(body, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (TypeError, ValueError, RecursionError) as exc:
        # A resolver produced something JSON cannot carry: report it, never a 500.
        encoded = json.dumps(internal_error(exc)).encode("ascii")
    response = HttpResponse(encoded, status=status, content_type=JSON)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> HttpResponse:
    return _json_response({"errors": [{"message": message}]}, status, headers)


def parse_graphql_request(request: HttpRequest) -> GraphQLRequest:
    """The body of a POST as a GraphQL request, or ``RequestError`` (400/415)."""
    charset = (request.content_params or {}).get("charset", "utf-8").lower()
    try:
        text = request.body.decode("utf-8")
        body = bounded_json.loads(text)
    except bounded_json.JsonNestingError:
        raise RequestError(
            400, f"The request body nests deeper than {bounded_json.MAX_DEPTH} levels."
        ) from None
    except (UnicodeDecodeError, ValueError):
        raise RequestError(400, "The request body is not valid JSON.") from None
    except Exception:  # e.g. RequestDataTooBig: still the client's fault
        raise RequestError(400, "The request body could not be read.") from None
    if not isinstance(body, dict):
        raise RequestError(400, "The request body must be a JSON object.")
    query = body.get("query")
    if query is None:
        raise RequestError(400, "The request has no 'query'.")
    if not isinstance(query, str):
        raise RequestError(400, "'query' must be a string.")
    variables = body.get("variables")
    if variables is not None and not isinstance(variables, dict):
        raise RequestError(400, "'variables' must be an object or null.")
    operation_name = body.get("operationName")
    if operation_name is not None and not isinstance(operation_name, str):
        raise RequestError(400, "'operationName' must be a string or null.")
    extensions = body.get("extensions")
    if extensions is not None and not isinstance(extensions, dict):
        raise RequestError(400, "'extensions' must be an object or null.")
    # Checked last: a body that is not a GraphQL request at all is 400 whatever its
    # content type; a well-formed one under the wrong type is 415.
    if request.content_type != JSON or charset not in ("utf-8", "utf8"):
        raise RequestError(415, "Send the GraphQL request as application/json (UTF-8).")
    return GraphQLRequest(query, variables, operation_name)


def graphiql_enabled() -> bool:
    flag = app_settings.GRAPHQL.GRAPHIQL
    return bool(settings.DEBUG) if flag is None else bool(flag)


def _wants_page(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "*/*")
    return "text/html" in accept or "*/*" in accept


def _not_post(request: HttpRequest) -> HttpResponse:
    ui = graphiql_enabled()
    if request.method in ("GET", "HEAD") and ui and _wants_page(request):
        return render_graphiql(request)
    allow = "GET, HEAD, POST" if ui else "POST"
    return _error(
        405,
        f"Method {request.method} is not allowed; queries and mutations use POST.",
        {"Allow": allow},
    )


def _graphql_request(request: HttpRequest) -> GraphQLRequest | HttpResponse:
    """The GraphQL request to run, or the response that ends it before execution."""
    if request.method != "POST":
        return _not_post(request)
    try:
        return parse_graphql_request(request)
    except RequestError as error:
        return _error(error.status, error.message)


def graphql_view(request: HttpRequest) -> HttpResponse:
    """The sync endpoint (WSGI, or ASGI in a worker thread)."""
    parsed = _graphql_request(request)
    if isinstance(parsed, HttpResponse):
        return parsed
    return _json_response(
        execute_graphql(
            request,
            query=parsed.query,
            variables=parsed.variables,
            operation_name=parsed.operation_name,
        )
    )


async def async_graphql_view(request: HttpRequest) -> HttpResponse:
    """The async endpoint: async resolvers run on the server's event loop."""
    parsed = _graphql_request(request)
    if isinstance(parsed, HttpResponse):
        return parsed
    return _json_response(
        await aexecute_graphql(
            request,
            query=parsed.query,
            variables=parsed.variables,
            operation_name=parsed.operation_name,
        )
    )


def configured_view() -> Callable[[HttpRequest], Any]:
    return async_graphql_view if app_settings.GRAPHQL.ASYNC else graphql_view
