"""One schema, four builds: graphql-core from SDL (ours and the floor), graphene, strawberry.

Every build uses the same pure-Python resolvers below on the same ``Item`` source objects,
and ``check_equivalent`` asserts that ``print_schema(lexicographic_sort_schema(...))`` of
each build equals the SDL's. graphene and strawberry are imported only when asked for, so
this module works in either benchmark venv.
"""

from __future__ import annotations

from typing import Any

SDL = """
type Query {
  hello(name: String): String!
  node: Node
}

type Node {
  id: ID!
  child: Node
}
"""

QUERY = "query Q($n: String) { hello(name: $n) node { id child { id child { id } } } }"
VARIABLES = {"n": "bench"}
EXPECTED = {
    "data": {
        "hello": "Hello, bench!",
        "node": {"id": "1", "child": {"id": "2", "child": {"id": "3"}}},
    }
}


# -- the shared resolvers -----------------------------------------------------------------
class Item:
    """The source object behind every ``Node``."""

    __slots__ = ("id",)

    def __init__(self, id: str) -> None:
        self.id = id


def hello(name: str | None) -> str:
    return f"Hello, {name or 'world'}!"


def root_node() -> Item:
    return Item("1")


def child_of(item: Item) -> Item:
    return Item(str(int(item.id) + 1))


# -- graphql-core (ours and the floor) ------------------------------------------------------
def build_core_schema() -> Any:
    from graphql import build_schema

    schema = build_schema(SDL)
    query = schema.query_type
    node = schema.type_map["Node"]
    query.fields["hello"].resolve = lambda _root, _info, name=None: hello(name)
    query.fields["node"].resolve = lambda _root, _info: root_node()
    node.fields["child"].resolve = lambda item, _info: child_of(item)
    # ``id`` uses graphql-core's default resolver (attribute lookup), as in graphene and
    # strawberry.
    return schema


CORE_SCHEMA = build_core_schema()


# -- graphene -------------------------------------------------------------------------------
def build_graphene_schema() -> Any:
    import graphene

    class Node(graphene.ObjectType):
        class Meta:
            name = "Node"

        id = graphene.ID(required=True)
        child = graphene.Field(lambda: Node)

        @staticmethod
        def resolve_child(item: Item, info: Any) -> Item:
            return child_of(item)

    class Query(graphene.ObjectType):
        class Meta:
            name = "Query"

        # ``name`` is Field's own keyword, hence ``args=``.
        hello = graphene.Field(graphene.NonNull(graphene.String), args={"name": graphene.String()})
        node = graphene.Field(Node)

        @staticmethod
        def resolve_hello(root: Any, info: Any, name: str | None = None) -> str:
            return hello(name)

        @staticmethod
        def resolve_node(root: Any, info: Any) -> Item:
            return root_node()

    return graphene.Schema(query=Query, auto_camelcase=False)


# -- strawberry -----------------------------------------------------------------------------
def build_strawberry_schema(extensions: list[Any] | None = None) -> Any:
    from strawberry_schema import build

    return build(extensions)


# -- equivalence ------------------------------------------------------------------------------
def sorted_sdl(schema: Any) -> str:
    from graphql import GraphQLSchema, lexicographic_sort_schema, print_schema

    if not isinstance(schema, GraphQLSchema):
        schema = getattr(schema, "graphql_schema", None) or schema._schema
    return print_schema(lexicographic_sort_schema(schema))


def check_equivalent(schemas: dict[str, Any]) -> str:
    """Assert every schema prints like the SDL; returns the sorted SDL."""
    from graphql import build_schema

    reference = sorted_sdl(build_schema(SDL))
    for name, schema in schemas.items():
        printed = sorted_sdl(schema)
        assert printed == reference, (
            f"{name} schema differs from the SDL:\n{printed}\n---\n{reference}"
        )
    return reference
