"""The async entry points: ``aexecute_graphql`` and ``async_graphql_view`` (AsyncClient)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpRequest
from django.test import AsyncClient

from appframework.container import container
from appframework_graphql import aexecute_graphql
from appframework_graphql.execution import GENERIC_MESSAGE

from . import schemas

pytestmark = [pytest.mark.usefixtures("gql")]


async def apost(client: AsyncClient, query: str, path: str = "/agraphql", **fields: Any) -> Any:
    body = {"query": query, **fields}
    return await client.post(path, data=json.dumps(body), content_type="application/json")


async def test_aexecute_graphql_runs_async_and_sync_resolvers() -> None:
    result = await aexecute_graphql(
        None, query="query($n: String) { asyncHello(name: $n) hello }", variables={"n": "a"}
    )
    assert result == {"data": {"asyncHello": "Hello async, a!", "hello": "Hello, world!"}}


async def test_aexecute_graphql_with_custom_schema_and_operation_name() -> None:
    result = await aexecute_graphql(
        query="query X { whoami } query Y { whoami }",
        operation_name="Y",
        schema=schemas.other_schema,
    )
    assert result == {"data": {"whoami": "other schema"}}


async def test_aexecute_graphql_reports_errors_without_raising(settings: Any) -> None:
    settings.DEBUG = False
    result = await aexecute_graphql(query="{ asyncBoom hello }")
    assert result["data"] == {"asyncBoom": None, "hello": "Hello, world!"}
    assert result["errors"][0]["message"] == GENERIC_MESSAGE
    assert (await aexecute_graphql(query="{"))["data"] is None


@pytest.mark.urls("tests.graphql.urls")
async def test_async_view_runs_async_resolvers() -> None:
    response = await apost(AsyncClient(), '{ asyncHello(name: "asgi") hello }')
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert json.loads(response.content) == {
        "data": {"asyncHello": "Hello async, asgi!", "hello": "Hello, world!"}
    }


@pytest.mark.urls("tests.graphql.urls")
async def test_async_view_context_is_request_and_container_for_every_resolver() -> None:
    response = await apost(
        AsyncClient(), "{ asyncCtx { keys child { keys asyncChild { keys } } } ctx { keys } }"
    )
    body = json.loads(response.content)
    assert "errors" not in body, body
    assert schemas.CONTEXTS and len(schemas.CONTEXTS) == len(schemas.CALLS)
    for context in schemas.CONTEXTS:
        assert type(context) is dict and set(context) == {"request", "container"}
        assert isinstance(context["request"], HttpRequest)
        assert context["request"].path == "/agraphql"
        assert context["container"] is container


@pytest.mark.urls("tests.graphql.urls")
async def test_async_view_rejects_bad_requests_like_the_sync_view() -> None:
    client = AsyncClient()
    bad_json = await client.post("/agraphql", data=b"{", content_type="application/json")
    assert bad_json.status_code == 400
    wrong_type = await client.post(
        "/agraphql", data=b'{"query": "{ hello }"}', content_type="text/plain"
    )
    assert wrong_type.status_code == 415
    no_query = await client.post("/agraphql", data=b"{}", content_type="application/json")
    assert no_query.status_code == 400
    assert schemas.CALLS == []


@pytest.mark.urls("tests.graphql.urls")
async def test_async_view_errors_are_200(settings: Any) -> None:
    settings.DEBUG = False
    client = AsyncClient()
    for query in ["{ nope }", "{", "subscription { ticks }", "{ asyncBoom }"]:
        response = await apost(client, query)
        assert response.status_code == 200, query
        assert json.loads(response.content)["errors"]
        assert b"secret detail" not in response.content


@pytest.mark.urls("tests.graphql.urls")
async def test_async_view_get_without_graphiql_is_405(configure: Any) -> None:
    configure(GRAPHIQL=False)
    response = await AsyncClient().get("/agraphql", {"query": "{ hello }"})
    assert response.status_code == 405
    assert "POST" in response["Allow"]
    assert schemas.CALLS == []
