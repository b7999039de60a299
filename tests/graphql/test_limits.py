"""The depth and token limits: max_tokens (10000) and max_depth (15), None disabling
each; depth counted through fragments; introspection passes at the defaults; the
document cache never lets a document slip past a limit. (The breadth limits and the
introspection switch: test_breadth_limits.py.)"""

from __future__ import annotations

import time

import pytest
from django.test import Client
from graphql import get_introspection_query
from graphql.language import Lexer, Source, TokenKind

from appframework_graphql.documents import DocumentCache, Limits

from . import schemas
from .conftest import Configure
from .helpers import aliases, is_error, is_ok, json_body, nested_query, post

pytestmark = [pytest.mark.usefixtures("gql")]


def token_count(query: str) -> int:
    """Tokens the parser reads (SOF and EOF excluded)."""
    lexer = Lexer(Source(query))
    count = 0
    while lexer.advance().kind is not TokenKind.EOF:
        count += 1
    return count


# -- max_tokens -------------------------------------------------------------------------------
def test_token_helper_counts_what_the_parser_counts() -> None:
    assert token_count("{ a:hello b:hello }") == 8
    assert token_count(aliases(5, plain=1)) == 2 + 15 + 1


@pytest.mark.parametrize("limit", [5, 17, 100])
def test_max_tokens_exactly_at_the_bound_passes_and_one_over_fails(
    client: Client, configure: Configure, limit: int
) -> None:
    # A query of exactly `limit` tokens: 2 braces + 3 per alias + 1 per plain field.
    n, plain = divmod(limit - 2, 3)
    query = aliases(n, plain)
    assert token_count(query) == limit
    configure(MAX_TOKENS=limit)
    is_ok(post(client, query))
    configure(MAX_TOKENS=limit - 1)
    is_error(post(client, query), f"more than {limit - 1} tokens")


def test_default_max_tokens_is_10000(client: Client) -> None:
    at_bound = aliases(3332, plain=2)
    assert token_count(at_bound) == 10000
    is_ok(post(client, at_bound))
    over = aliases(3333)
    assert token_count(over) == 10001
    is_error(post(client, over), "more than 10000 tokens")
    assert schemas.CALLS.count("hello") == 3333  # only the first ran (the 2 plain fields merge)


def test_max_tokens_none_disables_the_check(client: Client, configure: Configure) -> None:
    configure(MAX_TOKENS=None)
    query = aliases(4000)
    assert token_count(query) > 10000
    body = is_ok(post(client, query))
    assert len(body["data"]) == 4000


def test_comments_count_towards_max_tokens(client: Client, configure: Configure) -> None:
    query = "# padding\n" * 20000 + "{ hello }"
    is_error(post(client, query), "tokens")
    configure(MAX_TOKENS=None)
    is_ok(post(client, query))


def test_max_tokens_error_happens_before_any_resolver(client: Client, configure: Configure) -> None:
    configure(MAX_TOKENS=10)
    is_error(post(client, "mutation { a: bump b: bump c: bump d: bump }"), "tokens")
    assert schemas.CALLS == [] and schemas.COUNTER["value"] == 0


# -- max_depth --------------------------------------------------------------------------------
def test_nested_query_helper_has_the_requested_depth() -> None:
    from graphql import parse

    from appframework_graphql.measure import measure

    for depth in (2, 3, 15, 16, 40):
        assert measure(parse(nested_query(depth)), cap=1).depth == depth


def test_max_depth_15_passes_and_16_fails_by_default(client: Client) -> None:
    body = is_ok(post(client, nested_query(15)))
    node = body["data"]["node"]
    for _ in range(13):
        node = node["child"]
    assert node == {"id": "13"}
    is_error(post(client, nested_query(16)), "depth")


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_configured_max_depth_bound(client: Client, configure: Configure, limit: int) -> None:
    configure(MAX_DEPTH=limit)
    if limit >= 2:
        is_ok(post(client, nested_query(limit)))
    else:
        is_ok(post(client, "{ hello }"))
    is_error(post(client, nested_query(max(limit + 1, 2))), "depth")


def test_max_depth_none_disables_the_check(client: Client, configure: Configure) -> None:
    configure(MAX_DEPTH=None)
    is_ok(post(client, nested_query(60)))


def test_depth_counted_through_named_fragments(client: Client, configure: Configure) -> None:
    query = """
      { node { ...A } }
      fragment A on Node { child { ...B } }
      fragment B on Node { child { id } }
    """  # node > child > child > id = 4
    configure(MAX_DEPTH=4)
    is_ok(post(client, query))
    configure(MAX_DEPTH=3)
    is_error(post(client, query), "depth")


def test_depth_counted_through_inline_fragments(client: Client, configure: Configure) -> None:
    query = "{ node { ... on Node { child { ... { child { ... on Node { id } } } } } } }"  # 4
    configure(MAX_DEPTH=4)
    is_ok(post(client, query))
    configure(MAX_DEPTH=3)
    is_error(post(client, query), "depth")


def test_depth_takes_the_deepest_branch_and_operation(client: Client, configure: Configure) -> None:
    configure(MAX_DEPTH=3)
    query = "query Shallow { hello } query Deep { node { id child { child { id } } } }"
    # Deep is 4 levels: rejected even when the shallow operation is the one asked for.
    is_error(post(client, query, operationName="Shallow"), "depth")


def test_typename_is_not_counted_for_depth(client: Client, configure: Configure) -> None:
    configure(MAX_DEPTH=3)
    is_ok(post(client, "{ node { __typename child { __typename id } } }"))


def test_depth_error_happens_before_any_resolver(client: Client, configure: Configure) -> None:
    configure(MAX_DEPTH=2)
    is_error(post(client, "mutation { bump } query { node { child { id } } }"), "")
    assert schemas.CALLS == []


# -- fragments: cycles, long chains, many spreads ------------------------------------------------
def test_fragment_cycle_is_a_200_validation_error(client: Client) -> None:
    query = """
      { node { ...A } }
      fragment A on Node { child { ...B } }
      fragment B on Node { child { ...A } }
    """
    body = is_error(post(client, query), "")
    assert any("A" in e["message"] and "itself" in e["message"] for e in body["errors"]), body
    assert schemas.CALLS == []


def test_self_spreading_fragment_is_a_200_validation_error(client: Client) -> None:
    is_error(post(client, "{ node { ...A } } fragment A on Node { id ...A }"), "itself")


def test_fragment_cycle_with_depth_check_disabled_is_still_a_200_error(
    client: Client, configure: Configure
) -> None:
    configure(MAX_DEPTH=None, MAX_TOKENS=None)
    query = "{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { ...A }"
    is_error(post(client, query), "")


def _chain(n: int) -> str:
    parts = [f"fragment F{i} on Node {{ child {{ ...F{i + 1} }} }}" for i in range(n)]
    parts.append(f"fragment F{n} on Node {{ id }}")
    return "{ node { ...F0 } }\n" + "\n".join(parts)


@pytest.mark.parametrize("length", [20, 60, 150, 400, 900])
def test_deeply_nested_fragment_chain_is_a_200_error(client: Client, length: int) -> None:
    response = post(client, _chain(length))
    assert response.status_code == 200
    body = json_body(response)
    assert body["data"] is None and body["errors"]
    assert schemas.CALLS == []


def test_fragment_chain_with_limits_off_runs_or_errors_but_never_500s(
    client: Client, configure: Configure
) -> None:
    configure(MAX_DEPTH=None, MAX_TOKENS=None)
    for length in (20, 60, 150, 400, 900, 2000):
        response = post(client, _chain(length))
        assert response.status_code == 200, length
        json_body(response)
    body = json_body(post(client, _chain(20)))
    assert "errors" not in body


def _doubling(n: int, on: str = "Node") -> str:
    if on == "Node":
        parts = [
            f"fragment F{i} on Node {{ id child {{ ...F{i + 1} ...F{i + 1} }} }}" for i in range(n)
        ]
        parts.append(f"fragment F{n} on Node {{ id }}")
        return "{ node { ...F0 } }\n" + "\n".join(parts)
    parts = [f"fragment F{i} on Query {{ hello ...F{i + 1} ...F{i + 1} }}" for i in range(n)]
    parts.append(f"fragment F{n} on Query {{ hello }}")
    return "{ ...F0 }\n" + "\n".join(parts)


def test_many_times_spread_fragments_are_answered_quickly(client: Client) -> None:
    # 30 fragments each spreading the next twice: 2**30 paths if expanded naively.
    started = time.monotonic()
    body = is_error(post(client, _doubling(30)), "depth")
    assert body["errors"]
    flat = is_ok(post(client, _doubling(30, on="Query")))
    assert flat["data"] == {"hello": "Hello, world!"}
    assert time.monotonic() - started < 5.0


def test_many_times_spread_fragments_with_depth_off_are_answered_quickly(
    client: Client, configure: Configure
) -> None:
    configure(MAX_DEPTH=None)
    started = time.monotonic()
    response = post(client, _doubling(30))
    assert response.status_code == 200
    body = json_body(response)
    assert "errors" in body or body["data"]["node"]["id"] == "0"
    assert time.monotonic() - started < 5.0


# -- introspection at the default limits --------------------------------------------------------
INTROSPECTION_VARIANTS = {
    "default": {},
    "no-descriptions": {"descriptions": False},
    "all-options": {
        "descriptions": True,
        "specified_by_url": True,
        "directive_is_repeatable": True,
        "schema_description": True,
        "input_value_deprecation": True,
    },
    "specified-by-url": {"specified_by_url": True},
    "directive-is-repeatable": {"directive_is_repeatable": True},
    "schema-description": {"schema_description": True},
    "input-value-deprecation": {"input_value_deprecation": True},
}


@pytest.mark.parametrize(
    "options", INTROSPECTION_VARIANTS.values(), ids=INTROSPECTION_VARIANTS.keys()
)
@pytest.mark.parametrize(
    "schema", ["tests.graphql.schemas.schema", "testproject.blog.schema.schema"]
)
def test_introspection_query_passes_at_default_limits(
    client: Client, configure: Configure, options: dict[str, bool], schema: str
) -> None:
    configure(SCHEMA=schema)
    query = get_introspection_query(**options)
    body = is_ok(post(client, query, operationName="IntrospectionQuery"))
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


# -- the cache never bypasses a limit -----------------------------------------------------------
def test_cached_document_does_not_bypass_a_lowered_max_depth(
    client: Client, configure: Configure
) -> None:
    query = nested_query(10)
    configure(MAX_DEPTH=15)
    is_ok(post(client, query))
    is_ok(post(client, query))  # now cached
    configure(MAX_DEPTH=5)
    is_error(post(client, query), "depth")
    configure(MAX_DEPTH=15)
    is_ok(post(client, query))


def test_cached_document_does_not_bypass_a_lowered_max_tokens(
    client: Client, configure: Configure
) -> None:
    query = aliases(10)  # 32 tokens
    configure(MAX_TOKENS=100)
    is_ok(post(client, query))
    is_ok(post(client, query))
    configure(MAX_TOKENS=20)
    is_error(post(client, query), "more than 20 tokens")
    configure(MAX_TOKENS=None)
    is_ok(post(client, query))


def test_one_cache_instance_keys_on_the_limits() -> None:
    cache = DocumentCache(16)
    query = nested_query(10)
    assert cache.get(schemas.schema, query, Limits(max_depth=15)).document is not None
    assert cache.get(schemas.schema, query, Limits(max_depth=5)).document is None
    assert cache.get(schemas.schema, query, Limits(max_depth=15, max_tokens=10)).document is None
    assert cache.get(schemas.schema, query, Limits(max_depth=15)).document is not None
    assert cache.hits == 1 and cache.misses == 3
