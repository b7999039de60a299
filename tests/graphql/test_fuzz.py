"""Property test of the whole route: whatever arrives (random bytes, random JSON, GraphQL
requests with random query text and variables, random content types, methods and URL
query strings), the answer is never a 5xx and every body except the GraphiQL page is
JSON: malformed requests are 4xx, execution results 200."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import pytest
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from .conftest import Configure

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def _graphiql(configure: Configure, graphiql: bool) -> None:
    # Once per test, not per example: every settings override nests one more layer.
    configure(GRAPHIQL=graphiql)


PATHS = ["/graphql", "/agraphql"]
METHODS = ["POST"] * 12 + ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"]
CONTENT_TYPES = [
    *["application/json"] * 12,
    "application/json; charset=utf-8",
    "application/json; charset=latin-1",
    "application/json;charset",
    'application/json; charset="utf-8"',
    "application/graphql",
    "application/graphql-response+json",
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "multipart/form-data; boundary=BoUnDaRy",
    "",
    "*/*",
    ";;;",
]
ACCEPTS = [
    "",
    "*/*",
    "application/json",
    "text/html",
    "application/graphql-response+json",
    "image/png",
]

# Text with everything: control characters, astral characters and lone surrogates, plus a
# small alphabet of the characters most likely to trip an encoder or an escaper.
TRICKY = ["\ud800", "\udfff", "\x00", "\n", '"', "\\", "é", "𝄞", "\u2028", "<", "&"]
any_text = st.one_of(
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40),
    st.text(alphabet=st.sampled_from(TRICKY), max_size=8),
)

GRAPHQL_WORDS = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    "$",
    "!",
    "=",
    "@",
    "...",
    "|",
    "&",
    ",",
    "query",
    "mutation",
    "subscription",
    "fragment",
    "on",
    "F",
    "Q",
    "v",
    "Int",
    "String",
    "hello",
    "asyncHello",
    "echo",
    "number",
    "boom",
    "asyncBoom",
    "visible",
    "forbidden",
    "unauthorized",
    "node",
    "child",
    "id",
    "ctx",
    "asyncCtx",
    "keys",
    "anything",
    "bump",
    "ticks",
    "strictBoom",
    "__typename",
    "__schema",
    "__type",
    "name",
    "value",
    "types",
    "fields",
    "ofType",
    "kind",
    "true",
    "null",
    "1",
    "-0",
    "1e400",
    "3.5",
    '"x"',
    '"\\u00e9"',
    '"\\ud800"',
    '"""block"""',
    "#c\n",
    "@skip(if: true)",
    "@include(if: $v)",
    "$v",
    "\n",
    " ",
]
graphql_text = st.lists(st.sampled_from(GRAPHQL_WORDS), max_size=60).map(" ".join)
TEMPLATES = [
    "{ hello }",
    "{ boom hello }",
    "query Q($s: String) { echo(value: $s) hello(name: $s) }",
    "query Q($v: Int!) { number(value: $v) }",
    "query Q { hello } query F { visible }",
    "mutation Q($n: Int) { bump(by: $n) }",
    "query Q($v: Boolean!) { hello @include(if: $v) node @skip(if: $v) { id } }",
]
query_text = st.one_of(
    graphql_text, any_text, st.sampled_from(TEMPLATES), st.sampled_from(TEMPLATES)
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=12,
)
variables = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["v", "s", "n", "id", "x"]), json_values, max_size=3),
    st.fixed_dictionaries({"s": any_text, "v": json_scalars, "n": json_scalars}),
    json_values,
)
graphql_requests = st.fixed_dictionaries(
    {"query": st.one_of(query_text, json_values)},
    optional={
        "variables": variables,
        "operationName": st.one_of(
            st.none(), st.sampled_from(["Q", "F", "A"]), any_text, json_values
        ),
        "extensions": st.one_of(st.none(), json_values),
    },
)


def encode(value: Any, ensure_ascii: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


bodies = st.one_of(
    st.binary(max_size=200),
    st.builds(encode, json_values, st.booleans()),
    st.builds(encode, graphql_requests, st.booleans()),
)
url_queries = st.one_of(
    st.just(""),
    st.builds(
        lambda q: "query=" + q,
        st.sampled_from(["%7Bhello%7D", "mutation%7Bbump%7D", "%ff", "%", "{hello}"]),
    ),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz=&%{}+0123456789", max_size=30),
)


class Request(NamedTuple):
    method: str
    path: str
    url_query: str
    body: bytes
    content_type: str
    accept: str


# Anything at all: random method, body, content type and URL query string.
chaos = st.builds(
    Request,
    method=st.sampled_from(METHODS),
    path=st.sampled_from(PATHS),
    url_query=url_queries,
    body=bodies,
    content_type=st.one_of(
        st.sampled_from(CONTENT_TYPES),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz/+;=- ", max_size=30),
    ),
    accept=st.sampled_from(ACCEPTS),
)
# A well-formed POST of a JSON GraphQL request: where execution, error formatting and
# response encoding are reached, so where most of the examples go.
well_formed = st.builds(
    Request,
    method=st.just("POST"),
    path=st.sampled_from(PATHS),
    url_query=st.sampled_from(["", "query=%7Bhello%7D"]),
    body=st.builds(
        encode,
        st.fixed_dictionaries(
            {"query": query_text},
            optional={
                "variables": variables,
                "operationName": st.one_of(st.none(), st.sampled_from(["Q", "F"]), any_text),
            },
        ),
        st.just(True),  # escapes keep even lone surrogates valid UTF-8 JSON
    ),
    content_type=st.sampled_from(["application/json", "application/json; charset=utf-8"]),
    accept=st.sampled_from(ACCEPTS),
)
requests = st.one_of(chaos, well_formed, well_formed)


@pytest.mark.urls("tests.graphql.urls")
@pytest.mark.parametrize("graphiql", [True, False], ids=["graphiql-on", "graphiql-off"])
@pytest.mark.usefixtures("_graphiql")
@hsettings(
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(request=requests)
def test_no_request_gets_a_5xx_and_every_non_graphiql_body_is_json(
    request: Request, graphiql: bool
) -> None:
    method, path, url_query, body, content_type, accept = request
    client = Client()
    extra = {"HTTP_ACCEPT": accept} if accept else {}
    url = f"{path}?{url_query}" if url_query else path
    response = client.generic(method, url, data=body, content_type=content_type, **extra)
    assert response.status_code < 500, (response.status_code, method, content_type, body[:200])
    if response["Content-Type"].startswith("text/html"):
        # Only the GraphiQL page is HTML, and only for a GET/HEAD with the UI on.
        assert graphiql and method in ("GET", "HEAD"), (method, response.status_code)
        assert response.status_code == 200
        return
    if method == "HEAD" and not response.content:
        return  # a HEAD answer carries no body
    parsed = json.loads(response.content)
    assert isinstance(parsed, dict)
    if response.status_code == 200:
        assert method == "POST"
        assert "data" in parsed
        assert set(parsed) <= {"data", "errors"}
        if "errors" in parsed:
            assert parsed["errors"] and all(isinstance(e["message"], str) for e in parsed["errors"])
    else:
        assert response.status_code in (400, 405, 415), response.status_code
        assert parsed["errors"]
