"""GraphQL behaviours added after review."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from appframework_graphql.documents import MAX_CACHED_QUERY_LENGTH
from appframework_graphql.execution import document_cache

pytestmark = pytest.mark.django_db


def test_valid_json_without_query_is_400_whatever_the_content_type() -> None:
    response = Client().post("/graphql", json.dumps({"variables": {}}), content_type="text/plain")
    assert response.status_code == 400
    assert "query" in response.json()["errors"][0]["message"]


def test_valid_graphql_request_under_text_plain_is_415() -> None:
    response = Client().post(
        "/graphql", json.dumps({"query": "{ hello }"}), content_type="text/plain"
    )
    assert response.status_code == 415


def test_query_over_the_cacheable_length_is_answered_but_not_cached() -> None:
    cache = document_cache()
    cache.clear()
    query = "{ hello }" + " " * (MAX_CACHED_QUERY_LENGTH + 1)
    response = Client().post("/graphql", {"query": query}, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"data": {"hello": "Hello, world!"}}
    assert len(cache) == 0


def test_short_query_is_cached() -> None:
    cache = document_cache()
    cache.clear()
    Client().post("/graphql", {"query": "{ hello }"}, content_type="application/json")
    assert len(cache) == 1


@pytest.mark.django_db(transaction=True)
async def test_async_entry_point_prepares_a_cache_miss_and_hits_afterwards(settings: Any) -> None:
    from appframework_graphql import aexecute_graphql

    cache = document_cache()
    cache.clear()
    first = await aexecute_graphql(query="{ hello }")
    second = await aexecute_graphql(query="{ hello }")
    assert first == second == {"data": {"hello": "Hello, world!"}}
    assert cache.hits >= 1
