"""ErrorMiddleware: the suite's exceptions mapped to HTTP answers."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import BadRequest, PermissionDenied
from django.test import AsyncClient, Client

from appframework.exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    TooManyRequestsException,
    UnauthorizedException,
    ValidationException,
)

pytestmark = pytest.mark.urls("tests.auth.urls")

JSON = {"HTTP_ACCEPT": "application/json"}
BROWSER = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

CASES = [
    ("unauthorized", 401, "Unauthorized", "who are you"),
    ("forbidden", 403, "Forbidden", "not you"),
    ("bad-request", 400, "Bad Request", "bad input"),
    ("validation", 422, "Unprocessable Content", "title is required"),
    ("too-many", 429, "Too Many Requests", "slow down"),
]
CODES = {
    "unauthorized": "not_authenticated",
    "forbidden": "permission_denied",
    "bad-request": "bad_request",
    "validation": "invalid",
    "too-many": "throttled",
}


def test_error_middleware_is_installed_in_test_settings() -> None:
    assert "appframework.middleware.ErrorMiddleware" in django_settings.MIDDLEWARE


# -- class hierarchy -------------------------------------------------------------------------------
def test_forbidden_exception_is_a_django_permission_denied() -> None:
    assert issubclass(ForbiddenException, PermissionDenied)


def test_bad_request_exception_is_a_django_bad_request() -> None:
    assert issubclass(BadRequestException, BadRequest)


def test_every_error_is_an_appframework_error_with_its_status() -> None:
    for cls, status in [
        (UnauthorizedException, 401),
        (ForbiddenException, 403),
        (BadRequestException, 400),
        (ValidationException, 422),
        (TooManyRequestsException, 429),
    ]:
        assert issubclass(cls, AppFrameworkError)
        assert cls.status_code == status


def test_too_many_requests_rounds_retry_after_up_to_whole_seconds() -> None:
    assert TooManyRequestsException(retry_after=2.5).response_headers() == {"Retry-After": "3"}
    assert TooManyRequestsException(retry_after=0.1).response_headers() == {"Retry-After": "1"}
    assert TooManyRequestsException(retry_after=4).response_headers() == {"Retry-After": "4"}
    assert TooManyRequestsException().response_headers() == {}


# -- JSON clients ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "status", "title", "detail"), CASES, ids=[c[0] for c in CASES])
def test_error_for_json_client_is_problem_json_with_status_title_detail(
    client: Client, kind: str, status: int, title: str, detail: str
) -> None:
    response = client.get(f"/t/raise/{kind}", **JSON)
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["title"] == title
    assert body["detail"] == detail


@pytest.mark.parametrize(("kind", "status", "title", "detail"), CASES, ids=[c[0] for c in CASES])
async def test_error_from_async_view_for_json_client_is_problem_json(
    kind: str, status: int, title: str, detail: str
) -> None:
    response = await AsyncClient().get(f"/t/araise/{kind}", headers={"Accept": "application/json"})
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "code": CODES[kind],
    }


def test_too_many_requests_sends_retry_after_3_for_2_5_seconds(client: Client) -> None:
    response = client.get("/t/raise/too-many", **JSON)
    assert response.status_code == 429
    assert response["Retry-After"] == "3"


def test_too_many_requests_sends_retry_after_to_browsers_too(client: Client) -> None:
    assert client.get("/t/raise/too-many", **BROWSER)["Retry-After"] == "3"


def test_client_without_accept_header_gets_problem_json(client: Client) -> None:
    response = client.get("/t/raise/forbidden")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"


def test_curl_style_accept_any_gets_problem_json(client: Client) -> None:
    response = client.get("/t/raise/validation", HTTP_ACCEPT="*/*")
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"


# -- browsers ----------------------------------------------------------------------------------------
def test_forbidden_for_browser_is_a_small_html_page(client: Client) -> None:
    response = client.get("/t/raise/forbidden", **BROWSER)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>403 Forbidden</h1>" in response.content.decode()


def test_bad_request_for_browser_is_a_small_html_page(client: Client) -> None:
    response = client.get("/t/raise/bad-request", **BROWSER)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>400 Bad Request</h1>" in response.content.decode()


@pytest.mark.parametrize(
    ("kind", "status", "title"),
    [
        ("unauthorized", 401, "Unauthorized"),
        ("validation", 422, "Unprocessable Content"),
        ("too-many", 429, "Too Many Requests"),
    ],
)
def test_401_422_429_for_browser_are_text_html(
    client: Client, kind: str, status: int, title: str
) -> None:
    response = client.get(f"/t/raise/{kind}", **BROWSER)
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert title in response.content.decode()


def test_html_error_page_escapes_the_detail(rf: Any) -> None:
    from appframework.errors import response_for_error

    request = rf.get("/", HTTP_ACCEPT="text/html")
    response = response_for_error(request, UnauthorizedException("<script>alert(1)</script>"))
    assert response is not None
    assert "<script>" not in response.content.decode()
    assert "&lt;script&gt;" in response.content.decode()


# -- without the middleware Django still answers 403/400, never 500 -----------------------------------
@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("unauthorized", 403),
        ("forbidden", 403),
        ("bad-request", 400),
        ("validation", 400),
        ("too-many", 400),
    ],
)
def test_without_error_middleware_django_answers_403_or_400(
    settings: Any, kind: str, status: int
) -> None:
    settings.MIDDLEWARE = [
        m for m in settings.MIDDLEWARE if m != "appframework.middleware.ErrorMiddleware"
    ]
    response = Client().get(f"/t/raise/{kind}", **BROWSER)
    assert response.status_code == status
