"""Execution: every execution outcome (syntax, validation and resolver errors included)
is answered 200 with an ``errors`` list, unexpected resolver exceptions are masked
unless DEBUG, the suite's own exceptions keep their message and HTTP status, every
resolver's context is the request and the container, and ``execute_graphql()`` works
without HTTP."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.http import HttpRequest
from django.test import Client
from graphql import GraphQLObjectType, GraphQLSchema

from appframework.container import container
from appframework_graphql import execute_graphql
from appframework_graphql.execution import GENERIC_MESSAGE

from . import schemas
from .conftest import Configure
from .helpers import json_body, nested_query, post

pytestmark = [pytest.mark.usefixtures("gql")]


def ok_errors(response: Any) -> dict[str, Any]:
    """200, JSON, and a non-empty ``errors`` list."""
    assert response.status_code == 200, response.content
    body = json_body(response)
    assert isinstance(body["errors"], list) and body["errors"], body
    assert "data" in body
    return body


# -- rule 2: every Errors-table GraphQL kind is 200 with errors ---------------------------
def test_syntax_error_is_200_with_errors_and_null_data(client: Client) -> None:
    body = ok_errors(post(client, "{ hello(name: }"))
    assert body["data"] is None
    assert body["errors"][0]["message"].startswith("Syntax Error")
    assert schemas.CALLS == []


def test_validation_error_is_200_with_errors_and_null_data(client: Client) -> None:
    body = ok_errors(post(client, "{ hello(nom: 1) }"))
    assert body["data"] is None
    assert schemas.CALLS == []


def test_resolver_exception_is_200_with_partial_data(client: Client) -> None:
    body = ok_errors(post(client, "{ hello boom }"))
    assert body["data"] == {"hello": "Hello, world!", "boom": None}
    assert [e["path"] for e in body["errors"]] == [["boom"]]


def test_resolver_exception_in_non_null_field_nulls_data_still_200(client: Client) -> None:
    body = ok_errors(post(client, "{ hello strictBoom }"))
    assert body["data"] is None  # the non-null error propagates to the root
    assert body["errors"][0]["path"] == ["strictBoom"]


def test_several_resolver_errors_are_all_reported(client: Client) -> None:
    body = ok_errors(post(client, "{ hello boom visible }"))
    assert body["data"] == {"hello": "Hello, world!", "boom": None, "visible": None}
    assert sorted(e["path"][0] for e in body["errors"]) == ["boom", "visible"]


def test_depth_over_max_depth_is_200_with_errors(client: Client) -> None:
    body = ok_errors(post(client, nested_query(16)))
    assert body["data"] is None
    assert "depth" in body["errors"][0]["message"].lower()
    assert schemas.CALLS == []


def test_tokens_over_max_tokens_is_200_with_errors(client: Client, configure: Configure) -> None:
    configure(MAX_TOKENS=5)
    body = ok_errors(post(client, "{ a: hello b: hello }"))
    assert body["data"] is None
    assert "tokens" in body["errors"][0]["message"]
    assert schemas.CALLS == []


def test_unknown_operation_name_is_200_with_errors(client: Client) -> None:
    body = ok_errors(post(client, "query A { hello }", operationName="B"))
    assert body["data"] is None
    assert "B" in body["errors"][0]["message"]
    assert schemas.CALLS == []


def test_several_operations_without_operation_name_is_200_with_errors(client: Client) -> None:
    body = ok_errors(post(client, "query A { hello } query B { hello }"))
    assert body["data"] is None
    assert schemas.CALLS == []


@pytest.mark.parametrize(
    "variables",
    [{"v": "abc"}, {"v": None}, {}, {"v": 1.5}, {"v": 2**40}, {"v": [1]}, {"v": {"x": 1}}],
    ids=["string", "null", "missing", "float", "too-big", "list", "object"],
)
def test_variable_coercion_error_is_200_with_errors(
    client: Client, variables: dict[str, Any]
) -> None:
    body = ok_errors(post(client, "query($v: Int!) { number(value: $v) }", variables=variables))
    assert body["data"] is None
    assert schemas.CALLS == []


def test_subscription_operation_is_200_with_errors_and_not_run(client: Client) -> None:
    body = ok_errors(post(client, "subscription { ticks }"))
    assert body["data"] is None
    assert "ubscription" in body["errors"][0]["message"]
    assert schemas.CALLS == []


def test_subscription_next_to_a_query_is_rejected_too(client: Client) -> None:
    body = ok_errors(post(client, "query Q { hello } subscription S { ticks }", operationName="Q"))
    assert body["data"] is None
    assert schemas.CALLS == []


def test_value_json_cannot_carry_is_200_with_errors_not_500(client: Client) -> None:
    body = ok_errors(post(client, "{ anything }"))
    assert body["data"] is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"query": "query($s: String) { echo(value: $s) }", "variables": {"s": "\\ud800"}}',
        b'{"query": "query($v: Int!) { number(value: $v) }", "variables": {"v": "\\udfff"}}',
        b'{"query": "query A { hello }", "operationName": "\\ud800"}',
        b'{"query": "{ echo(value: \\"\\ud800\\") }"}',
    ],
    ids=[
        "echoed-in-data",
        "quoted-in-coercion-error",
        "quoted-in-operation-error",
        "in-query-text",
    ],
)
def test_lone_surrogate_is_200_json_not_500(client: Client, data: bytes) -> None:
    # "\ud800" arrives as a JSON escape: valid JSON in valid UTF-8 bytes, but the decoded
    # string holds a lone surrogate that UTF-8 cannot encode on the way back out.
    response = client.generic("POST", "/graphql", data=data, content_type="application/json")
    assert response.status_code == 200, response.status_code
    assert "data" in json_body(response)


def test_invalid_schema_is_an_error_result_not_an_exception() -> None:
    broken = GraphQLSchema(query=GraphQLObjectType("Query", {}))
    result = execute_graphql(None, query="{ __typename }", schema=broken)
    assert result["data"] is None
    assert result["errors"]


# -- masking of unexpected resolver exceptions ---------------------------------------------
def test_runtime_error_is_masked_without_debug_and_logged_with_traceback(
    client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.DEBUG = False
    caplog.set_level(logging.ERROR, logger="appframework.graphql")
    response = post(client, "{ hello boom }")
    body = ok_errors(response)
    assert b"secret detail" not in response.content
    assert body["errors"][0]["message"] == GENERIC_MESSAGE
    assert body["errors"][0]["path"] == ["boom"]
    assert body["data"] == {"hello": "Hello, world!", "boom": None}
    records = [r for r in caplog.records if r.name == "appframework.graphql"]
    assert records, "the resolver exception was not logged"
    record = records[0]
    assert record.levelno >= logging.ERROR
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert str(record.exc_info[1]) == "secret detail"
    assert record.exc_info[2] is not None  # a traceback
    assert "resolve_boom" in caplog.text  # the traceback reaches the resolver frame


def test_async_runtime_error_is_masked_without_debug(client: Client, settings: Any) -> None:
    settings.DEBUG = False
    response = post(client, "{ asyncBoom }")
    body = ok_errors(response)
    assert b"secret detail" not in response.content
    assert body["errors"][0]["message"] == GENERIC_MESSAGE


def test_runtime_error_message_is_visible_with_debug(
    client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.DEBUG = True
    caplog.set_level(logging.ERROR, logger="appframework.graphql")
    body = ok_errors(post(client, "{ boom }"))
    assert body["errors"][0]["message"] == "secret detail"
    assert any(r.exc_info for r in caplog.records if r.name == "appframework.graphql")


@pytest.mark.parametrize("debug", [False, True])
def test_graphql_error_keeps_its_message_either_way(
    client: Client, settings: Any, debug: bool
) -> None:
    settings.DEBUG = debug
    body = ok_errors(post(client, "{ visible }"))
    assert body["errors"][0]["message"] == "visible"


@pytest.mark.parametrize("debug", [False, True])
def test_forbidden_exception_keeps_message_and_has_status_403(
    client: Client, settings: Any, debug: bool
) -> None:
    settings.DEBUG = debug
    body = ok_errors(post(client, "{ forbidden }"))
    [error] = body["errors"]
    assert error["message"] == "You may not read this."
    assert error["extensions"]["status"] == 403
    assert error["path"] == ["forbidden"]


def test_unauthorized_exception_has_status_401(client: Client) -> None:
    body = ok_errors(post(client, "{ unauthorized }"))
    assert body["errors"][0]["extensions"]["status"] == 401
    assert body["errors"][0]["message"]


# -- mutations ------------------------------------------------------------------------------
def test_mutation_runs_over_post(client: Client) -> None:
    body = json_body(post(client, "mutation { bump(by: 2) }"))
    assert body == {"data": {"bump": 2}}
    assert schemas.COUNTER["value"] == 2


# -- resolver context -----------------------------------------------------------------------
CTX_QUERY = """
{
  ctx { keys child { keys asyncChild { keys } } asyncChild { keys child { keys } } }
  asyncCtx { keys }
  hello
  echo(value: "x")
}
"""


def assert_contexts(request_check: Any) -> None:
    assert schemas.CONTEXTS, "no resolver ran"
    assert len(schemas.CONTEXTS) == len(schemas.CALLS)
    for context in schemas.CONTEXTS:
        assert type(context) is dict
        assert set(context) == {"request", "container"}
        assert context["container"] is container
        request_check(context["request"])


def test_context_is_request_and_container_for_every_resolver_in_the_sync_view(
    client: Client,
) -> None:
    body = json_body(post(client, CTX_QUERY))
    assert "errors" not in body, body
    keys = ["container", "request"]
    assert body["data"]["ctx"] == {
        "keys": keys,
        "child": {"keys": keys, "asyncChild": {"keys": keys}},
        "asyncChild": {"keys": keys, "child": {"keys": keys}},
    }
    assert body["data"]["asyncCtx"] == {"keys": keys}
    assert set(schemas.CALLS) >= {"ctx", "keys", "asyncCtx", "hello", "echo"}

    def check(request: Any) -> None:
        assert isinstance(request, HttpRequest)
        assert request.path == "/graphql"
        assert request.method == "POST"

    assert_contexts(check)


def test_context_request_is_none_when_called_directly() -> None:
    result = execute_graphql(query=CTX_QUERY)
    assert "errors" not in result, result

    def check(request: Any) -> None:
        assert request is None

    assert_contexts(check)


def test_context_request_is_the_request_passed_to_execute_graphql(rf: Any) -> None:
    request = rf.post("/somewhere")
    execute_graphql(request, query="{ hello ctx { keys } }")

    def check(seen: Any) -> None:
        assert seen is request

    assert_contexts(check)


def test_explicit_context_replaces_the_default() -> None:
    marker = {"request": "r", "container": "c", "extra": 1}
    execute_graphql(query="{ hello }", context=marker)
    assert [marker] == schemas.CONTEXTS


# -- execute_graphql() called directly ------------------------------------------------------
def test_execute_graphql_directly_returns_the_response_dict() -> None:
    result = execute_graphql(
        None,
        query="query A { hello } query B($n: String) { hello(name: $n) }",
        variables={"n": "Direct"},
        operation_name="B",
    )
    assert result == {"data": {"hello": "Hello, Direct!"}}


def test_execute_graphql_with_keyword_request_none() -> None:
    assert execute_graphql(request=None, query="{ hello }") == {"data": {"hello": "Hello, world!"}}


def test_execute_graphql_never_raises_for_client_input() -> None:
    for query in [
        "",
        "{",
        "{ nope }",
        "subscription { ticks }",
        "{ boom }",
        "\x00",
        "query($v: Int!) { number(value: $v) }",
    ]:
        result = execute_graphql(query=query)
        assert result["errors"], query
        assert "data" in result


def test_execute_graphql_with_a_custom_schema() -> None:
    assert execute_graphql(query="{ whoami }", schema=schemas.other_schema) == {
        "data": {"whoami": "other schema"}
    }
    # the configured schema is untouched
    assert execute_graphql(query="{ whoami }")["data"] is None


def test_execute_graphql_sync_entry_runs_async_resolvers() -> None:
    result = execute_graphql(query='{ asyncHello(name: "sync") hello asyncCtx { keys } }')
    assert result == {
        "data": {
            "asyncHello": "Hello async, sync!",
            "hello": "Hello, world!",
            "asyncCtx": {"keys": ["container", "request"]},
        }
    }


def test_sync_view_runs_async_resolvers(client: Client) -> None:
    body = json_body(post(client, '{ asyncHello(name: "view") hello }'))
    assert body == {"data": {"asyncHello": "Hello async, view!", "hello": "Hello, world!"}}


def test_execute_graphql_uses_the_demo_schema_by_default(settings: Any) -> None:
    settings.APPFRAMEWORK = {"GRAPHQL": {"SCHEMA": "testproject.blog.schema.schema"}}
    assert execute_graphql(query='{ hello(name: "demo") }') == {"data": {"hello": "Hello, demo!"}}
