"""GraphiQL without the CDN: the page explains in plain words when its assets do not
load (naming the GRAPHIQL_ASSETS setting and docs/graphql.md) — checked in the HTML and,
with a fake network, in jsdom — while a page whose assets arrive, even late, starts
GraphiQL; a local copy is mapped file by file by ``assets_from_directory`` and served by
``asset_urlpatterns``: those four files and nothing else."""

from __future__ import annotations

import json
import re
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.urls import include, path

from appframework_graphql.checks import check_graphql_settings
from appframework_graphql.graphiql import (
    CDN_ASSETS,
    LOCAL_FILES,
    asset_urlpatterns,
    assets_from_directory,
)

from .conftest import NODE_DIR, Configure

# Where GraphiQL's files come from does not depend on the database.
pytestmark = [pytest.mark.usefixtures("gql"), pytest.mark.database_independent]

HTML = {"HTTP_ACCEPT": "text/html"}

# Written out independently of the code: the file names inside the npm packages.
EXPECTED_FILES = {
    "react": "react.production.min.js",
    "react_dom": "react-dom.production.min.js",
    "graphiql_js": "graphiql.min.js",
    "graphiql_css": "graphiql.min.css",
}


@pytest.fixture
def asset_dir(tmp_path: Path) -> Path:
    """A local copy (placeholder contents), a stray file beside it and one above it."""
    directory = tmp_path / "graphiql"
    directory.mkdir()
    for key, name in EXPECTED_FILES.items():
        (directory / name).write_text(f"/* {key} */")
    (directory / "notes.txt").write_text("not an asset")
    (tmp_path / "secret.txt").write_text("outside the directory")
    return directory


def page(client: Client) -> str:
    response = client.get("/graphql", **HTML)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/html")
    return response.content.decode()


def urlconf(*patterns: Any) -> types.ModuleType:
    """A URLconf module: the endpoint plus ``patterns``."""
    module = types.ModuleType("graphiql_asset_urls")
    module.urlpatterns = [path("", include("appframework_graphql.urls")), *patterns]  # type: ignore[attr-defined]
    return module


# -- the page when its assets do not load ------------------------------------------------------
def test_page_carries_a_plain_failure_message_naming_the_setting_and_the_docs(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    text = page(client)
    notice = re.search(r'<div id="graphiql-unavailable"[^>]*>(.*?)</div>', text, re.S)
    assert notice, "no failure notice in the page"
    assert " hidden" in notice.group(0).split(">")[0]  # shown only by the script
    words = re.sub(r"\s+", " ", notice.group(1))
    assert "GraphiQL could not be loaded" in words
    assert 'APPFRAMEWORK["GRAPHQL"]["GRAPHIQL_ASSETS"]' in words
    assert "docs/graphql.md" in words and "Self-hosting GraphiQL" in words
    assert "alert(" not in text


def test_page_detects_failed_assets_and_a_10_second_timeout(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    text = page(client)
    # Resource errors do not bubble: a capture-phase listener, registered before any
    # asset tag so an early failure is not missed.
    capture = re.search(
        r'window\.addEventListener\("error", function \(event\) \{.*?\}, true\);', text, re.S
    )
    assert capture, "no capture-phase error listener"
    listener = capture.start()
    first_asset = min(text.index('<link rel="stylesheet"'), text.index("<script defer"))
    assert listener < first_asset
    assert "TIMEOUT_MS = 10000" in text
    assert 'typeof window.GraphiQL === "undefined"' in text
    # Deferred scripts: the page renders its text while they load.
    assert len(re.findall(r"<script defer src=", text)) == 3


def test_page_keeps_to_inline_scripts_without_inline_event_handlers(
    client: Client, configure: Configure
) -> None:
    configure(GRAPHIQL=True)
    text = page(client)
    assert not re.search(r"\son[a-z]+\s*=", text), "inline event handler attribute"
    assert "javascript:" not in text


# -- assets_from_directory ------------------------------------------------------------------------
def test_local_file_names_are_the_last_segment_of_the_cdn_urls() -> None:
    assert LOCAL_FILES == EXPECTED_FILES
    for key, name in LOCAL_FILES.items():
        assert CDN_ASSETS[key][0].endswith("/" + name)


def test_directory_helper_maps_each_key_to_its_file_url_and_pinned_hash(asset_dir: Path) -> None:
    mapped = assets_from_directory(asset_dir)
    assert mapped == {
        **{key: f"/graphiql-assets/{name}" for key, name in EXPECTED_FILES.items()},
        **{f"{key}_integrity": CDN_ASSETS[key][1] for key in EXPECTED_FILES},
    }
    assert assets_from_directory(str(asset_dir), "/static/gq/")["react"] == (
        "/static/gq/react.production.min.js"
    )


def test_directory_helper_names_every_missing_file(asset_dir: Path) -> None:
    (asset_dir / "graphiql.min.css").unlink()
    (asset_dir / "react.production.min.js").unlink()
    with pytest.raises(ImproperlyConfigured) as raised:
        assets_from_directory(asset_dir)
    message = str(raised.value)
    assert "graphiql.min.css" in message and "react.production.min.js" in message
    assert "graphiql.min.js," not in message and "docs/graphql.md" in message


def test_directory_helper_refuses_a_directory_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ImproperlyConfigured):
        assets_from_directory(tmp_path / "nowhere")


def test_helper_output_passes_the_system_check(configure: Configure, asset_dir: Path) -> None:
    configure(GRAPHIQL_ASSETS=assets_from_directory(asset_dir))
    assert [e.id for e in check_graphql_settings()] == []


def test_page_references_the_local_urls_with_graphiql_assets_set(
    client: Client, configure: Configure, asset_dir: Path
) -> None:
    configure(GRAPHIQL=True, GRAPHIQL_ASSETS=assets_from_directory(asset_dir))
    text = page(client)
    assert not re.search(r'(?:src|href)="https://unpkg\.com', text)
    for key, name in EXPECTED_FILES.items():
        tag = re.search(rf'<(?:script|link)[^>]*"/graphiql-assets/{re.escape(name)}"[^>]*>', text)
        assert tag, f"no tag loads /graphiql-assets/{name}"
        assert f'integrity="{CDN_ASSETS[key][1]}"' in tag.group(0)


# -- asset_urlpatterns: the four files, nothing else ----------------------------------------------
def test_no_directory_means_no_routes() -> None:
    assert asset_urlpatterns(None) == []
    assert asset_urlpatterns("") == []


def test_local_copy_is_served_file_by_file(client: Client, settings: Any, asset_dir: Path) -> None:
    settings.ROOT_URLCONF = urlconf(*asset_urlpatterns(asset_dir))
    for key, name in EXPECTED_FILES.items():
        response = client.get(f"/graphiql-assets/{name}")
        assert response.status_code == 200, name
        assert b"".join(response.streaming_content) == f"/* {key} */".encode()
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        assert response["Content-Type"].startswith(kind)
    assert client.head("/graphiql-assets/graphiql.min.js").status_code == 200
    assert client.post("/graphiql-assets/graphiql.min.js").status_code == 405


def test_routes_follow_a_custom_prefix(client: Client, settings: Any, asset_dir: Path) -> None:
    settings.ROOT_URLCONF = urlconf(*asset_urlpatterns(asset_dir, "/static/gq/"))
    assert client.get("/static/gq/graphiql.min.css").status_code == 200
    assert client.get("/graphiql-assets/graphiql.min.css").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/graphiql-assets/notes.txt",
        "/graphiql-assets/../secret.txt",
        "/graphiql-assets/%2e%2e/secret.txt",
        "/graphiql-assets/..%2fsecret.txt",
        "/graphiql-assets/..%5csecret.txt",
        "/graphiql-assets/%2e%2e%2fsecret.txt",
        "/graphiql-assets/graphiql.min.js/../../secret.txt",
        "/graphiql-assets/",
        "/graphiql-assets/graphiql.min.js%00.txt",
        "/graphiql-assets//etc/passwd",
    ],
)
def test_nothing_but_the_four_files_is_reachable(
    client: Client, settings: Any, asset_dir: Path, url: str
) -> None:
    settings.ROOT_URLCONF = urlconf(*asset_urlpatterns(asset_dir))
    response = client.get(url)
    assert response.status_code == 404, url
    body = response.content if not response.streaming else b"".join(response.streaming_content)
    assert b"outside the directory" not in body and b"not an asset" not in body


# -- what a visitor sees: the page in jsdom, with a fake network -----------------------------------
def _local(kind: str, **overrides: str) -> dict[str, str]:
    """GRAPHIQL_ASSETS pointing every file at http://assets.test/<kind>/<file>."""
    urls = {key: f"http://assets.test/{kind}/{name}" for key, name in EXPECTED_FILES.items()}
    return {**urls, **overrides}


PAGE_CASES: dict[str, dict[str, str] | None] = {
    "cdn-unreachable": None,  # the default assets; the fake network has no unpkg.com
    "all-loaded": _local("ok"),
    "script-fails": _local("ok", graphiql_js="http://assets.test/offline/graphiql.min.js"),
    "stylesheet-fails": _local("ok", graphiql_css="http://assets.test/offline/graphiql.min.css"),
    "script-stalls": _local("ok", react_dom="http://assets.test/stall/react-dom.production.min.js"),
    "slow-but-arrives": _local("ok", graphiql_js="http://assets.test/late/graphiql.min.js"),
}


@pytest.fixture(scope="module")
def seen_in_jsdom(node: str) -> dict[str, dict[str, Any]]:
    """What each PAGE_CASES page shows 12 s after loading (all pages at once)."""
    pages: dict[str, str] = {}
    for name, assets in PAGE_CASES.items():
        graphql = {"SCHEMA": "tests.graphql.schemas.schema", "GRAPHIQL": True}
        with override_settings(APPFRAMEWORK={"GRAPHQL": {**graphql, "GRAPHIQL_ASSETS": assets}}):
            pages[name] = page(Client())
    done = subprocess.run(
        [node, str(NODE_DIR / "graphiql_page.cjs")],
        input=json.dumps(pages),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen: dict[str, dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("cdn-unreachable", "could not be loaded: https://unpkg.com/"),
        ("script-fails", "could not be loaded: http://assets.test/offline/graphiql.min.js"),
        ("stylesheet-fails", "could not be loaded: http://assets.test/offline/graphiql.min.css"),
        ("script-stalls", "did not finish loading within 10 seconds"),
    ],
)
def test_page_tells_the_visitor_when_graphiql_cannot_load(
    seen_in_jsdom: dict[str, dict[str, Any]], case: str, reason: str
) -> None:
    seen = seen_in_jsdom[case]
    assert seen["noticeHidden"] is False and seen["uiHidden"] is True, seen
    assert reason in seen["reason"], seen


@pytest.mark.parametrize("case", ["all-loaded", "slow-but-arrives"])
def test_page_starts_graphiql_when_the_assets_arrive(
    seen_in_jsdom: dict[str, dict[str, Any]], case: str
) -> None:
    seen = seen_in_jsdom[case]
    assert seen["uiText"] == "GraphiQL rendered", seen
    assert seen["noticeHidden"] is True and seen["uiHidden"] is False, seen
