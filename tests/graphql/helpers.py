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
