"""The provider's configuration: schema adapters and system checks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from graphql import build_schema

from appframework_graphql.checks import check_graphql_settings
from appframework_graphql.schema import coerce_schema, get_schema

VALID = build_schema("type Query { hello: String }")


def _ids(settings: Any, **graphql: Any) -> set[str]:
    settings.APPFRAMEWORK = {
        "GRAPHQL": {"SCHEMA": "tests.graphql.test_configuration.VALID", **graphql}
    }
    return {message.id for message in check_graphql_settings()}


def test_graphene_style_schema_object_is_unwrapped_through_graphql_schema() -> None:
    assert coerce_schema(SimpleNamespace(graphql_schema=VALID)) is VALID


def test_strawberry_style_schema_object_is_unwrapped_through_private_schema() -> None:
    assert coerce_schema(SimpleNamespace(_schema=VALID)) is VALID


def test_object_that_is_no_schema_is_refused_with_improperly_configured() -> None:
    with pytest.raises(ImproperlyConfigured, match="not a graphql-core GraphQLSchema"):
        coerce_schema(object())


def test_configured_import_string_resolves_to_the_schema(settings: Any) -> None:
    settings.APPFRAMEWORK = {"GRAPHQL": {"SCHEMA": "tests.graphql.test_configuration.VALID"}}
    assert get_schema() is VALID


def test_valid_configuration_has_no_check_errors(settings: Any) -> None:
    assert _ids(settings) == set()


def test_missing_schema_is_check_error_e001(settings: Any) -> None:
    settings.APPFRAMEWORK = {"GRAPHQL": {}}
    assert {m.id for m in check_graphql_settings()} == {"appframework_graphql.E001"}


def test_unimportable_schema_is_check_error_e001(settings: Any) -> None:
    settings.APPFRAMEWORK = {"GRAPHQL": {"SCHEMA": "tests.graphql.nowhere.schema"}}
    assert {m.id for m in check_graphql_settings()} == {"appframework_graphql.E001"}


INVALID = build_schema("type Query { hello: String }")
INVALID.query_type.fields.clear()  # type: ignore[union-attr]  # an object type with no fields


def test_invalid_schema_is_check_error_e002(settings: Any) -> None:
    settings.APPFRAMEWORK = {"GRAPHQL": {"SCHEMA": "tests.graphql.test_configuration.INVALID"}}
    assert "appframework_graphql.E002" in {m.id for m in check_graphql_settings()}


@pytest.mark.parametrize("key", ["MAX_DEPTH", "MAX_TOKENS"])
@pytest.mark.parametrize("value", [0, -1, "15", True, 1.5])
def test_bad_limit_is_check_error_e003(settings: Any, key: str, value: Any) -> None:
    assert "appframework_graphql.E003" in _ids(settings, **{key: value})


@pytest.mark.parametrize("key", ["MAX_DEPTH", "MAX_TOKENS"])
def test_none_limit_is_accepted(settings: Any, key: str) -> None:
    assert _ids(settings, **{key: None}) == set()


@pytest.mark.parametrize("path", ["graphql", "", 5])
def test_path_without_leading_slash_is_check_error_e004(settings: Any, path: Any) -> None:
    assert "appframework_graphql.E004" in _ids(settings, PATH=path)


@pytest.mark.parametrize("size", [-1, "256", True])
def test_bad_cache_size_is_check_error_e005(settings: Any, size: Any) -> None:
    assert "appframework_graphql.E005" in _ids(settings, DOCUMENT_CACHE_SIZE=size)


def test_graphiql_must_be_a_boolean_or_none_e006(settings: Any) -> None:
    assert "appframework_graphql.E006" in _ids(settings, GRAPHIQL="yes")


def test_unknown_graphiql_asset_key_is_check_error_e007(settings: Any) -> None:
    assert "appframework_graphql.E007" in _ids(settings, GRAPHIQL_ASSETS={"vue": "x"})


def test_every_check_message_has_a_hint_pointing_at_the_docs(settings: Any) -> None:
    settings.APPFRAMEWORK = {
        "GRAPHQL": {"SCHEMA": "tests.graphql.test_configuration.VALID", "PATH": "x", "MAX_DEPTH": 0}
    }
    messages = check_graphql_settings()
    assert messages
    assert all(m.hint and "docs/checks.md" in m.hint for m in messages)
