"""A personal access token limited to scopes does only what they allow, on every API the
suite serves: a ``read`` token reads and writes nothing on DRF, ninja, GraphQL and the
demo's ``/posts``; the webhook endpoint API (signing secrets) needs ``webhooks``.

The attack: a token made with ``scopes: ["read"]`` wrote posts everywhere and created,
read the secret of, rotated and deleted webhook endpoints."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, RequestFactory

from appframework.auth.access_tokens import create_access_token
from appframework.authorization import Gate, authorize_sync
from appframework.authorization.models import Role
from appframework.container import container
from appframework.exceptions import ForbiddenException
from appframework_tenancy import all_tenants
from appframework_webhooks import WebhookEndpoint
from testproject.blog.models import Post, User
from tests.conftest import demo_tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_stack")]

ENDPOINTS = "/api/drf/webhook-endpoints/"
CHALLENGE = 'Bearer error="insufficient_scope", scope="{}"'


@pytest.fixture
def admin() -> Any:
    """A member of the demo's first tenant with the admin role: the Gate allows it
    every post and webhook ability, so only the token's scopes can refuse."""
    user = User.objects.create_user("admin@acme.example", "pw")
    user.tenants.add(demo_tenant())
    user.roles.add(Role.objects.get_or_create(name="admin")[0])
    return user


def client_for(user: Any, *scopes: str) -> Client:
    _token, secret = create_access_token(user, "script", scopes=list(scopes))
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_ACCEPT="application/json")


def assert_insufficient(response: Any, scope: str) -> None:
    assert response.status_code == 403, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "insufficient_scope"
    assert response["WWW-Authenticate"] == CHALLENGE.format(scope)


def titles() -> set[str]:
    with all_tenants():
        return set(Post.objects.values_list("title", flat=True))


def post_json(client: Client, path: str, data: dict[str, Any]) -> Any:
    return client.post(path, json.dumps(data), content_type="application/json")


def graphql(client: Client, query: str) -> dict[str, Any]:
    response = post_json(client, "/graphql", {"query": query})
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize(
    ("path", "read_path"),
    [("/api/drf/posts/", "/api/drf/posts/"), ("/api/ninja/posts", "/api/ninja/posts")],
)
def test_a_read_token_reads_and_cannot_write_through_drf_or_ninja(
    admin: Any, path: str, read_path: str
) -> None:
    client = client_for(admin, "read")
    assert client.get(read_path).status_code == 200
    assert_insufficient(post_json(client, path, {"title": "By a read token"}), "write")
    assert "By a read token" not in titles()


def test_a_read_token_cannot_write_through_the_demo_posts_view(admin: Any) -> None:
    client = client_for(admin, "read")
    assert client.get("/posts").status_code == 200
    assert_insufficient(post_json(client, "/posts", {"title": "By a read token"}), "write")
    assert "By a read token" not in titles()


def test_a_write_token_writes_where_a_read_token_may_not(admin: Any) -> None:
    client = client_for(admin, "write")
    made = post_json(client, "/api/drf/posts/", {"title": "By a write token"})
    assert made.status_code == 201, made.content
    # ... and reads nothing: reading is its own scope.
    assert_insufficient(client.get("/api/drf/posts/"), "read")


def test_a_read_token_runs_queries_and_no_mutation_through_graphql(admin: Any) -> None:
    client = client_for(admin, "read")
    assert graphql(client, "{ me { id } }") == {"data": {"me": {"id": str(admin.pk)}}}
    refused = graphql(client, 'mutation { createPost(title: "By a read token") { id } }')
    assert refused["data"] is None
    [error] = refused["errors"]
    assert error["extensions"] == {"status": 403, "code": "insufficient_scope"}
    assert "By a read token" not in titles()
    writer = client_for(admin, "write")
    made = graphql(writer, 'mutation { createPost(title: "By a write token") { title } }')
    assert made == {"data": {"createPost": {"title": "By a write token"}}}


@pytest.mark.parametrize("scopes", [("read",), ("read", "write")])
def test_the_webhook_endpoint_api_needs_the_webhooks_scope_on_every_route(
    admin: Any, scopes: tuple[str, ...]
) -> None:
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example/x", event="*", secret="s" * 32, tenant_id=demo_tenant().pk
    )
    client = client_for(admin, *scopes)
    detail = f"{ENDPOINTS}{endpoint.pk}/"
    for response in (
        client.get(ENDPOINTS),
        post_json(client, ENDPOINTS, {"url": "https://hooks.example/new", "event": "*"}),
        client.get(f"{detail}secret/"),
        post_json(client, f"{detail}rotate-secret/", {}),
        client.delete(detail),
    ):
        assert_insufficient(response, "webhooks")
    endpoint.refresh_from_db()
    assert endpoint.secret == "s" * 32
    assert list(WebhookEndpoint.objects.values_list("pk", flat=True)) == [endpoint.pk]


def test_a_webhooks_token_manages_the_endpoints(admin: Any) -> None:
    endpoint = WebhookEndpoint.objects.create(
        url="https://hooks.example/x", event="*", secret="s" * 32, tenant_id=demo_tenant().pk
    )
    client = client_for(admin, "webhooks")
    detail = f"{ENDPOINTS}{endpoint.pk}/"
    assert client.get(ENDPOINTS).status_code == 200
    assert client.get(f"{detail}secret/").status_code == 200
    assert client.delete(detail).status_code == 204
    assert not WebhookEndpoint.objects.exists()


def test_a_token_made_without_scopes_and_a_session_are_not_limited(admin: Any) -> None:
    client = client_for(admin)
    assert post_json(client, "/api/drf/posts/", {"title": "Unlimited"}).status_code == 201
    assert client.get(ENDPOINTS).status_code == 200


def test_an_ability_defined_with_a_scope_asks_the_token_for_it(admin: Any) -> None:
    gate: Gate = container.resolve(Gate)
    gate.define("export-billing", lambda user: True, scope="billing")
    try:
        _token, secret = create_access_token(admin, "ro", scopes=["read"])
        request = RequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {secret}")
        with pytest.raises(ForbiddenException) as refused:
            authorize_sync(request, "export-billing")
        assert refused.value.code == "insufficient_scope"
        assert refused.value.response_headers() == {"WWW-Authenticate": CHALLENGE.format("billing")}
        # Without a scope of its own an ability asks for the method's: GET reads.
        gate.define("export-billing", lambda user: True)
        assert authorize_sync(request, "export-billing") == admin
    finally:
        gate._abilities.pop("export-billing", None)
