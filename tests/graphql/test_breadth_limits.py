"""The breadth limits (MAX_ALIASES, MAX_ROOT_FIELDS, MAX_FIELDS) and the INTROSPECTION
switch: each limit holds at its bound and refuses one over it, before anything executes,
as a 200 answer with ``data: null`` and an error; fragments count as many times as they
are spread, without exponential work; a cached document never slips past a newly set
limit; GraphiQL's introspection and the demo's queries pass at the recommended values."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from graphql import GraphQLError, build_schema, get_introspection_query, parse
from graphql.language import Lexer, Source, TokenKind

from appframework_graphql import execute_graphql
from appframework_graphql.measure import measure
from testproject.blog.models import Post

from . import schemas
from .conftest import DEMO_SCHEMA, RECOMMENDED_LIMITS, Configure
from .helpers import aliases, is_error, is_ok, json_body, post

pytestmark = [pytest.mark.usefixtures("gql")]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "graphql.md"


def fields_total(n: int) -> str:
    """Exactly ``n`` field selections, one root field and no aliases:
    ``{ node { id id ... } }`` with n - 1 ids (identical selections still count)."""
    assert n >= 2
    return "{ node { " + " ".join(["id"] * (n - 1)) + " } }"


# -- each limit at and over its bound -------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 5, 30])
def test_max_aliases_at_the_bound_passes_and_one_over_is_refused(
    client: Client, configure: Configure, limit: int
) -> None:
    configure(MAX_ALIASES=limit)
    body = is_ok(post(client, aliases(limit)))
    assert len(body["data"]) == limit
    schemas.CALLS.clear()
    refused = is_error(post(client, aliases(limit + 1)), f"maximum of {limit} aliases")
    assert refused["errors"] == [
        {"message": f"Query has more than the maximum of {limit} aliases."}
    ]
    assert schemas.CALLS == []


@pytest.mark.parametrize("limit", [1, 4, 15])
def test_max_root_fields_at_the_bound_passes_and_one_over_is_refused(
    client: Client, configure: Configure, limit: int
) -> None:
    configure(MAX_ROOT_FIELDS=limit)
    is_ok(post(client, aliases(limit)))
    schemas.CALLS.clear()
    is_error(post(client, aliases(limit + 1)), f"maximum of {limit} root fields")
    assert schemas.CALLS == []


@pytest.mark.parametrize("limit", [2, 10, 500])
def test_max_fields_at_the_bound_passes_and_one_over_is_refused(
    client: Client, configure: Configure, limit: int
) -> None:
    configure(MAX_FIELDS=limit)
    is_ok(post(client, fields_total(limit)))
    schemas.CALLS.clear()
    is_error(post(client, fields_total(limit + 1)), f"maximum of {limit} fields")
    assert schemas.CALLS == []


def test_breadth_limits_are_off_by_default(client: Client) -> None:
    body = is_ok(post(client, aliases(200)))
    assert len(body["data"]) == 200
    is_ok(post(client, fields_total(400)))


def test_mutation_over_a_limit_changes_nothing(client: Client, configure: Configure) -> None:
    configure(MAX_ROOT_FIELDS=2)
    is_error(post(client, "mutation { a: bump b: bump c: bump }"), "root fields")
    assert schemas.COUNTER["value"] == 0 and schemas.CALLS == []


# -- what counts --------------------------------------------------------------------------------
def test_aliases_count_inside_nested_fields_and_inline_fragments(
    client: Client, configure: Configure
) -> None:
    query = "{ n: node { i: id c: child { ... on Node { j: id } } } }"  # 4 aliases
    configure(MAX_ALIASES=4)
    is_ok(post(client, query))
    configure(MAX_ALIASES=3)
    is_error(post(client, query), "aliases")


def test_a_fragment_spread_n_times_counts_n_times(client: Client, configure: Configure) -> None:
    # F selects 4 fields with 2 aliases; spread under 3 root fields, 2 of them aliased:
    # 3 + 3 x 4 = 15 fields, 2 + 3 x 2 = 8 aliases.
    query = """
      { node { ...F } a: node { ...F } b: node { ...F } }
      fragment F on Node { x: id y: id child { id } }
    """
    configure(MAX_FIELDS=15, MAX_ALIASES=8)
    is_ok(post(client, query))
    configure(MAX_FIELDS=14)
    is_error(post(client, query), "maximum of 14 fields")
    configure(MAX_ALIASES=7)
    is_error(post(client, query), "maximum of 7 aliases")


def test_root_fields_count_through_fragments_at_the_root(
    client: Client, configure: Configure
) -> None:
    query = (
        "{ hello ...R ... on Query { asyncHello } } fragment R on Query { echo number(value: 1) }"
    )
    configure(MAX_ROOT_FIELDS=4)
    is_ok(post(client, query))
    configure(MAX_ROOT_FIELDS=3)
    is_error(post(client, query), "root fields")


def test_nested_fields_are_not_root_fields(client: Client, configure: Configure) -> None:
    configure(MAX_ROOT_FIELDS=1)
    is_ok(post(client, "{ node { id child { id child { id } } } }"))


def test_each_operation_counts_its_own_fragments_and_the_largest_decides(
    client: Client, configure: Configure
) -> None:
    query = """
      query Small { hello }
      query Big { ...Many }
      fragment Many on Query { a: hello b: hello c: hello }
    """
    configure(MAX_ALIASES=3)
    is_ok(post(client, query, operationName="Small"))
    configure(MAX_ALIASES=2)
    # Big breaks the limit: the document is refused whichever operation is asked for,
    # like the depth limit (the cache holds the document, not one operation of it).
    is_error(post(client, query, operationName="Small"), "aliases")


def test_meta_fields_count_as_fields(client: Client, configure: Configure) -> None:
    configure(MAX_FIELDS=3)
    is_ok(post(client, "{ __typename node { __typename } }"))
    is_error(post(client, "{ __typename node { __typename id } }"), "fields")


# -- many-times-spread fragments: bounded work --------------------------------------------------
def _doubling(n: int) -> str:
    """n fragments, each spreading the next twice: 2**n expanded fields."""
    parts = [f"fragment F{i} on Query {{ hello ...F{i + 1} ...F{i + 1} }}" for i in range(n)]
    parts.append(f"fragment F{n} on Query {{ hello }}")
    return "{ ...F0 }\n" + "\n".join(parts)


def test_doubling_fragments_are_refused_quickly(client: Client, configure: Configure) -> None:
    configure(MAX_FIELDS=500, MAX_ROOT_FIELDS=15, MAX_DEPTH=None)
    started = time.monotonic()
    is_error(post(client, _doubling(40)), "root fields")
    configure(MAX_FIELDS=500, MAX_DEPTH=None)
    is_error(post(client, _doubling(40)), "maximum of 500 fields")
    assert schemas.CALLS == []
    assert time.monotonic() - started < 5.0


def test_measuring_doubling_fragments_is_linear_and_counts_saturate() -> None:
    document = parse(_doubling(200))  # 2**201 - 1 fields once expanded
    started = time.monotonic()
    capped = measure(document, cap=501)
    assert capped.fields == capped.top_level_fields == 501
    exact = measure(parse(_doubling(20)), cap=10**12)
    assert exact.fields == 2**21 - 1  # 1 + 2 + 4 + ... + 2**20 "hello"s
    assert time.monotonic() - started < 5.0


def test_fragment_cycles_do_not_hang_the_measure(client: Client, configure: Configure) -> None:
    configure(MAX_FIELDS=10, MAX_ALIASES=10)
    query = "{ node { ...A } } fragment A on Node { x: child { ...B } } fragment B on Node { ...A }"
    response = post(client, query)
    assert response.status_code == 200
    assert json_body(response)["errors"]  # validation: the cycle
    assert schemas.CALLS == []


# -- the cache never lets a document slip past a newly set limit ---------------------------------
@pytest.mark.parametrize(
    ("key", "tight", "fragment"),
    [
        ("MAX_ALIASES", 9, "aliases"),
        ("MAX_ROOT_FIELDS", 9, "root fields"),
        ("MAX_FIELDS", 9, "fields"),
        ("INTROSPECTION", False, "introspection"),
    ],
)
def test_cached_document_does_not_bypass_a_newly_set_limit(
    client: Client, configure: Configure, key: str, tight: Any, fragment: str
) -> None:
    query = aliases(10) if key != "INTROSPECTION" else "{ __schema { queryType { name } } }"
    is_ok(post(client, query))
    is_ok(post(client, query))  # now cached under the default limits
    configure(**{key: tight})
    is_error(post(client, query), fragment)
    configure()
    is_ok(post(client, query))


# -- recommended values ---------------------------------------------------------------------------
def test_docs_recommend_the_values_these_tests_use() -> None:
    text = DOCS.read_text()
    for key, value in RECOMMENDED_LIMITS.items():
        assert re.search(rf'"{key}":\s*{value}\b', text), f"docs/graphql.md: {key} {value}"


INTROSPECTION_VARIANTS = {
    # What GraphiQL 4.1.2 sends (same fields, in another order): its default, and with
    # the two options it can switch on.
    "graphiql-default": {},
    "graphiql-options": {"input_value_deprecation": True, "schema_description": True},
    "everything": {
        "descriptions": True,
        "specified_by_url": True,
        "directive_is_repeatable": True,
        "schema_description": True,
        "input_value_deprecation": True,
    },
}


@pytest.mark.parametrize(
    "options", INTROSPECTION_VARIANTS.values(), ids=INTROSPECTION_VARIANTS.keys()
)
@pytest.mark.parametrize("schema", ["tests.graphql.schemas.schema", DEMO_SCHEMA])
def test_graphiql_introspection_passes_at_the_recommended_limits(
    client: Client, configure: Configure, options: dict[str, bool], schema: str
) -> None:
    configure(SCHEMA=schema, **RECOMMENDED_LIMITS)
    query = get_introspection_query(**options)
    body = is_ok(post(client, query, operationName="IntrospectionQuery"))
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        '{ hello(name: "demo") me { id email name } }',
        "{ posts { id title body author { id email name } } }",
        '{ posts(limit: 100) { id title author { name } } post(id: "1") { title } me { email } }',
        'mutation { deletePost(id: "0") }',
    ],
)
def test_demo_queries_pass_the_recommended_limits(
    client: Client, configure: Configure, query: str
) -> None:
    configure(SCHEMA=DEMO_SCHEMA, **RECOMMENDED_LIMITS)
    body = json_body(post(client, query))
    messages = [e["message"] for e in body.get("errors", [])]
    assert not any("maximum" in m for m in messages), messages


# -- the attack probe --------------------------------------------------------------------------
def _token_count(query: str) -> int:
    lexer = Lexer(Source(query))
    count = 0
    while lexer.advance().kind is not TokenKind.EOF:
        count += 1
    return count


ALIAS_FLOOD = (
    "{ "
    + " ".join(f"p{i}: posts(limit: 100) {{ id title body author {{ name }} }}" for i in range(500))
    + " }"
)


@pytest.mark.django_db
def test_500_aliases_of_a_list_field_are_refused_before_any_sql(
    client: Client, configure: Configure, user: Any
) -> None:
    Post.objects.bulk_create(Post(title=f"P{i}", author=user) for i in range(3))
    assert 20_000 < len(ALIAS_FLOOD.encode()) < 30_000
    # Under the token limit: MAX_TOKENS alone would let it through.
    assert _token_count(ALIAS_FLOOD) < RECOMMENDED_LIMITS["MAX_TOKENS"]
    configure(SCHEMA=DEMO_SCHEMA, **RECOMMENDED_LIMITS)
    with CaptureQueriesContext(connection) as queries:
        body = is_error(post(client, ALIAS_FLOOD), "maximum of 30 aliases")
    assert body["errors"] == [{"message": "Query has more than the maximum of 30 aliases."}]
    assert len(queries) == 0, [q["sql"] for q in queries][:3]


@pytest.mark.django_db
def test_the_same_flood_without_breadth_limits_does_run_one_sql_query_per_alias(
    client: Client, configure: Configure, user: Any
) -> None:
    """The control for the test above: what the limits prevent."""
    Post.objects.bulk_create(Post(title=f"P{i}", author=user) for i in range(3))
    configure(SCHEMA=DEMO_SCHEMA)
    with CaptureQueriesContext(connection) as queries:
        body = is_ok(post(client, ALIAS_FLOOD))
    assert len(body["data"]) == 500
    assert len(queries) >= 500


# -- INTROSPECTION=False ----------------------------------------------------------------------
INTROSPECTING = {
    "schema": "{ __schema { queryType { name } } }",
    "type": '{ __type(name: "Node") { name fields { name } } }',
    "aliased": "{ s: __schema { types { name } } }",
    "fragment": "{ ...Meta } fragment Meta on Query { __schema { types { name } } }",
    "nested-fragment": "{ hello ...A } fragment A on Query { ...B } "
    'fragment B on Query { __type(name: "Query") { name } }',
    "inline-fragment": "{ ... on Query { __schema { queryType { name } } } }",
    "beside-data": "{ hello node { id } __schema { queryType { name } } }",
    "graphiql": get_introspection_query(input_value_deprecation=True, schema_description=True),
}


@pytest.mark.parametrize("query", INTROSPECTING.values(), ids=INTROSPECTING.keys())
def test_introspection_off_refuses_schema_and_type_anywhere(
    client: Client, configure: Configure, query: str
) -> None:
    configure(INTROSPECTION=False)
    body = is_error(post(client, query), "introspection is disabled")
    assert len(body["errors"]) == 1 and body["errors"][0]["locations"]
    assert schemas.CALLS == []


@pytest.mark.parametrize("query", INTROSPECTING.values(), ids=INTROSPECTING.keys())
def test_introspection_on_by_default_answers_schema_and_type(client: Client, query: str) -> None:
    body = is_ok(post(client, query))
    assert body["data"]


def test_introspection_off_keeps_typename(client: Client, configure: Configure) -> None:
    configure(INTROSPECTION=False)
    body = is_ok(post(client, "{ __typename node { __typename id } }"))
    assert body["data"] == {"__typename": "Query", "node": {"__typename": "Node", "id": "0"}}


SUGGESTING = {
    "field": ("{ helo }", "Cannot query field 'helo' on type 'Query'."),
    "argument": ('{ hello(nme: "x") }', "Unknown argument 'nme' on field 'Query.hello'."),
    "type": ("query($v: Strin) { echo(value: $v) }", "Unknown type 'Strin'."),
    "fragment-type": (
        "{ ...F } fragment F on Quer { hello }",
        "Unknown type 'Quer'.",
    ),
}


@pytest.mark.parametrize(("query", "hidden"), SUGGESTING.values(), ids=SUGGESTING.keys())
def test_introspection_off_removes_did_you_mean_from_validation_errors(
    client: Client, configure: Configure, query: str, hidden: str
) -> None:
    body = json_body(post(client, query))
    assert any("Did you mean" in e["message"] for e in body["errors"]), body["errors"]
    configure(INTROSPECTION=False)
    body = json_body(post(client, query))
    messages = [e["message"] for e in body["errors"]]
    assert hidden in messages, messages
    assert not any("Did you mean" in m for m in messages), messages


COLORS = build_schema(
    """
    enum Color { RED GREEN }
    input Paint { color: Color }
    type Query { paint(using: Paint): Color  shade(color: Color): Color  advice: String }
    """
)
assert COLORS.query_type is not None
COLORS.query_type.fields["paint"].resolve = lambda _, info, using: using["color"]
COLORS.query_type.fields["shade"].resolve = lambda _, info, color=None: color


def _advise(_: Any, info: Any) -> str:
    raise GraphQLError("No advice. Did you mean to sign in?")


COLORS.query_type.fields["advice"].resolve = _advise


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("query($c: Color) { shade(color: $c) }", {"c": "REDD"}),
        ("query($p: Paint) { paint(using: $p) }", {"p": {"colr": "RED"}}),
    ],
    ids=["enum-value", "input-field"],
)
def test_introspection_off_removes_did_you_mean_from_variable_errors(
    configure: Configure, query: str, variables: dict[str, Any]
) -> None:
    shown = execute_graphql(query=query, variables=variables, schema=COLORS)
    assert "Did you mean" in shown["errors"][0]["message"], shown
    configure(INTROSPECTION=False)
    hidden = execute_graphql(query=query, variables=variables, schema=COLORS)
    assert hidden["data"] is None
    assert hidden["errors"][0]["message"].startswith("Variable '$")
    assert "Did you mean" not in hidden["errors"][0]["message"], hidden


def test_introspection_off_leaves_the_applications_own_messages_alone(
    configure: Configure,
) -> None:
    configure(INTROSPECTION=False)
    result = execute_graphql(query="{ advice }", schema=COLORS)
    assert result["errors"][0]["message"] == "No advice. Did you mean to sign in?"
