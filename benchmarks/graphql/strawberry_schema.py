"""The benchmark schema for strawberry (imported only in the strawberry venv).

Module level and without ``from __future__ import annotations``, so strawberry can resolve
the types (it looks annotations up in the module's globals).
"""

# ruff: noqa: UP045 - Optional["Node"]: strawberry resolves the forward reference by name.
from typing import Any, Optional

import strawberry
from bench_schemas import child_of, hello, root_node
from strawberry.schema.config import StrawberryConfig


@strawberry.type(name="Node")
class Node:
    id: strawberry.ID

    @strawberry.field
    def child(self) -> Optional["Node"]:
        return child_of(self)  # type: ignore[arg-type]  # the source is an Item


@strawberry.type(name="Query")
class Query:
    @strawberry.field(name="hello")
    def hello_(self, name: Optional[str] = strawberry.UNSET) -> str:
        return hello(None if name is strawberry.UNSET else name)

    @strawberry.field
    def node(self) -> Optional[Node]:
        return root_node()  # type: ignore[return-value]


def build(extensions: Optional[list[Any]] = None) -> strawberry.Schema:
    return strawberry.Schema(
        query=Query,
        config=StrawberryConfig(auto_camel_case=False),
        extensions=extensions or [],
    )
