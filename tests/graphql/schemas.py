"""Schemas for the GraphQL transport tests (plain graphql-core).

Every resolver records its field name in ``CALLS`` (the "resolver spy") and the
``info.context`` it saw in ``CONTEXTS``; tests reset both (see conftest.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from graphql import GraphQLError, GraphQLResolveInfo, GraphQLScalarType, build_schema

from appframework.exceptions import ForbiddenException, UnauthorizedException

CALLS: list[str] = []
CONTEXTS: list[Any] = []
COUNTER = {"value": 0}

SDL = """
scalar Anything

type Node {
  id: ID
  child: Node
}

type Ctx {
  keys: [String!]!
  child: Ctx
  asyncChild: Ctx
}

type Query {
  hello(name: String): String!
  asyncHello(name: String): String!
  echo(value: String): String
  number(value: Int!): Int!
  boom: String
  strictBoom: String!
  asyncBoom: String
  visible: String
  forbidden: String
  unauthorized: String
  node: Node
  ctx: Ctx
  asyncCtx: Ctx
  anything: Anything
}

type Mutation {
  bump(by: Int = 1): Int!
}

type Subscription {
  ticks: Int
}
"""

schema = build_schema(SDL)


def _record(info: GraphQLResolveInfo) -> None:
    CALLS.append(info.field_name)
    CONTEXTS.append(info.context)


def resolve_hello(_: Any, info: GraphQLResolveInfo, name: str | None = None) -> str:
    _record(info)
    return f"Hello, {name or 'world'}!"


async def resolve_async_hello(_: Any, info: GraphQLResolveInfo, name: str | None = None) -> str:
    _record(info)
    await asyncio.sleep(0)
    return f"Hello async, {name or 'world'}!"


def resolve_echo(_: Any, info: GraphQLResolveInfo, value: str | None = None) -> str | None:
    _record(info)
    return value


def resolve_number(_: Any, info: GraphQLResolveInfo, value: int) -> int:
    _record(info)
    return value


def resolve_boom(_: Any, info: GraphQLResolveInfo) -> str:
    _record(info)
    raise RuntimeError("secret detail")


async def resolve_async_boom(_: Any, info: GraphQLResolveInfo) -> str:
    _record(info)
    await asyncio.sleep(0)
    raise RuntimeError("secret detail")


def resolve_visible(_: Any, info: GraphQLResolveInfo) -> str:
    _record(info)
    raise GraphQLError("visible")


def resolve_forbidden(_: Any, info: GraphQLResolveInfo) -> str:
    _record(info)
    raise ForbiddenException("You may not read this.")


def resolve_unauthorized(_: Any, info: GraphQLResolveInfo) -> str:
    _record(info)
    raise UnauthorizedException()


def resolve_node(_: Any, info: GraphQLResolveInfo) -> dict[str, Any]:
    _record(info)
    return {"id": "0", "level": 0}


def resolve_child(parent: dict[str, Any], info: GraphQLResolveInfo) -> dict[str, Any]:
    level = parent["level"] + 1
    return {"id": str(level), "level": level}


def resolve_ctx(_: Any, info: GraphQLResolveInfo) -> dict[str, Any]:
    _record(info)
    return {}


async def resolve_async_ctx(_: Any, info: GraphQLResolveInfo) -> dict[str, Any]:
    _record(info)
    await asyncio.sleep(0)
    return {}


def resolve_keys(_: Any, info: GraphQLResolveInfo) -> list[str]:
    _record(info)
    return sorted(info.context) if isinstance(info.context, dict) else []


def resolve_anything(_: Any, info: GraphQLResolveInfo) -> Any:
    _record(info)
    # A custom scalar that passes through a value JSON cannot carry.
    return {1, 2, 3}


def resolve_bump(_: Any, info: GraphQLResolveInfo, by: int = 1) -> int:
    _record(info)
    COUNTER["value"] += by
    return COUNTER["value"]


def resolve_ticks(_: Any, info: GraphQLResolveInfo) -> int:  # pragma: no cover - never run
    _record(info)
    return 1


_anything = schema.type_map["Anything"]
assert isinstance(_anything, GraphQLScalarType)
_anything.serialize = lambda value: value  # type: ignore[method-assign]

_query = schema.query_type
assert _query is not None
for _name, _resolver in {
    "hello": resolve_hello,
    "asyncHello": resolve_async_hello,
    "echo": resolve_echo,
    "number": resolve_number,
    "boom": resolve_boom,
    "strictBoom": resolve_boom,
    "asyncBoom": resolve_async_boom,
    "visible": resolve_visible,
    "forbidden": resolve_forbidden,
    "unauthorized": resolve_unauthorized,
    "node": resolve_node,
    "ctx": resolve_ctx,
    "asyncCtx": resolve_async_ctx,
    "anything": resolve_anything,
}.items():
    _query.fields[_name].resolve = _resolver

_node = schema.type_map["Node"]
_node.fields["child"].resolve = resolve_child  # type: ignore[union-attr]

_ctx = schema.type_map["Ctx"]
_ctx.fields["keys"].resolve = resolve_keys  # type: ignore[union-attr]
_ctx.fields["child"].resolve = resolve_ctx  # type: ignore[union-attr]
_ctx.fields["asyncChild"].resolve = resolve_async_ctx  # type: ignore[union-attr]

assert schema.mutation_type is not None
schema.mutation_type.fields["bump"].resolve = resolve_bump
assert schema.subscription_type is not None
schema.subscription_type.fields["ticks"].resolve = resolve_ticks


# A second schema, for execute_graphql(schema=...).
other_schema = build_schema("type Query { whoami: String! }")
assert other_schema.query_type is not None
other_schema.query_type.fields["whoami"].resolve = lambda _, info: "other schema"
