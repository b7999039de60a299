"""System checks of the GraphQLServiceProvider (ids ``appframework_graphql.E0xx``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from appframework.checks import check_error
from appframework.conf import app_settings


def _limit_ok(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


def check_graphql_settings(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    from graphql import validate_schema

    from .schema import get_schema

    errors: list[checks.CheckMessage] = []
    try:
        conf = app_settings.GRAPHQL
        schema = get_schema()
    except ImproperlyConfigured as exc:
        return [
            check_error(
                "appframework_graphql.E001",
                str(exc),
                "Set APPFRAMEWORK['GRAPHQL']['SCHEMA'] to the dotted path of your schema.",
            )
        ]
    problems = validate_schema(schema)
    if problems:
        errors.append(
            check_error(
                "appframework_graphql.E002",
                "The GraphQL schema is invalid: " + "; ".join(p.message for p in problems[:5]),
                "Fix the schema definition.",
            )
        )
    for key in ("MAX_DEPTH", "MAX_TOKENS", "MAX_ALIASES", "MAX_ROOT_FIELDS", "MAX_FIELDS"):
        if not _limit_ok(getattr(conf, key)):
            errors.append(
                check_error(
                    "appframework_graphql.E003",
                    f"APPFRAMEWORK['GRAPHQL'][{key!r}] must be a positive int or None, got {getattr(conf, key)!r}.",
                    "None disables the limit.",
                )
            )
    path = conf.PATH
    if not isinstance(path, str) or not path.startswith("/"):
        errors.append(
            check_error(
                "appframework_graphql.E004",
                f"APPFRAMEWORK['GRAPHQL']['PATH'] must be a string starting with '/', got {path!r}.",
                "Use e.g. '/graphql'.",
            )
        )
    size = conf.DOCUMENT_CACHE_SIZE
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        errors.append(
            check_error(
                "appframework_graphql.E005",
                f"APPFRAMEWORK['GRAPHQL']['DOCUMENT_CACHE_SIZE'] must be an int >= 0, got {size!r}.",
                "0 turns the cache off.",
            )
        )
    if conf.GRAPHIQL not in (None, True, False):
        errors.append(
            check_error(
                "appframework_graphql.E006",
                f"APPFRAMEWORK['GRAPHQL']['GRAPHIQL'] must be True, False or None, got {conf.GRAPHIQL!r}.",
                "None follows DEBUG.",
            )
        )
    if not isinstance(conf.INTROSPECTION, bool):
        errors.append(
            check_error(
                "appframework_graphql.E008",
                f"APPFRAMEWORK['GRAPHQL']['INTROSPECTION'] must be True or False, got {conf.INTROSPECTION!r}.",
                "False rejects __schema and __type queries.",
            )
        )
    assets = conf.GRAPHIQL_ASSETS
    if assets is not None:
        from .graphiql import CDN_ASSETS

        known = set(CDN_ASSETS) | {f"{k}_integrity" for k in CDN_ASSETS}
        if not isinstance(assets, dict) or set(assets) - known:
            errors.append(
                check_error(
                    "appframework_graphql.E007",
                    f"APPFRAMEWORK['GRAPHQL']['GRAPHIQL_ASSETS'] must be a dict with keys among {sorted(known)}.",
                    "See docs/graphql.md#self-hosting-graphiql.",
                )
            )
    return errors
