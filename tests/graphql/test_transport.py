"""Requests and answers: a body that is not a GraphQL request is 400 (415 for a valid one
under the wrong content type), methods other than POST 405, and the response body is
``{"data": ..., "errors": [...]}`` with ``errors`` only when there are some."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from . import schemas
from .conftest import Configure
from .helpers import json_body, post, raw

pytestmark = [pytest.mark.usefixtures("gql")]

HELLO = b'{"query": "{ hello }"}'


def assert_rejected_before_execution(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = json_body(response)
    assert isinstance(body, dict)
    assert isinstance(body.get("errors"), list) and body["errors"], body
    assert all(isinstance(e.get("message"), str) and e["message"] for e in body["errors"])
    assert schemas.CALLS == [], "a resolver ran for a request rejected before execution"
    return body


# -- rule 1: not valid JSON -> 400 -------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"{'query': '{ hello }'}",
        b'{"query": "{ hello }"',
        b"query=%7B+hello+%7D",
        b"{ hello }",
        b'{"query": "{ hello }"} trailing',
        b"\xef\xbb\xbf" + HELLO,  # a UTF-8 BOM is not JSON
    ],
    ids=[
        "empty",
        "open-brace",
        "single-quotes",
        "truncated",
        "form-encoded",
        "raw-graphql",
        "trailing-garbage",
        "bom",
    ],
)
def test_invalid_json_with_application_json_is_400_before_execution(
    client: Client, data: bytes
) -> None:
    assert_rejected_before_execution(raw(client, data, "application/json"), 400)


@pytest.mark.parametrize("data", [b"{", b"{ hello }", b"not json at all", b""])
def test_invalid_json_with_text_plain_is_400_before_execution(client: Client, data: bytes) -> None:
    assert_rejected_before_execution(raw(client, data, "text/plain"), 400)


@pytest.mark.parametrize(
    "data",
    [b"[]", b'[{"query": "{ hello }"}]', b"42", b"-1.5", b'"{ hello }"', b"true", b"null"],
    ids=["empty-array", "batched-array", "int", "float", "string", "bool", "null"],
)
def test_json_body_that_is_not_an_object_is_400_before_execution(
    client: Client, data: bytes
) -> None:
    assert_rejected_before_execution(raw(client, data), 400)


@pytest.mark.parametrize(
    "body",
    [{}, {"variables": {}}, {"query": None}, {"Query": "{ hello }"}, {"operationName": "Q"}],
    ids=["empty-object", "variables-only", "query-null", "wrong-case-key", "operation-only"],
)
def test_request_without_query_is_400_before_execution(
    client: Client, body: dict[str, Any]
) -> None:
    assert_rejected_before_execution(raw(client, json.dumps(body).encode()), 400)


@pytest.mark.parametrize("query", [42, 1.5, True, ["{ hello }"], {"q": "{ hello }"}])
def test_query_that_is_not_a_string_is_400_before_execution(client: Client, query: Any) -> None:
    assert_rejected_before_execution(post(client, query), 400)


@pytest.mark.parametrize("variables", [[], ["a"], "{}", '{"a": 1}', 3, True])
def test_variables_that_are_not_an_object_are_400_before_execution(
    client: Client, variables: Any
) -> None:
    assert_rejected_before_execution(post(client, "{ hello }", variables=variables), 400)


@pytest.mark.parametrize("operation_name", [1, True, [], {}, ["Q"]])
def test_operation_name_that_is_not_a_string_is_400_before_execution(
    client: Client, operation_name: Any
) -> None:
    assert_rejected_before_execution(
        post(client, "query Q { hello }", operationName=operation_name), 400
    )


@pytest.mark.parametrize("extensions", [[], "x", 1, True, ["persistedQuery"]])
def test_extensions_that_are_not_an_object_are_400_before_execution(
    client: Client, extensions: Any
) -> None:
    assert_rejected_before_execution(post(client, "{ hello }", extensions=extensions), 400)


def test_null_variables_operation_name_and_extensions_are_accepted(client: Client) -> None:
    response = post(client, "{ hello }", variables=None, operationName=None, extensions=None)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


@pytest.mark.parametrize("key", ["variables", "operationName", "extensions"])
def test_each_null_optional_field_alone_is_accepted(client: Client, key: str) -> None:
    response = post(client, "{ hello }", **{key: None})
    assert response.status_code == 200
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


def test_extensions_object_is_accepted_and_ignored(client: Client) -> None:
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": "abc"}, "tracing": True}
    response = post(client, "{ hello }", extensions=extensions)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


def test_unknown_body_keys_are_ignored(client: Client) -> None:
    response = post(client, "{ hello }", id="abc", foo=[1, 2], queryId=None)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


def test_variables_object_is_used(client: Client) -> None:
    response = post(client, "query($n: String) { hello(name: $n) }", variables={"n": "Ann"})
    assert json_body(response) == {"data": {"hello": "Hello, Ann!"}}


def test_operation_name_selects_the_operation(client: Client) -> None:
    document = 'query A { hello } query B { echo(value: "b") }'
    response = post(client, document, operationName="B")
    assert json_body(response) == {"data": {"echo": "b"}}
    assert schemas.CALLS == ["echo"]


# -- content type ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=xyz",
        "application/graphql",
        "application/jsonx",
        "application/json-patch+json",
        "",
    ],
)
def test_valid_json_with_a_non_json_content_type_is_415_before_execution(
    client: Client, content_type: str
) -> None:
    response = client.generic("POST", "/graphql", data=HELLO, content_type=content_type)
    assert_rejected_before_execution(response, 415)


def test_valid_json_with_no_content_type_header_at_all_is_415(client: Client) -> None:
    response = client.generic("POST", "/graphql", data=HELLO, CONTENT_TYPE="")
    assert_rejected_before_execution(response, 415)


@pytest.mark.parametrize("charset", ["latin-1", "utf-16", "ascii"])
def test_json_content_type_with_a_non_utf8_charset_is_415(client: Client, charset: str) -> None:
    response = raw(client, HELLO, f"application/json; charset={charset}")
    assert_rejected_before_execution(response, 415)


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        "application/json; charset=utf8",
        "APPLICATION/JSON",
    ],
)
def test_application_json_with_or_without_utf8_charset_is_accepted(
    client: Client, content_type: str
) -> None:
    response = raw(client, HELLO, content_type)
    assert response.status_code == 200, response.content
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


@pytest.mark.parametrize(
    "data",
    [
        b'{"query": "{ hello(name: \\"\xff\\") }"}',
        b'{"query": "{ hello(name: \\"\xc3\\") }"}',
        b'{"query": "{ hello(name: \\"\xed\xa0\x80\\") }"}',  # an encoded surrogate
        '{"query": "{ hello }"}'.encode("utf-16"),
        b"\xff\xfe\x00\x00",
    ],
    ids=["xff", "truncated-sequence", "encoded-surrogate", "utf-16", "garbage"],
)
def test_body_that_is_not_utf8_is_400_before_execution(client: Client, data: bytes) -> None:
    assert_rejected_before_execution(raw(client, data), 400)


def test_utf8_body_round_trips_non_ascii_text(client: Client) -> None:
    data = json.dumps({"query": '{ echo(value: "Grüße, 世界 🎉") }'}, ensure_ascii=False).encode()
    response = raw(client, data)
    assert response.status_code == 200
    assert json_body(response) == {"data": {"echo": "Grüße, 世界 🎉"}}
    assert "Grüße, 世界 🎉".encode() in response.content


def test_too_large_body_is_a_4xx_json_answer_not_a_500(client: Client, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    data = json.dumps({"query": "{ hello }", "variables": {"pad": "x" * 5000}}).encode()
    assert_rejected_before_execution(raw(client, data), 400)


def test_deeply_nested_json_body_is_not_a_500(client: Client) -> None:
    data = b'{"query": "{ hello }", "variables": {"v": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    response = raw(client, data)
    assert response.status_code == 400
    assert schemas.CALLS == []
    json_body(response)


# -- response shape ---------------------------------------------------------------------
def test_success_is_application_json_with_data_and_no_errors_key(client: Client) -> None:
    response = post(client, "{ hello }")
    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == "application/json"
    body = json.loads(response.content)
    assert body == {"data": {"hello": "Hello, world!"}}
    assert "errors" not in body


def test_resolver_error_entry_has_message_locations_and_path(client: Client) -> None:
    response = post(client, "{ hello\n  visible }")
    assert response.status_code == 200
    body = json_body(response)
    assert body["data"] == {"hello": "Hello, world!", "visible": None}
    [error] = body["errors"]
    assert error["message"] == "visible"
    assert error["locations"] == [{"line": 2, "column": 3}]
    assert error["path"] == ["visible"]


def test_resolver_error_path_uses_the_alias(client: Client) -> None:
    response = post(client, "{ first: hello second: visible }")
    body = json_body(response)
    assert body["data"] == {"first": "Hello, world!", "second": None}
    assert body["errors"][0]["path"] == ["second"]


def test_syntax_error_has_null_data(client: Client) -> None:
    body = json_body(post(client, "{ hello "))
    assert "data" in body and body["data"] is None
    assert body["errors"][0]["message"].startswith("Syntax Error")
    assert body["errors"][0]["locations"] == [{"line": 1, "column": 9}]


def test_validation_error_has_null_data(client: Client) -> None:
    body = json_body(post(client, "{ nope }"))
    assert "data" in body and body["data"] is None
    assert "nope" in body["errors"][0]["message"]
    assert body["errors"][0]["locations"] == [{"line": 1, "column": 3}]
    assert schemas.CALLS == []


def test_response_is_valid_json_in_utf8_without_ascii_escapes(client: Client) -> None:
    response = post(client, '{ echo(value: "é") }')
    assert response.content == '{"data":{"echo":"é"}}'.encode()


# -- other methods -------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS"])
@pytest.mark.parametrize("graphiql", [True, False])
def test_other_methods_are_405_with_allow_post_and_json_body(
    client: Client, configure: Configure, method: str, graphiql: bool
) -> None:
    configure(GRAPHIQL=graphiql)
    response = client.generic(method, "/graphql", data=HELLO, content_type="application/json")
    assert response.status_code == 405
    assert "POST" in [m.strip() for m in response["Allow"].split(",")]
    body = json_body(response)
    assert body["errors"][0]["message"]
    assert schemas.CALLS == []


@pytest.mark.urls("tests.graphql.urls")
def test_custom_path_mount_serves_the_endpoint(client: Client) -> None:
    response = post(client, "{ hello }", path="/custom/api/gql")
    assert json_body(response) == {"data": {"hello": "Hello, world!"}}


def test_configured_view_follows_the_async_setting(configure: Configure) -> None:
    from appframework_graphql.views import async_graphql_view, configured_view, graphql_view

    configure(ASYNC=False)
    assert configured_view() is graphql_view
    configure(ASYNC=True)
    assert configured_view() is async_graphql_view
