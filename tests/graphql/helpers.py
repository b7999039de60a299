"""Request helpers shared by the GraphQL transport tests."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client


def post(client: Client, query: Any = None, path: str = "/graphql", **fields: Any) -> Any:
    """POST a JSON GraphQL request; ``fields`` become body keys (operationName etc.)."""
    body: dict[str, Any] = dict(fields)
    if query is not None:
        body["query"] = query
    return client.generic(
        "POST", path, data=json.dumps(body).encode(), content_type="application/json"
    )


def raw(
    client: Client,
    data: bytes,
    content_type: str = "application/json",
    path: str = "/graphql",
    method: str = "POST",
    **extra: Any,
) -> Any:
    return client.generic(method, path, data=data, content_type=content_type, **extra)


def json_body(response: Any) -> Any:
    assert response["Content-Type"].split(";")[0].strip() == "application/json", response[
        "Content-Type"
    ]
    return json.loads(response.content)


def nested_query(depth: int) -> str:
    """A query exactly ``depth`` fields deep: node, (depth-2) x child, id."""
    assert depth >= 2
    return "{ node " + "{ child " * (depth - 2) + "{ id }" + " }" * (depth - 2) + " }"


def is_ok(response: Any) -> dict[str, Any]:
    """The body of a 200 answer without errors."""
    assert response.status_code == 200, response.content
    body = json_body(response)
    assert "errors" not in body, body["errors"][:3]
    return body


def is_error(response: Any, fragment: str) -> dict[str, Any]:
    """The body of a 200 answer refused before execution (``data: null``), with an
    error whose message contains ``fragment``."""
    assert response.status_code == 200, response.content
    body = json_body(response)
    assert body["data"] is None
    assert any(fragment in e["message"] for e in body["errors"]), body["errors"][:3]
    return body


def aliases(n: int, plain: int = 0, field: str = "hello") -> str:
    """``{ a0:hello a1:hello ... hello hello }``: 2 + 3*n + plain tokens."""
    fields = [f"a{i}:{field}" for i in range(n)] + [field] * plain
    return "{ " + " ".join(fields) + " }"
