"""Deeply nested JSON is a 400 ``json_too_deep``, never a 500, wherever the suite reads
JSON: the passkey answers, the demo's JSON views, DRF (the suite's parser and DRF's
stock one), django-ninja, GraphQL bodies and variables. Each test sends what once
produced a 500 (a RecursionError), with DEBUG on, where Django's debug page would have
shown the settings."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings
from django.urls import path
from rest_framework.parsers import JSONParser as StockJSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from appframework import bounded_json
from appframework.auth import TokenManager
from testproject.urls import urlpatterns as demo_urlpatterns
from tests.conftest import csrf_cookie, demo_tenant, login_client

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

JSON = {"HTTP_ACCEPT": "application/json"}
DEEP = "[" * 3000 + "]" * 3000
JUST_TOO_DEEP = "[" * (bounded_json.MAX_DEPTH + 1) + "]" * (bounded_json.MAX_DEPTH + 1)


class StockParserView(APIView):
    """A project that kept DRF's own JSONParser: the suite's exception handler answers."""

    parser_classes = [StockJSONParser]
    abilities = {"POST": None}

    def post(self, request: Any) -> Response:
        return Response({"got": type(request.data).__name__})


urlpatterns = [path("t/stock-parser", StockParserView.as_view()), *demo_urlpatterns]


def _too_deep(response: Any) -> None:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "json_too_deep"
    assert b"DATABASES" not in response.content


@pytest.fixture(autouse=True)
def _debug_on(settings: Any) -> None:
    settings.DEBUG = True


@pytest.mark.parametrize("body", [DEEP, JUST_TOO_DEEP], ids=["3000-deep", "33-deep"])
def test_bounded_loads_refuses_more_than_the_limit_and_reads_the_limit(body: str) -> None:
    with pytest.raises(bounded_json.JsonNestingError):
        bounded_json.loads(body)
    at_limit = "[" * bounded_json.MAX_DEPTH + "]" * bounded_json.MAX_DEPTH
    assert bounded_json.loads(at_limit) is not None


def test_a_deep_passwordless_passkey_answer_is_400_not_500(db: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    token = csrf_cookie(client)
    response = client.post("/login/passkey", {"credential": DEEP, "_token": token}, **JSON)
    _too_deep(response)


def test_a_deep_passkey_to_add_is_400_not_500(user: Any) -> None:
    client = login_client(Client(), user)
    response = client.post("/account/passkeys/add", {"credential": DEEP}, **JSON)
    _too_deep(response)


def test_a_deep_field_in_a_drf_body_is_400_with_the_suites_parser(user: Any) -> None:
    user.tenants.add(demo_tenant())
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}
    body = '{"title": ' + DEEP + "}"
    response = Client().post("/api/drf/posts/", body, content_type="application/json", **headers)
    _too_deep(response)


def test_a_deep_drf_body_is_400_with_drfs_stock_parser_too(user: Any) -> None:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}
    response = Client().post("/t/stock-parser", DEEP, content_type="application/json", **headers)
    _too_deep(response)
    shallow = Client().post("/t/stock-parser", "[[1]]", content_type="application/json", **headers)
    assert shallow.status_code == 200 and shallow.json() == {"got": "list"}


def test_a_deep_ninja_body_is_400(user: Any) -> None:
    user.tenants.add(demo_tenant())
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}
    body = '{"title": "x", "body": ' + JUST_TOO_DEEP + "}"
    response = Client().post("/api/ninja/posts", body, content_type="application/json", **headers)
    _too_deep(response)


@pytest.mark.parametrize(
    "body",
    [
        '{"query": "{ posts { id } }", "variables": {"a": ' + DEEP + "}}",
        '{"query": "{ posts { id } }", "variables": {"a": ' + JUST_TOO_DEEP + "}}",
    ],
    ids=["3000-deep", "33-deep"],
)
def test_deep_graphql_variables_are_a_400_in_the_graphql_format(body: str) -> None:
    response = Client().post("/graphql", body, content_type="application/json", **JSON)
    assert response.status_code == 400
    assert "nests deeper" in json.dumps(response.json()["errors"])


def test_a_deep_body_to_a_demo_json_view_is_400(user: Any) -> None:
    user.tenants.add(demo_tenant())
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}
    with override_settings(DEBUG=True):
        response = Client().post("/posts", DEEP, content_type="application/json", **headers)
    _too_deep(response)


def test_the_suites_drf_parser_refuses_a_decompressing_charset(user: Any) -> None:
    """A bytes-to-bytes codec named as the charset would inflate a small body past the
    upload limit it was checked against: refused as DRF refuses it."""
    import bz2

    user.tenants.add(demo_tenant())
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}
    body = bz2.compress(b'{"title": "' + b"x" * 100_000 + b'"}')
    response = Client().generic(
        "POST", "/api/drf/posts/", body, "application/json; charset=bz2_codec", **headers
    )
    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"
