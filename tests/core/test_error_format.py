"""One error format: every error is an RFC 9457 ``application/problem+json`` document
(``type``, ``title``, ``status``, ``detail``, ``code``) for a client that does not ask for
HTML, and a small ``text/html`` page with the same status for a browser.

Covers the suite's exceptions and Django's (``Http404``, ``PermissionDenied``,
``SuspiciousOperation``, ``BadRequest``, ``RequestDataTooBig``) raised from sync views
(WSGI, ``Client``) and async views (ASGI, ``AsyncClient``), a 405 from
``require_http_methods``, a URL no pattern matches, an unexpected exception (500, through
``handler500``), errors raised by a middleware before any view (the handlers of
``appframework.views``), the handlers called directly, and the GraphQL endpoint, which
keeps its own JSON bodies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpResponse
from django.test import AsyncClient, Client, RequestFactory, override_settings
from django.urls import get_resolver
from django.utils.html import escape

from appframework import views as handlers
from appframework.exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    MethodNotAllowedException,
    NotFoundException,
    PayloadTooLargeException,
    ServerErrorException,
    TooManyRequestsException,
    UnauthorizedException,
    UnsupportedMediaTypeException,
    ValidationException,
)
from appframework.http import PROBLEM_JSON, problem_response, wants_json

from .error_urls import SECRET

pytestmark = pytest.mark.urls("tests.core.error_urls")

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
# Accept headers of clients that do not ask for HTML (None: no Accept header at all).
API_ACCEPTS = {"json": "application/json", "any": "*/*", "none": None}
ALL_ACCEPTS = {**API_ACCEPTS, "browser": BROWSER_ACCEPT}
FLAVORS = ["sync", "async"]
# Headers that only some errors carry; every other error must not send them.
OPTIONAL_HEADERS = ("WWW-Authenticate", "Allow", "Retry-After")
SMALL_PAGE = 2048


@dataclass(frozen=True)
class Expected:
    status: int
    code: str
    title: str
    detail: str
    headers: dict[str, str] = field(default_factory=dict)


def expected(
    cls: type[AppFrameworkError],
    status: int,
    code: str,
    title: str,
    detail: str | None = None,
    **headers: str,
) -> Expected:
    return Expected(
        status,
        code,
        title,
        str(cls.default_detail) if detail is None else detail,
        {name.replace("_", "-"): value for name, value in headers.items()},
    )


NOT_FOUND = expected(NotFoundException, 404, "not_found", "Not Found")
FORBIDDEN = expected(ForbiddenException, 403, "permission_denied", "Forbidden")
BAD_REQUEST = expected(BadRequestException, 400, "bad_request", "Bad Request")
TOO_LARGE = expected(PayloadTooLargeException, 413, "payload_too_large", "Content Too Large")
SERVER_ERROR = expected(ServerErrorException, 500, "server_error", "Internal Server Error")
METHOD_NOT_ALLOWED = expected(
    MethodNotAllowedException, 405, "method_not_allowed", "Method Not Allowed", Allow="GET"
)

# kind (tests/core/error_urls.py RAISERS) → the answer. Django's exceptions get the
# suite's default texts: their messages are for developers.
RAISED: dict[str, Expected] = {
    "unauthorized": expected(
        UnauthorizedException,
        401,
        "not_authenticated",
        "Unauthorized",
        "Log in first.",
        WWW_Authenticate='Bearer realm="api"',
    ),
    "unauthorized-no-challenge": expected(
        UnauthorizedException, 401, "not_authenticated", "Unauthorized"
    ),
    "forbidden": FORBIDDEN,
    "bad-request": BAD_REQUEST,
    "not-found": NOT_FOUND,
    "method-not-allowed": METHOD_NOT_ALLOWED,
    "payload-too-large": TOO_LARGE,
    "unsupported-media-type": expected(
        UnsupportedMediaTypeException, 415, "unsupported_media_type", "Unsupported Media Type"
    ),
    "validation": expected(ValidationException, 422, "invalid", "Unprocessable Content"),
    "too-many": expected(
        TooManyRequestsException, 429, "throttled", "Too Many Requests", Retry_After="2"
    ),
    "django-http404": NOT_FOUND,
    "django-permission-denied": FORBIDDEN,
    "django-suspicious-operation": BAD_REQUEST,
    "django-bad-request": BAD_REQUEST,
    "django-request-data-too-big": TOO_LARGE,
}


def fetch(
    flavor: str,
    path: str,
    accept: str | None,
    *,
    method: str = "get",
    headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> HttpResponse:
    """One request through the whole middleware stack: WSGI (``Client``) for "sync",
    ASGI (``AsyncClient``) for "async"; exceptions become responses as in production."""
    sent = dict(headers or {})
    if accept is not None:
        sent["Accept"] = accept
    if flavor == "sync":
        client = Client(raise_request_exception=False)
        response: HttpResponse = getattr(client, method)(path, headers=sent, **kwargs)
        return response
    aclient = AsyncClient(raise_request_exception=False)
    aresponse: HttpResponse = async_to_sync(getattr(aclient, method))(path, headers=sent, **kwargs)
    return aresponse


def body_of(response: HttpResponse) -> Any:
    """The JSON body (also of responses made without the test client)."""
    return json.loads(response.content)


def assert_optional_headers(response: HttpResponse, want: Expected) -> None:
    for name in OPTIONAL_HEADERS:
        if name in want.headers:
            assert response[name] == want.headers[name]
        else:
            assert name not in response


def assert_problem(response: HttpResponse, want: Expected) -> None:
    assert response.status_code == want.status
    assert response["Content-Type"] == PROBLEM_JSON
    assert body_of(response) == {
        "type": "about:blank",
        "title": want.title,
        "status": want.status,
        "detail": want.detail,
        "code": want.code,
    }
    assert SECRET not in response.content.decode()
    assert_optional_headers(response, want)


def assert_html_page(response: HttpResponse, want: Expected) -> None:
    assert response.status_code == want.status
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert f"<h1>{want.status} {escape(want.title)}</h1>" in page
    assert escape(want.detail) in page
    assert len(response.content) < SMALL_PAGE
    assert SECRET not in page
    assert_optional_headers(response, want)


def assert_answer(response: HttpResponse, want: Expected, accept_name: str) -> None:
    if accept_name == "browser":
        assert_html_page(response, want)
    else:
        assert_problem(response, want)


# -- exceptions raised by views ------------------------------------------------------------------
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(API_ACCEPTS))
@pytest.mark.parametrize("kind", list(RAISED))
def test_error_raised_by_view_is_problem_json_for_client_not_asking_for_html(
    kind: str, accept_name: str, flavor: str
) -> None:
    response = fetch(flavor, f"/e/{flavor}/raise/{kind}", API_ACCEPTS[accept_name])
    assert_problem(response, RAISED[kind])


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("kind", list(RAISED))
def test_error_raised_by_view_is_small_html_page_with_same_status_for_browser(
    kind: str, flavor: str
) -> None:
    response = fetch(flavor, f"/e/{flavor}/raise/{kind}", BROWSER_ACCEPT)
    assert_html_page(response, RAISED[kind])


@pytest.mark.parametrize(
    ("cls", "status", "code", "title"),
    [
        (UnauthorizedException, 401, "not_authenticated", "Unauthorized"),
        (ForbiddenException, 403, "permission_denied", "Forbidden"),
        (BadRequestException, 400, "bad_request", "Bad Request"),
        (NotFoundException, 404, "not_found", "Not Found"),
        (MethodNotAllowedException, 405, "method_not_allowed", "Method Not Allowed"),
        (PayloadTooLargeException, 413, "payload_too_large", "Content Too Large"),
        (UnsupportedMediaTypeException, 415, "unsupported_media_type", "Unsupported Media Type"),
        (ValidationException, 422, "invalid", "Unprocessable Content"),
        (TooManyRequestsException, 429, "throttled", "Too Many Requests"),
        (ServerErrorException, 500, "server_error", "Internal Server Error"),
    ],
)
def test_each_exception_has_its_status_and_stable_code(
    cls: type[AppFrameworkError], status: int, code: str, title: str
) -> None:
    error = cls()
    assert cls.status_code == status
    assert error.code == code
    assert str(error.title) == title
    assert str(error.detail) == str(cls.default_detail)


def test_custom_code_replaces_the_default_code_in_the_problem() -> None:
    request = RequestFactory().get("/", HTTP_ACCEPT="application/json")
    from appframework.errors import response_for_error

    response = response_for_error(request, ForbiddenException("no", code="not_owner"))
    assert body_of(response)["code"] == "not_owner"


# -- 405 from require_http_methods / a class-based view --------------------------------------------
GET_ONLY = [
    pytest.param("sync", "/e/sync/get-only", {"GET"}, id="sync-require_http_methods"),
    pytest.param("async", "/e/async/get-only", {"GET"}, id="async-require_http_methods"),
    pytest.param("sync", "/e/class/get-only", {"GET", "HEAD", "OPTIONS"}, id="wsgi-view-class"),
    pytest.param("async", "/e/class/get-only", {"GET", "HEAD", "OPTIONS"}, id="asgi-view-class"),
]


@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
@pytest.mark.parametrize(("flavor", "path", "allowed"), GET_ONLY)
def test_post_to_get_only_view_is_405_with_allow_in_the_one_format(
    flavor: str, path: str, allowed: set[str], accept_name: str
) -> None:
    response = fetch(flavor, path, ALL_ACCEPTS[accept_name], method="post")
    assert {m.strip() for m in response["Allow"].split(",")} == allowed
    want = Expected(
        405,
        "method_not_allowed",
        "Method Not Allowed",
        METHOD_NOT_ALLOWED.detail,
        {"Allow": response["Allow"]},
    )
    assert_answer(response, want, accept_name)


@pytest.mark.parametrize(("flavor", "path", "allowed"), GET_ONLY)
def test_get_to_get_only_view_is_answered_by_the_view(
    flavor: str, path: str, allowed: set[str]
) -> None:
    response = fetch(flavor, path, "application/json")
    assert response.status_code == 200
    assert response.json() == {"ok": True}


# -- a URL that no pattern matches -----------------------------------------------------------------
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(API_ACCEPTS))
def test_unknown_url_is_404_problem_json_for_client_not_asking_for_html(
    accept_name: str, flavor: str
) -> None:
    assert_problem(fetch(flavor, "/no/such/page", API_ACCEPTS[accept_name]), NOT_FOUND)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_unknown_url_is_small_html_404_for_browser_when_debug_is_off(flavor: str) -> None:
    assert_html_page(fetch(flavor, "/no/such/page", BROWSER_ACCEPT), NOT_FOUND)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_unknown_url_keeps_djangos_technical_404_page_for_browser_under_debug(
    flavor: str,
) -> None:
    with override_settings(DEBUG=True):
        response = fetch(flavor, "/no/such/page", BROWSER_ACCEPT)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "Using the URLconf defined in" in page
    assert "tests.core.error_urls" in page


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(API_ACCEPTS))
def test_unknown_url_is_404_problem_json_for_api_client_even_under_debug(
    accept_name: str, flavor: str
) -> None:
    with override_settings(DEBUG=True):
        response = fetch(flavor, "/no/such/page", API_ACCEPTS[accept_name])
    assert_problem(response, NOT_FOUND)


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
def test_404_written_by_a_view_keeps_the_views_own_body(flavor: str, accept_name: str) -> None:
    response = fetch(flavor, f"/e/{flavor}/own-404", ALL_ACCEPTS[accept_name])
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "no such post"}


# -- an unexpected exception: 500 through handler500, nothing leaked --------------------------------
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
def test_unexpected_exception_is_500_in_the_one_format_without_its_text(
    flavor: str, accept_name: str
) -> None:
    response = fetch(flavor, f"/e/{flavor}/crash", ALL_ACCEPTS[accept_name])
    assert_answer(response, SERVER_ERROR, accept_name)
    assert "RuntimeError" not in response.content.decode()


@pytest.mark.parametrize(
    ("status", "view"),
    [
        (400, handlers.bad_request),
        (403, handlers.permission_denied),
        (404, handlers.page_not_found),
        (500, handlers.server_error),
    ],
)
def test_error_urlconf_points_the_handlers_at_the_suites_views(status: int, view: Any) -> None:
    assert get_resolver("tests.core.error_urls").resolve_error_handler(status) is view


# -- a request body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413 ------------------------------------------
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
def test_body_over_data_upload_max_memory_size_is_413(flavor: str, accept_name: str) -> None:
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=16):
        response = fetch(
            flavor,
            f"/e/{flavor}/read-body",
            ALL_ACCEPTS[accept_name],
            method="post",
            data="x" * 1000,
            content_type="text/plain",
        )
    assert_answer(response, TOO_LARGE, accept_name)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_body_under_data_upload_max_memory_size_reaches_the_view(flavor: str) -> None:
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=16):
        response = fetch(
            flavor,
            f"/e/{flavor}/read-body",
            None,
            method="post",
            data="x" * 8,
            content_type="text/plain",
        )
    assert response.status_code == 200
    assert response.json() == {"length": 8}


# -- errors raised by a middleware, before any view: the handlers of appframework.views ------------
RAISING_MIDDLEWARE = "tests.core.error_urls.raise_in_middleware"

# What the handlers answer for an exception raised outside any view: the suite's own
# errors keep their texts and headers, Django's get the default texts.
OUTSIDE_VIEW: dict[str, Expected] = {
    **{kind: want for kind, want in RAISED.items() if kind != "method-not-allowed"},
    "crash": SERVER_ERROR,
}


@pytest.fixture
def raising_middleware(settings: Any) -> None:
    settings.MIDDLEWARE = [RAISING_MIDDLEWARE, *settings.MIDDLEWARE]


@pytest.mark.usefixtures("raising_middleware")
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", ["json", "browser"])
@pytest.mark.parametrize("kind", list(OUTSIDE_VIEW))
def test_error_raised_by_middleware_is_answered_in_the_one_format_by_the_handlers(
    kind: str, accept_name: str, flavor: str
) -> None:
    response = fetch(flavor, "/e/ok", ALL_ACCEPTS[accept_name], headers={"X-Raise": kind})
    assert_answer(response, OUTSIDE_VIEW[kind], accept_name)


@pytest.mark.usefixtures("raising_middleware")
@pytest.mark.parametrize("flavor", FLAVORS)
def test_method_not_allowed_raised_by_middleware_is_405_not_500(flavor: str) -> None:
    response = fetch(flavor, "/e/ok", "application/json", headers={"X-Raise": "method-not-allowed"})
    assert_problem(response, METHOD_NOT_ALLOWED)


# -- the handlers called directly ------------------------------------------------------------------
HANDLER_CASES = [
    pytest.param(handlers.page_not_found, Http404(SECRET), NOT_FOUND, id="404-http404"),
    pytest.param(handlers.page_not_found, None, NOT_FOUND, id="404-no-exception"),
    pytest.param(handlers.permission_denied, PermissionDenied(SECRET), FORBIDDEN, id="403-denied"),
    pytest.param(handlers.permission_denied, None, FORBIDDEN, id="403-no-exception"),
    pytest.param(
        handlers.permission_denied,
        UnauthorizedException("Log in first.", www_authenticate="Bearer"),
        expected(
            UnauthorizedException,
            401,
            "not_authenticated",
            "Unauthorized",
            "Log in first.",
            WWW_Authenticate="Bearer",
        ),
        id="401-suite-exception-keeps-status-text-header",
    ),
    pytest.param(
        handlers.bad_request, SuspiciousOperation(SECRET), BAD_REQUEST, id="400-suspicious"
    ),
    pytest.param(handlers.bad_request, BadRequest(SECRET), BAD_REQUEST, id="400-bad-request"),
    pytest.param(handlers.bad_request, None, BAD_REQUEST, id="400-no-exception"),
    pytest.param(handlers.bad_request, RequestDataTooBig(SECRET), TOO_LARGE, id="413-data-too-big"),
    pytest.param(
        handlers.bad_request,
        TooManyRequestsException(retry_after=2),
        RAISED["too-many"],
        id="429-suite-exception-keeps-retry-after",
    ),
]


@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
@pytest.mark.parametrize(("handler", "exception", "want"), HANDLER_CASES)
def test_handler_called_directly_answers_in_the_one_format(
    rf: RequestFactory, handler: Any, exception: Any, want: Expected, accept_name: str
) -> None:
    accept = ALL_ACCEPTS[accept_name]
    request = rf.get("/x") if accept is None else rf.get("/x", HTTP_ACCEPT=accept)
    response = handler(request) if exception is None else handler(request, exception)
    assert_answer(response, want, accept_name)


@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
def test_server_error_handler_called_directly_is_500_in_the_one_format(
    rf: RequestFactory, accept_name: str
) -> None:
    accept = ALL_ACCEPTS[accept_name]
    request = rf.get("/x") if accept is None else rf.get("/x", HTTP_ACCEPT=accept)
    assert_answer(handlers.server_error(request), SERVER_ERROR, accept_name)


# -- the negotiation and the document themselves -----------------------------------------------------
@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({}, True),
        ({"HTTP_ACCEPT": "*/*"}, True),
        ({"HTTP_ACCEPT": "application/json"}, True),
        ({"HTTP_ACCEPT": "application/problem+json"}, True),
        ({"HTTP_ACCEPT": BROWSER_ACCEPT}, False),
        ({"HTTP_ACCEPT": "text/html"}, False),
        ({"HTTP_ACCEPT": "text/html", "CONTENT_TYPE": "application/json"}, True),
    ],
)
def test_wants_json_is_false_only_for_clients_asking_for_html(
    rf: RequestFactory, headers: dict[str, str], problem: bool
) -> None:
    assert wants_json(rf.get("/", **headers)) is problem


def test_problem_response_defaults_title_to_the_status_phrase_and_omits_empty_code() -> None:
    response = problem_response(418, "short and stout")
    assert response["Content-Type"] == PROBLEM_JSON
    assert body_of(response) == {
        "type": "about:blank",
        "title": "I'm a Teapot",
        "status": 418,
        "detail": "short and stout",
    }


# -- the GraphQL endpoint keeps its own JSON bodies ----------------------------------------------------
@pytest.fixture
def graphiql_off(settings: Any) -> None:
    settings.APPFRAMEWORK = {
        "GRAPHQL": {"SCHEMA": "testproject.blog.schema.schema", "GRAPHIQL": False}
    }


@pytest.mark.usefixtures("graphiql_off")
@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("accept_name", list(ALL_ACCEPTS))
def test_graphql_get_without_graphiql_is_405_with_graphql_errors_not_problem_json(
    flavor: str, accept_name: str
) -> None:
    response = fetch(flavor, "/graphql", ALL_ACCEPTS[accept_name])
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response["Allow"] == "POST"
    body = response.json()
    assert list(body) == ["errors"]
    assert isinstance(body["errors"], list) and body["errors"]
    assert "GET" in body["errors"][0]["message"]


@pytest.mark.usefixtures("graphiql_off")
@pytest.mark.parametrize("flavor", FLAVORS)
def test_graphql_bad_json_is_400_with_graphql_errors_not_problem_json(flavor: str) -> None:
    response = fetch(
        flavor,
        "/graphql",
        "application/json",
        method="post",
        data="{not json",
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert list(response.json()) == ["errors"]
