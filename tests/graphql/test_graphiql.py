"""GET serves the GraphiQL page when enabled (pinned CDN scripts with integrity hashes,
or self-hosted ones) and 405 otherwise; GET never executes a query; mutations only over
POST; the page says so in plain words when its assets cannot be loaded."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from appframework_graphql.graphiql import CDN_ASSETS

from . import schemas
from .conftest import Configure
from .helpers import json_body, post

pytestmark = [pytest.mark.usefixtures("gql")]

HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

# The pinned URLs and hashes written out independently of the code's table, so a change
# to the table has to be made twice: on purpose.
PINNED = {
    "https://unpkg.com/react@18.3.1/umd/react.production.min.js": "sha384-DGyLxAyjq0f9SPpVevD6IgztCFlnMF6oW/XQGmfe+IsZ8TqEiDrcHkMLKI6fiB/Z",
    "https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js": "sha384-gTGxhz21lVGYNMcdJOyq01Edg0jhn/c22nsx0kyqP0TxaV5WVdsSH1fSDUf5YJj1",
    "https://unpkg.com/graphiql@4.1.2/graphiql.min.js": "sha384-9XdHu7ajgGJziD4J1zNBKQ842Q/+zZfDv+ib1eMhZWBH6hPAs806x+Jbcf0yNO6B",
    "https://unpkg.com/graphiql@4.1.2/graphiql.min.css": "sha384-1el1QShFBnnXTx9x/Cprg82hZWKt0ry29OAYIXt05swbi0KcZDFoj0CWguMpopJr",
}


def page(response: Any) -> str:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    assert "GraphiQL" in text
    return text


def json_script(text: str, element_id: str) -> Any:
    match = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', text, re.S
    )
    assert match, f"no json_script {element_id}"
    return json.loads(match.group(1))


def tag_for(text: str, url: str) -> str:
    match = re.search(rf'<(?:script|link)[^>]*(?:src|href)="{re.escape(url)}"[^>]*>', text)
    assert match, f"no tag loads {url}"
    return match.group(0)


def assert_405(response: Any) -> None:
    assert response.status_code == 405
    assert "POST" in [m.strip() for m in response["Allow"].split(",")]
    assert json_body(response)["errors"][0]["message"]


# -- enabled / disabled -----------------------------------------------------------------------
def test_get_serves_graphiql_when_enabled(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    text = page(client.get("/graphql", **HTML))
    assert json_script(text, "graphql-endpoint") == "/graphql"


def test_get_without_accept_header_serves_graphiql_when_enabled(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    page(client.get("/graphql"))


def test_get_asking_for_json_only_is_405_even_when_enabled(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    assert_405(client.get("/graphql", HTTP_ACCEPT="application/json"))


def test_get_is_405_with_allow_post_and_json_body_when_disabled(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=False)
    response = client.get("/graphql", **HTML)
    assert_405(response)
    assert response["Allow"] == "POST"


@pytest.mark.parametrize("debug", [True, False])
def test_graphiql_none_follows_debug(
    client: Client, configure: Configure, settings: Any, debug: bool
) -> None:
    configure(GRAPHIQL=None)
    settings.DEBUG = debug
    response = client.get("/graphql", **HTML)
    if debug:
        page(response)
    else:
        assert_405(response)


def test_head_follows_get(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    assert client.head("/graphql", **HTML).status_code == 200
    configure(GRAPHIQL=False)
    assert client.head("/graphql", **HTML).status_code == 405


def test_page_is_not_stored_by_shared_caches(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    response = client.get("/graphql", **HTML)
    assert "no-store" in response["Cache-Control"]


# -- CDN assets -------------------------------------------------------------------------
def test_page_loads_pinned_cdn_assets_with_sri(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    text = page(client.get("/graphql", **HTML))
    for url, integrity in PINNED.items():
        tag = tag_for(text, url)
        assert f'integrity="{integrity}"' in tag, tag
        assert integrity.startswith("sha384-")
        assert 'crossorigin="anonymous"' in tag
    assert {url for url, _ in CDN_ASSETS.values()} == set(PINNED)


def test_graphiql_assets_override_replaces_urls(client: Client, configure: Configure) -> None:
    configure(
        GRAPHIQL=True,
        GRAPHIQL_ASSETS={
            "graphiql_js": "/static/vendor/graphiql.min.js",
            "graphiql_css": "/static/vendor/graphiql.min.css",
            "react": "/static/vendor/react.js",
            "react_integrity": "sha384-selfhostedreact",
        },
    )
    text = page(client.get("/graphql", **HTML))
    assert "unpkg.com/graphiql" not in text
    assert "unpkg.com/react@" not in text
    assert 'integrity="sha384-9XdHu7' not in text
    js = tag_for(text, "/static/vendor/graphiql.min.js")
    assert "integrity" not in js  # a replaced asset has no hash unless one is given
    tag_for(text, "/static/vendor/graphiql.min.css")
    assert 'integrity="sha384-selfhostedreact"' in tag_for(text, "/static/vendor/react.js")
    # react-dom was not overridden: still the pinned CDN copy
    dom = "https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js"
    assert f'integrity="{PINNED[dom]}"' in tag_for(text, dom)


# -- CSRF wiring of the page ------------------------------------------------------------------------
def test_page_sends_the_default_csrf_header_and_reads_the_default_cookie(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    response = client.get("/graphql", **HTML)
    text = page(response)
    assert json_script(text, "graphql-csrf-header") == "X-CSRF-Token"
    assert json_script(text, "graphql-csrf-cookie") == "csrf_token"
    token = json_script(text, "graphql-csrf-token")
    assert token and token == response.cookies["csrf_token"].value


def test_page_uses_a_custom_csrf_header_and_cookie_name(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True, csrf={"HEADER_NAME": "X-Custom-Csrf", "COOKIE_NAME": "custom_csrf"})
    response = client.get("/graphql", **HTML)
    text = page(response)
    assert json_script(text, "graphql-csrf-header") == "X-Custom-Csrf"
    assert json_script(text, "graphql-csrf-cookie") == "custom_csrf"
    assert "X-CSRF-Token" not in text
    assert '"csrf_token"' not in text
    assert json_script(text, "graphql-csrf-token") == response.cookies["custom_csrf"].value


def test_configured_names_cannot_break_out_of_the_script(
    client: Client, configure: Configure
) -> None:
    evil = "X-A</script><script>alert(1)</script>"
    configure(GRAPHIQL=True, csrf={"HEADER_NAME": evil})
    text = page(client.get("/graphql", **HTML))
    assert "<script>alert(1)" not in text
    assert json_script(text, "graphql-csrf-header") == evil


@pytest.mark.urls("tests.graphql.urls")
def test_page_posts_to_the_path_it_is_served_from(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    text = page(client.get("/custom/api/gql", **HTML))
    assert json_script(text, "graphql-endpoint") == "/custom/api/gql"


# -- GET never executes; mutations only over POST --------------------------------------------------
@pytest.mark.parametrize("graphiql", [True, False])
@pytest.mark.parametrize(
    "params",
    [
        {"query": "{ hello }"},
        {"query": "mutation { bump }"},
        {"query": "query Q { hello }", "operationName": "Q", "variables": "{}"},
    ],
)
def test_get_never_executes_a_query(
    client: Client, configure: Configure, graphiql: bool, params: dict[str, str]
) -> None:
    configure(GRAPHIQL=graphiql)
    for accept in (HTML, {"HTTP_ACCEPT": "application/json"}, {}):
        response = client.get("/graphql", params, **accept)
        if response.status_code == 200:
            assert graphiql, "GET answered 200 with the UI disabled"
            page(response)
        else:
            assert_405(response)
        assert b"Hello, world!" not in response.content
    assert schemas.CALLS == []
    assert schemas.COUNTER["value"] == 0


def test_get_with_query_and_graphiql_disabled_is_405(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=False)
    assert_405(client.get("/graphql?query={hello}"))
    assert schemas.CALLS == []


def test_mutations_run_only_over_post(client: Client, configure: Configure) -> None:
    configure(GRAPHIQL=True)
    for method in ("GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"):
        client.generic(
            method,
            "/graphql?query=mutation%7Bbump%7D",
            data=b'{"query": "mutation { bump }"}',
            content_type="application/json",
        )
    assert schemas.COUNTER["value"] == 0
    assert json_body(post(client, "mutation { bump }")) == {"data": {"bump": 1}}
