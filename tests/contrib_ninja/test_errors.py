"""appframework.contrib.ninja.install_exception_handlers: every error a ninja API raises
(its own validation errors, HttpError, throttling, Django's and the suite's exceptions) is
the suite's problem document; a method the path does not answer too."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from .conftest import JSON, problem

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.contrib_ninja.urls")]


def _post_json(body: bytes) -> Any:
    return Client().post("/t/validate", body, content_type="application/json", **JSON)


def test_a_missing_field_is_422_invalid_with_field_errors() -> None:
    body = problem(_post_json(b'{"body": "text"}'), 422, "invalid")
    assert body["title"] == "Unprocessable Content"
    assert body["detail"] == "The submitted data is not valid."
    # ninja's location (body, the parameter, the field) dotted: field → [{code, message}].
    assert body["errors"] == {
        "body.payload.title": [{"code": "missing", "message": "Field required"}]
    }


def test_a_wrong_type_is_422_with_pydantics_code_for_each_field() -> None:
    body = problem(_post_json(b'{"title": 3, "body": ["x"]}'), 422, "invalid")
    assert body["errors"] == {
        "body.payload.title": [
            {"code": "string_type", "message": "Input should be a valid string"}
        ],
        "body.payload.body": [{"code": "string_type", "message": "Input should be a valid string"}],
    }


def test_a_valid_body_passes_the_validation() -> None:
    response = _post_json(b'{"title": "fine"}')
    assert response.status_code == 200
    assert response.json() == {"title": "fine", "body": ""}


def test_a_body_that_is_not_json_is_a_400_bad_request_problem() -> None:
    body = problem(_post_json(b"{not json"), 400, "bad_request")
    assert body["detail"] == "Cannot parse request body"


def test_http_error_409_is_a_409_problem_with_its_message() -> None:
    body = problem(Client().get("/t/conflict", **JSON), 409, "error")
    assert body["title"] == "Conflict"
    assert body["detail"] == "That title is taken."


def test_http404_is_404_not_found_without_its_internal_message() -> None:
    body = problem(Client().get("/t/http404", **JSON), 404, "not_found")
    assert body["title"] == "Not Found"
    assert "internals" not in body["detail"]


def test_get_object_or_404_is_404_not_found() -> None:
    body = problem(Client().get("/t/missing-post", **JSON), 404, "not_found")
    assert body["detail"] == "The requested resource was not found."


def test_djangos_permission_denied_is_403_permission_denied_in_the_suites_words() -> None:
    body = problem(Client().get("/t/permission-denied", **JSON), 403, "permission_denied")
    assert body["detail"] == "You are not allowed to do this."


def test_the_suites_validation_exception_is_422_invalid() -> None:
    body = problem(Client().get("/t/suite-invalid", **JSON), 422, "invalid")
    assert body["detail"] == "title: too long."
    assert "errors" not in body


def test_ninja_throttling_answers_the_second_call_with_429_and_retry_after() -> None:
    first = Client().get("/t/throttled", **JSON)
    assert first.status_code == 200 and first.json() == {"ok": True}
    second = Client().get("/t/throttled", **JSON)
    problem(second, 429, "throttled")
    assert 1 <= int(second["Retry-After"]) <= 60


@pytest.mark.parametrize("path", ["/t/me", "/t/ame"])
def test_a_method_the_path_does_not_allow_is_a_405_problem_with_allow(path: str) -> None:
    # ninja answers it itself (a 405 whose body is "Method not allowed"), before any
    # auth: the suite's ErrorMiddleware is what puts it in the suite's format.
    response = Client().put(path, b"{}", content_type="application/json", **JSON)
    problem(response, 405, "method_not_allowed")
    assert response["Allow"] == "GET"


def test_a_browser_gets_the_error_as_an_html_page() -> None:
    # The handlers negotiate like the rest of the site: no JSON in Accept, an HTML page.
    response = Client().get("/t/http404", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
