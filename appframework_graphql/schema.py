"""Finding the configured schema: a graphql-core ``GraphQLSchema``, or the one inside a
graphene or strawberry schema object."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from graphql import GraphQLSchema

from appframework.conf import app_settings, derived_setting

__all__ = ["coerce_schema", "get_schema"]


def coerce_schema(value: Any) -> GraphQLSchema:
    """``value`` itself, or the graphql-core schema a graphene (``graphql_schema``) or
    strawberry (``_schema``) schema wraps."""
    if isinstance(value, GraphQLSchema):
        return value
    for attribute in ("graphql_schema", "_schema"):
        inner = getattr(value, attribute, None)
        if isinstance(inner, GraphQLSchema):
            return inner
    raise ImproperlyConfigured(
        f"APPFRAMEWORK['GRAPHQL']['SCHEMA'] is {type(value).__name__}, not a graphql-core "
        "GraphQLSchema (or a graphene/strawberry schema wrapping one)."
    )


@derived_setting
def get_schema() -> GraphQLSchema:
    value = app_settings.GRAPHQL.SCHEMA
    if value is None:
        raise ImproperlyConfigured("APPFRAMEWORK['GRAPHQL']['SCHEMA'] is not set.")
    return coerce_schema(value)
