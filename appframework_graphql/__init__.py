"""GraphQL transport: the endpoint, limits, GraphiQL and a document cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from appframework.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .apps import GraphQLServiceProvider
    from .execution import aexecute_graphql, execute_graphql
    from .views import async_graphql_view, graphql_view

_EXPORTS = {
    "GraphQLServiceProvider": ".apps",
    "execute_graphql": ".execution",
    "aexecute_graphql": ".execution",
    "graphql_view": ".views",
    "async_graphql_view": ".views",
}

__all__ = [
    "GraphQLServiceProvider",
    "aexecute_graphql",
    "async_graphql_view",
    "execute_graphql",
    "graphql_view",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
