from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class GraphQLServiceProvider(AppConfig):
    """Opt-in GraphQL endpoint. Parameters in ``APPFRAMEWORK["GRAPHQL"]``: ``SCHEMA``
    (import string), ``PATH`` (``/graphql``), ``GRAPHIQL`` (None = follow DEBUG),
    ``GRAPHIQL_ASSETS``, ``MAX_DEPTH`` (15), ``MAX_TOKENS`` (10000), ``MAX_ALIASES``,
    ``MAX_ROOT_FIELDS``, ``MAX_FIELDS`` (None = off), ``INTROSPECTION`` (True),
    ``DOCUMENT_CACHE_SIZE`` (256), ``ASYNC``. Nothing is served until
    ``appframework_graphql.urls`` is included."""

    name = "appframework_graphql"
    label = "appframework_graphql"
    verbose_name = "appframework: GraphQL"

    def ready(self) -> None:
        from appframework import checks as core_checks  # noqa: F401 - core checks

        from .checks import check_graphql_settings

        checks.register(check_graphql_settings)
