"""schemathesis, a property-based API tester, generates queries and mutations from the
demo's schema (its arguments included: odd ids, nulls, large and negative numbers) and
sends them, anonymously and with a bearer token, with DEBUG on. No answer may be a 5xx,
and every error raised while resolving must be one the schema means to give (it carries
``extensions.code``: not found, not authenticated, invalid input...), never an unexpected
exception. Plus the three arguments that once were: an Arabic-Indic one as the id found
post 1, a superscript two answered Python's error text, ``posts(limit: null)`` raised
TypeError."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from appframework.auth import TokenManager
from testproject.blog.models import Post
from tests.conftest import demo_tenant

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("debug_on", "keep_the_test_connection"),
]

schema = schemathesis.graphql.from_wsgi("/graphql", WSGIHandler())


@pytest.fixture
def debug_on(settings: Any) -> None:
    settings.DEBUG = True


@pytest.fixture
def keep_the_test_connection() -> Iterator[None]:
    """schemathesis calls the WSGI handler itself, whose request signals would close the
    test's own database connection mid-transaction (on PostgreSQL the next query then
    meets "the connection is closed"); Django's test Client unhooks them the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def only_expected_errors(ctx: Any, response: Any, case: Any) -> None:
    """No 5xx; an error with a ``path`` (raised while resolving) carries a code."""
    assert response.status_code < 500, response.text[:300]
    for error in response.json().get("errors") or ():
        if "path" in error:
            code = (error.get("extensions") or {}).get("code")
            assert code, f"unexpected error at {error['path']}: {error['message']}"


@pytest.fixture
def bearer(user: Any) -> dict[str, str]:
    user.tenants.add(demo_tenant())
    Post.objects.create(title="first", author=user)
    return {"Authorization": f"Bearer {TokenManager().issue(user)}"}


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "bearer"])
def test_no_generated_request_meets_an_unexpected_error(
    case: Any, signed_in: bool, bearer: dict[str, str]
) -> None:
    case.call_and_validate(
        headers=bearer if signed_in else None,
        excluded_checks=[not_a_server_error],
        additional_checks=[only_expected_errors],
    )


@pytest.mark.parametrize("post_id", ["\u0661", "\u00b2", "1 ", "+1", "1e3", "9" * 40])
def test_a_post_id_is_ascii_digits_only(post_id: str, bearer: dict[str, str]) -> None:
    response = Client().post(
        "/graphql",
        {"query": "query($id: ID!) { post(id: $id) { id } }", "variables": {"id": post_id}},
        content_type="application/json",
        headers=bearer,
    )
    assert response.status_code == 200
    assert response.json() == {"data": {"post": None}}


def test_posts_with_a_null_limit_takes_the_default() -> None:
    response = Client().post(
        "/graphql", {"query": "{ posts(limit: null) { id } }"}, content_type="application/json"
    )
    assert response.status_code == 200
    assert "errors" not in response.json()
