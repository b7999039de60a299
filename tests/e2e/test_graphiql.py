"""GraphiQL in the browser, served from the local copy of its files: a query and a
mutation typed into its editor and run with the signed-in session."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest

from appframework_graphql.graphiql import LOCAL_FILES, LOCAL_URL_PREFIX
from testproject.blog.management.commands.seed_demo import DEMO_USERS
from tests.conftest import skip_or_fail_on_ci

from .conftest import Browsing, GraphiqlAssets, Steps, expect, log_in

MODERATOR = next(user for user in DEMO_USERS if user.role == "moderator")

QUERY_EDITOR = ".graphiql-query-editor .CodeMirror"
RESPONSE = ".graphiql-response"


def editor_text(page: Any) -> str:
    return str(page.eval_on_selector(QUERY_EDITOR, "el => el.CodeMirror.getValue()"))


def run(page: Any, document: str) -> None:
    """Type ``document`` into the query editor as a user would (select all, type over)
    and run it with Ctrl-Enter."""
    page.locator(QUERY_EDITOR).click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("Delete")
    # All at once, as a paste would: key by key, the editor's bracket closing and
    # auto-indent act on every keystroke and the result depends on their rules.
    page.keyboard.insert_text(document)
    assert editor_text(page) == document
    page.keyboard.press("ControlOrMeta+Enter")


def result(page: Any) -> Any:
    """The result pane's JSON, once it holds a complete document."""
    expect(page.locator(RESPONSE)).to_contain_text('"data"')
    text = str(page.eval_on_selector(f"{RESPONSE} .CodeMirror", "el => el.CodeMirror.getValue()"))
    return json.loads(text)


@pytest.fixture
def local_graphiql(graphiql_assets: GraphiqlAssets) -> Path:
    """The local copy of GraphiQL's files the demo serves (before any page is opened)."""
    if graphiql_assets.directory is None:
        skip_or_fail_on_ci(graphiql_assets.problem)
    assert graphiql_assets.directory is not None
    return graphiql_assets.directory


def test_graphiql_from_local_files_runs_a_query_and_a_mutation_with_the_session(
    local_graphiql: Path, browsing: Browsing, page: Any, steps: Steps
) -> None:
    assets: dict[str, int] = {}

    def record_asset(response: Any) -> None:
        if LOCAL_URL_PREFIX in response.url:
            assets[response.url.rsplit("/", 1)[1]] = response.status

    page.on("response", record_asset)
    # The page runs under its own Content-Security-Policy: nothing it needs is refused.
    refused: list[str] = []
    page.on(
        "console",
        lambda message: refused.append(message.text)
        if "Content Security Policy" in message.text
        else None,
    )
    log_in(page, MODERATOR.email, MODERATOR.password)
    page.goto("/graphql")
    expect(page.locator(QUERY_EDITOR)).to_be_visible()
    expect(page.locator("#graphiql-unavailable")).to_be_hidden()
    # Every file from this server, none from a CDN (nor from anywhere else).
    assert assets == {name: 200 for name in LOCAL_FILES.values()}
    assert browsing.external == []
    steps(page, "graphiql loaded")

    run(page, "{ me { email } }")
    expect(page.locator(RESPONSE)).to_contain_text(MODERATOR.email)
    assert result(page) == {"data": {"me": {"email": MODERATOR.email}}}
    steps(page, "query me")

    title = f"GraphiQL post {secrets.token_hex(4)}"
    run(page, f'mutation {{ createPost(title: "{title}") {{ id title }} }}')
    expect(page.locator(RESPONSE)).to_contain_text(title)
    created = result(page)["data"]["createPost"]
    assert created["title"] == title
    assert re.fullmatch(r"\d+", created["id"])
    steps(page, "mutation createPost")

    assert refused == []

    page.goto("/blog")
    expect(page.locator(f'li.post[data-id="{created["id"]}"]')).to_contain_text(title)
    steps(page, "post listed on the blog")
    assert browsing.external == []
