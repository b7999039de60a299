"""The OpenAPI document of the JSON API: valid OpenAPI 3.1 (schemathesis's copy of the
official schema, and each body schema valid JSON Schema 2020-12), every endpoint the
URLconf mounts documented for both clients with its methods, every documented operation
answered by a view, and served at ``headless:openapi``."""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs
import pytest
from django.test import Client
from django.urls import Resolver404, resolve, reverse
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from appframework.headless.base import CLIENTS
from appframework.headless.openapi import OPERATIONS, openapi_document, openapi_path
from appframework.headless.urls import ENDPOINTS

PREFIX = "/api/auth"  # where the demo mounts the include


@pytest.fixture
def document() -> dict[str, Any]:
    return openapi_document(ENDPOINTS, f"http://testserver{PREFIX}")


def _schemas(node: Any) -> list[dict[str, Any]]:
    """Every ``schema`` object of the operations (bodies, responses, parameters)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "schema" and isinstance(value, dict):
                found.append(value)
            else:
                found += _schemas(value)
    elif isinstance(node, list):
        for value in node:
            found += _schemas(value)
    return found


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    errors = [f"{e.instance_path}: {e.message}" for e in OPENAPI_31_VALIDATOR.iter_errors(document)]
    assert errors == []
    assert document["openapi"].startswith("3.1.")


def test_every_schema_is_valid_json_schema_2020_12(document: dict[str, Any]) -> None:
    schemas = [*document["components"]["schemas"].values(), *_schemas(document["paths"])]
    for schema in schemas:
        jsonschema_rs.meta.validate(schema)
    # Every reference names a component.
    refs = {s["$ref"] for s in _walk(document) if "$ref" in s}
    names = {f"#/components/schemas/{name}" for name in document["components"]["schemas"]}
    assert refs and refs <= names


def _walk(node: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(node, dict):
        out.append(node)
        for value in node.values():
            out += _walk(value)
    elif isinstance(node, list):
        for value in node:
            out += _walk(value)
    return out


def test_every_endpoint_is_documented_for_both_clients_with_its_methods(
    document: dict[str, Any],
) -> None:
    for route, view, name in ENDPOINTS:
        assert name in OPERATIONS, f"{name} has no entry in OPERATIONS"
        methods = {m for m in view.http_method_names if m != "options"}
        assert set(OPERATIONS[name]) == methods, name
        path, _parameters = openapi_path(route)
        for client in CLIENTS:
            item = document["paths"][f"/{client}/v1/{path}"]
            assert set(item) == methods, (client, name)


def test_every_documented_operation_resolves_to_its_view(document: dict[str, Any]) -> None:
    views = {name: view for _route, view, name in ENDPOINTS}
    ids = []
    for path, item in document["paths"].items():
        concrete = path.replace("{pk}", "1").replace("{kind}", "oauth")
        match = resolve(PREFIX + concrete)
        client, _version, _rest = path.lstrip("/").split("/", 2)
        assert match.namespaces == ["headless", client], path
        assert match.func.view_class is views[match.url_name], path
        for method, operation in item.items():
            assert method in match.func.view_class.http_method_names
            ids.append(operation["operationId"])
    assert len(ids) == len(set(ids))


def test_each_operation_documents_its_errors(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert any(status.startswith("2") for status in responses)
            signed_in = all(
                {"sessionCookie", "sessionToken"} & set(requirement)
                for requirement in operation["security"]
            )
            if signed_in:
                assert "not_authenticated" in responses["401"]["x-codes"], path
            if path.startswith("/browser/") and method != "get":
                assert "csrf_token_missing" in responses["403"]["x-codes"], path
            for status, response in responses.items():
                if status >= "400":
                    assert "application/problem+json" in response["content"], (path, status)


def test_the_tables_entries_for_endpoints_not_mounted_yet_are_well_formed() -> None:
    # Documented only once the URLconf mounts them (sessions, API tokens).
    endpoints = [
        ("account/sessions", "sessions", ["get"]),
        ("account/sessions/<int:pk>", "user-session", ["delete"]),
        ("account/sessions/end-others", "end-other-sessions", ["post"]),
        ("account/tokens", "tokens", ["get", "post"]),
        ("account/tokens/<int:pk>", "token", ["delete"]),
    ]

    class Stub:
        def __init__(self, methods: list[str]) -> None:
            self.http_method_names = methods

    document = openapi_document([(r, Stub(m), n) for r, n, m in endpoints])
    assert OPENAPI_31_VALIDATOR.iter_errors(document) is not None
    assert not list(OPENAPI_31_VALIDATOR.iter_errors(document))
    post = document["paths"]["/app/v1/account/tokens"]["post"]
    assert "201" in post["responses"]
    assert "reauthentication_required" in post["responses"]["401"]["x-codes"]
    delete = document["paths"]["/browser/v1/account/sessions/{pk}"]["delete"]
    assert delete["responses"]["409"]["x-codes"] == ["current_session"]


def test_the_document_is_served_inside_the_include(client: Client) -> None:
    url = reverse("headless:openapi")
    assert url == f"{PREFIX}/openapi.json"
    response = client.get(url, HTTP_HOST="testserver")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    served = response.json()
    assert served["servers"] == [{"url": f"http://testserver{PREFIX}"}]
    assert served == openapi_document(ENDPOINTS, f"http://testserver{PREFIX}")


def test_a_path_outside_the_document_is_not_an_endpoint() -> None:
    with pytest.raises(Resolver404):
        resolve(f"{PREFIX}/browser/v1/no-such-endpoint")


def test_the_demos_landing_page_links_the_document(client: Client) -> None:
    page = client.get("/").content.decode()
    item = re.search(r'<li><a href="/api/auth/openapi.json">.*?</li>', page, re.S)
    assert item and "Look for" in item.group(0)
