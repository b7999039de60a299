"""The document cache: hits on repeat, bounded LRU, 0 disables, thread-safe, and never
serves a document prepared for another schema."""

from __future__ import annotations

import gc
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.test import Client
from graphql import build_schema

from appframework_graphql import documents, execute_graphql
from appframework_graphql.execution import document_cache

from . import schemas
from .conftest import Configure
from .helpers import json_body, nested_query, post

pytestmark = [pytest.mark.usefixtures("gql")]


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query text handed to graphql-core's parse() by the document layer."""
    calls: list[str] = []
    original: Callable[..., Any] = documents.parse

    def counting_parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(source))
        return original(source, *args, **kwargs)

    monkeypatch.setattr(documents, "parse", counting_parse)
    return calls


def q(i: int) -> str:
    return f'{{ echo(value: "{i}") }}'


def run(query: str) -> dict[str, Any]:
    return execute_graphql(query=query)


def test_repeat_query_hits_the_cache_and_is_not_parsed_again(
    client: Client, parse_calls: list[str]
) -> None:
    cache = document_cache()
    hits = cache.hits
    for _ in range(5):
        assert json_body(post(client, "{ hello }")) == {"data": {"hello": "Hello, world!"}}
    assert parse_calls == ["{ hello }"]
    assert cache.hits == hits + 4
    assert document_cache() is cache


def test_cache_hit_still_executes_resolvers_every_time(client: Client) -> None:
    for i in range(3):
        assert json_body(post(client, "mutation { bump }")) == {"data": {"bump": i + 1}}
    assert schemas.CALLS == ["bump"] * 3


def test_failed_documents_are_cached_and_still_reported(
    client: Client, parse_calls: list[str]
) -> None:
    for _ in range(3):
        body = json_body(post(client, "{ nope }"))
        assert body["data"] is None and body["errors"]
    assert parse_calls == ["{ nope }"]


def test_same_text_different_variables_share_one_document(parse_calls: list[str]) -> None:
    query = "query($v: String) { echo(value: $v) }"
    assert execute_graphql(query=query, variables={"v": "a"}) == {"data": {"echo": "a"}}
    assert execute_graphql(query=query, variables={"v": "b"}) == {"data": {"echo": "b"}}
    assert parse_calls == [query]


def test_cache_is_bounded_with_lru_eviction(configure: Configure, parse_calls: list[str]) -> None:
    configure(DOCUMENT_CACHE_SIZE=3)
    cache = document_cache()
    assert cache.maxsize == 3
    for i in (1, 2, 3):
        run(q(i))
    assert len(cache) == 3
    run(q(1))  # hit: 1 becomes the most recently used, 2 the least
    assert len(parse_calls) == 3
    run(q(4))  # evicts 2
    assert len(cache) == 3
    assert len(parse_calls) == 4
    for i in (1, 3, 4):
        run(q(i))
    assert len(parse_calls) == 4, "an entry that should have stayed was evicted"
    run(q(2))
    assert len(parse_calls) == 5, "the least recently used entry was not evicted"
    assert len(cache) == 3


def test_many_distinct_queries_never_exceed_the_bound(configure: Configure) -> None:
    configure(DOCUMENT_CACHE_SIZE=3)
    for i in range(50):
        assert run(q(i)) == {"data": {"echo": str(i)}}
        assert len(document_cache()) <= 3


def test_cache_size_zero_disables_the_cache(configure: Configure, parse_calls: list[str]) -> None:
    configure(DOCUMENT_CACHE_SIZE=0)
    for _ in range(4):
        assert run("{ hello }") == {"data": {"hello": "Hello, world!"}}
    assert len(parse_calls) == 4
    assert len(document_cache()) == 0
    assert document_cache().hits == 0


def test_settings_change_gives_a_fresh_cache(configure: Configure) -> None:
    run("{ hello }")
    before = document_cache()
    assert len(before) >= 1
    configure(DOCUMENT_CACHE_SIZE=10)
    after = document_cache()
    assert after is not before and len(after) == 0 and after.maxsize == 10


def test_cache_is_thread_safe_under_concurrent_use(configure: Configure) -> None:
    configure(DOCUMENT_CACHE_SIZE=5)
    cache = document_cache()
    queries: list[tuple[str, Callable[[dict[str, Any]], bool]]] = []
    for i in range(12):
        queries.append((q(i), lambda r, i=i: r == {"data": {"echo": str(i)}}))
    queries += [
        ("{ hello }", lambda r: r == {"data": {"hello": "Hello, world!"}}),
        ("{ nope }", lambda r: r["data"] is None and bool(r["errors"])),
        ("{ hello ", lambda r: r["data"] is None and bool(r["errors"])),
        (nested_query(16), lambda r: r["data"] is None and "depth" in r["errors"][0]["message"]),
        (nested_query(15), lambda r: "errors" not in r),
        ("{ asyncHello }", lambda r: r == {"data": {"asyncHello": "Hello async, world!"}}),
        (
            "{ hello visible }",
            lambda r: r["data"]["hello"] == "Hello, world!" and len(r["errors"]) == 1,
        ),
    ]

    def worker(seed: int) -> int:
        bad = 0
        for n in range(200):
            query, check = queries[(seed * 7 + n * 3) % len(queries)]
            if not check(execute_graphql(query=query)):
                bad += 1
        return bad

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(worker, range(8)))
    assert results == [0] * 8
    assert len(cache) <= 5
    assert cache.hits + cache.misses == 8 * 200
    assert document_cache() is cache


def test_len_read_by_another_thread_during_an_insert_never_exceeds_maxsize() -> None:
    """A reader thread calling len(cache) at the worst moment (right after an insert into
    the LRU, while the writer still holds the lock) must not see more than maxsize
    entries. The probe wraps the private OrderedDict only to pick that moment; the reader
    uses the public len()."""
    cache = documents.DocumentCache(3)
    seen: list[int] = []
    readers: list[threading.Thread] = []

    class Probe(OrderedDict):  # type: ignore[type-arg]
        def __setitem__(self, key: Any, value: Any) -> None:
            super().__setitem__(key, value)
            reader = threading.Thread(target=lambda: seen.append(len(cache)))
            reader.start()
            reader.join(timeout=0.2)  # a locked __len__ would wait for the writer instead
            readers.append(reader)

    cache._entries = Probe()
    for i in range(6):
        cache.get(schemas.schema, q(i), documents.Limits(max_depth=15))
    for reader in readers:
        reader.join()
    assert len(seen) == 6
    assert max(seen) <= 3, f"len(cache) reported {max(seen)} entries for maxsize 3: {seen}"
    assert len(cache) == 3


def test_cache_never_serves_a_document_prepared_for_another_schema() -> None:
    """A schema passed to execute_graphql(schema=...) may be dropped by its caller and a
    new schema could then get the same id(); the cache must not mix them up. Its entry
    holds the schema itself, so the dropped schema stays alive (its id taken) as long as
    a document prepared for it is cached, and the new schema is a key of its own."""
    first = build_schema("type Query { a: String }")
    with_a = execute_graphql(query="{ a }", schema=first)
    dropped = weakref.ref(first)
    del first
    gc.collect()
    assert dropped() is not None, "the cache keyed the schema by id and let it go"
    second = build_schema("type Query { b: String }")
    without_a = execute_graphql(query="{ a }", schema=second)
    assert with_a == {"data": {"a": None}}
    assert without_a["data"] is None, f"the cache mixed up two schemas: {without_a}"
