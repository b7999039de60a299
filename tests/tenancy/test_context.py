"""The current tenant: how reads and new rows follow it, its three states (a tenant, no
tenant, every tenant), strict mode, and how a request selects it (the resolver's
membership check, sequential requests on one thread, async views, streaming bodies)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.test import AsyncClient, Client, override_settings

from appframework.auth import TokenManager
from appframework.container import container
from appframework_tenancy import (
    TenantRequired,
    all_tenants,
    as_tenant,
    current_tenant_id,
)
from tests.conftest import login_client
from tests.tenancy.conftest import A, B
from tests.tenancy.lab.models import Comment, Post

pytestmark = pytest.mark.django_db

LAB_URLS = "tests.tenancy.stream_urls"
LAB_RESOLVER = "tests.tenancy.stream_urls.resolve_lab_tenant"


def tenancy_settings(**changes: Any) -> dict[str, Any]:
    """APPFRAMEWORK with its TENANCY section changed, every other section kept."""
    return {
        **settings.APPFRAMEWORK,
        "TENANCY": {**settings.APPFRAMEWORK["TENANCY"], **changes},
    }


@pytest.fixture
def strict() -> Iterator[None]:
    with override_settings(APPFRAMEWORK=tenancy_settings(STRICT=True)):
        yield


@pytest.fixture
def lab_stack(demo_stack: None) -> Iterator[None]:
    """The demo's middleware, the lab views, and the X-Lab-Tenant resolver."""
    with override_settings(
        ROOT_URLCONF=LAB_URLS, APPFRAMEWORK=tenancy_settings(RESOLVER=LAB_RESOLVER)
    ):
        yield


@pytest.fixture
async def async_db() -> AsyncIterator[None]:
    """Async tests reach the database from asgiref's worker thread: close what it opened,
    so the test database can be dropped at the end of the run."""
    yield
    await sync_to_async(connections.close_all)()


def titles(queryset: Any) -> list[str]:
    return sorted(row.title for row in queryset)


# -- reads and new rows follow the current tenant ----------------------------------------------
def test_reads_of_a_tenant_model_are_scoped_to_the_current_tenant(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert titles(Post.objects.all()) == ["A-post"]
        assert [c.body for c in Comment.objects.all()] == ["a-comment"]
        assert Post.objects.filter(pk=two_tenants["b_post"].pk).exists() is False
    with as_tenant(B):
        assert titles(Post.objects.all()) == ["B-post"]
        assert Post.objects.count() == 1
        with pytest.raises(Post.DoesNotExist):
            Post.objects.get(pk=two_tenants["a_post"].pk)


def test_a_new_row_without_tenant_id_gets_the_current_tenant_on_save(db: Any) -> None:
    with as_tenant(B):
        post = Post(title="fresh")
        post.save()
        created = Post.objects.create(title="created")
    assert post.tenant_id == B
    assert created.tenant_id == B
    assert sorted(Post.unscoped.values_list("tenant_id", flat=True)) == [B, B]


def test_outside_a_request_no_tenant_is_selected_and_reads_are_not_filtered(
    two_tenants: dict[str, Any],
) -> None:
    assert current_tenant_id() is None
    assert titles(Post.objects.all()) == ["A-post", "B-post"]
    assert Comment.objects.count() == 2


def test_a_resolver_returning_none_selects_no_tenant_and_reads_are_not_filtered(
    two_tenants: dict[str, Any], lab_stack: None, client: Client
) -> None:
    response = client.get("/lab/titles")
    assert response.status_code == 200
    assert response.json() == {"tenant": None, "titles": ["A-post", "B-post"]}
    assert response.wsgi_request.tenant_id is None  # type: ignore[attr-defined]


def test_a_resolver_returning_a_tenant_scopes_the_request_to_it(
    two_tenants: dict[str, Any], lab_stack: None, client: Client
) -> None:
    response = client.get("/lab/titles", headers={"X-Lab-Tenant": str(B)})
    assert response.json() == {"tenant": B, "titles": ["B-post"]}
    assert response.wsgi_request.tenant_id == B  # type: ignore[attr-defined]


def test_as_tenant_scopes_a_block_without_a_request(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        assert current_tenant_id() == A
        assert titles(Post.objects.all()) == ["A-post"]
    assert current_tenant_id() is None
    assert Post.objects.count() == 2


# -- the three states ----------------------------------------------------------------------------
def test_nested_as_tenant_restores_the_outer_tenant(two_tenants: dict[str, Any]) -> None:
    with as_tenant(A):
        with as_tenant(B):
            assert current_tenant_id() == B
            assert titles(Post.objects.all()) == ["B-post"]
        assert current_tenant_id() == A
        assert titles(Post.objects.all()) == ["A-post"]
    assert current_tenant_id() is None


def test_nested_as_tenant_restores_the_outer_tenant_when_the_block_raises() -> None:
    with as_tenant(A):
        with pytest.raises(ZeroDivisionError), as_tenant(B):
            assert current_tenant_id() == B
            1 / 0  # noqa: B018
        assert current_tenant_id() == A
    assert current_tenant_id() is None


def test_current_tenant_id_is_none_under_all_tenants_and_comes_back_after_it(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        with all_tenants():
            assert current_tenant_id() is None
            assert titles(Post.objects.all()) == ["A-post", "B-post"]
        assert current_tenant_id() == A
        assert titles(Post.objects.all()) == ["A-post"]


def test_as_tenant_none_inside_a_tenant_selects_no_tenant_for_the_block(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        with as_tenant(None):
            assert current_tenant_id() is None
            assert Post.objects.count() == 2
        assert current_tenant_id() == A


# -- strict mode ---------------------------------------------------------------------------------
def test_strict_mode_raises_tenant_required_on_a_read_with_no_tenant(
    two_tenants: dict[str, Any], strict: None
) -> None:
    with pytest.raises(TenantRequired):
        list(Post.objects.all())
    with pytest.raises(TenantRequired):
        Post.objects.count()
    with pytest.raises(TenantRequired):
        Comment.objects.filter(body="a-comment").exists()


def test_strict_mode_still_scopes_reads_under_a_tenant(
    two_tenants: dict[str, Any], strict: None
) -> None:
    with as_tenant(B):
        assert titles(Post.objects.all()) == ["B-post"]


def test_strict_mode_all_tenants_reads_every_tenant(
    two_tenants: dict[str, Any], strict: None
) -> None:
    with all_tenants():
        assert titles(Post.objects.all()) == ["A-post", "B-post"]
        assert Comment.objects.count() == 2


def test_strict_mode_as_tenant_none_raises_on_read_unlike_all_tenants(
    two_tenants: dict[str, Any], strict: None
) -> None:
    with as_tenant(A):
        with as_tenant(None), pytest.raises(TenantRequired):
            Post.objects.count()
        with all_tenants():
            assert Post.objects.count() == 2


def test_strict_mode_a_request_whose_resolver_returns_none_gets_404_and_no_rows(
    two_tenants: dict[str, Any], lab_stack: None
) -> None:
    strict_lab = tenancy_settings(RESOLVER=LAB_RESOLVER, STRICT=True)
    with override_settings(APPFRAMEWORK=strict_lab):
        response = Client().get("/lab/titles")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "tenant_required"
    assert b"A-post" not in response.content
    assert b"B-post" not in response.content
    lenient_lab = tenancy_settings(RESOLVER=LAB_RESOLVER, STRICT=False)
    with override_settings(APPFRAMEWORK=lenient_lab):
        control = Client().get("/lab/titles")
    assert control.status_code == 200
    assert control.json() == {"tenant": None, "titles": ["A-post", "B-post"]}


# -- the resolver checks membership (demo /posts) ------------------------------------------------
# A bearer token's X-Tenant of a tenant the user is not a member of, or that is not an id:
# test_reach.py's test_bearer_x_tenant_the_user_is_not_a_member_of_is_403.
@pytest.fixture
def demo_posts(user: Any, other_user: Any) -> dict[str, Any]:
    """Acme (1) has one post, Globex (2) one; ``user`` is a member of Acme only,
    ``other_user`` of Globex only."""
    from testproject.blog.models import Post as DemoPost
    from testproject.blog.models import Tenant

    for tenant_id, name in ((A, "Acme"), (B, "Globex")):
        Tenant.objects.get_or_create(id=tenant_id, defaults={"name": name, "slug": name.lower()})
    user.tenants.set([A])
    other_user.tenants.set([B])
    with as_tenant(A):
        acme = DemoPost.objects.create(title="Acme news", body="acme body", author=user)
    with as_tenant(B):
        globex = DemoPost.objects.create(
            title="Globex secret", body="globex body", author=other_user
        )
    return {"acme": acme, "globex": globex}


def bearer(user: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {container.resolve(TokenManager).issue(user)}"}


def listed(response: Any) -> list[tuple[str, int]]:
    return sorted((p["title"], p["tenant_id"]) for p in response.json()["posts"])


def assert_nothing_of_globex(response: Any) -> None:
    body = response.content.decode()
    assert "Globex" not in body
    assert "globex" not in body


def test_resolver_refuses_a_session_users_header_for_a_tenant_they_are_not_a_member_of(
    demo_posts: dict[str, Any], demo_stack: None, user: Any, client: Client
) -> None:
    login_client(client, user)
    response = client.get("/posts", headers={"X-Tenant": str(B)})
    assert response.status_code == 403
    assert_nothing_of_globex(response)
    detail = client.get(f"/posts/{demo_posts['globex'].pk}", headers={"X-Tenant": str(B)})
    assert detail.status_code == 403
    assert_nothing_of_globex(detail)


def test_a_session_tenant_the_user_is_no_longer_a_member_of_falls_back_to_their_first(
    demo_posts: dict[str, Any], demo_stack: None, user: Any, client: Client
) -> None:
    user.tenants.add(B)
    login_client(client, user)
    switched = client.post("/tenant", {"tenant": str(B)})
    assert switched.status_code == 302
    assert listed(client.get("/posts")) == [("Globex secret", B)]
    user.tenants.remove(B)
    for _ in range(2):
        response = client.get("/posts")
        assert response.status_code == 200
        assert listed(response) == [("Acme news", A)]
        assert_nothing_of_globex(response)


def test_resolver_grants_a_members_header_and_returns_only_that_tenants_rows(
    demo_posts: dict[str, Any], demo_stack: None, user: Any, other_user: Any, client: Client
) -> None:
    response = client.get("/posts", headers={**bearer(other_user), "X-Tenant": str(B)})
    assert response.status_code == 200
    assert listed(response) == [("Globex secret", B)]
    user.tenants.add(B)
    for tenant, expected in ((A, [("Acme news", A)]), (B, [("Globex secret", B)])):
        response = client.get("/posts", headers={**bearer(user), "X-Tenant": str(tenant)})
        assert listed(response) == expected


def test_anonymous_visitors_and_users_without_header_see_only_their_default_tenant(
    demo_posts: dict[str, Any], demo_stack: None, other_user: Any, client: Client
) -> None:
    anonymous = client.get("/posts")
    assert listed(anonymous) == [("Acme news", A)]
    assert_nothing_of_globex(anonymous)
    member = client.get("/posts", headers=bearer(other_user))
    assert listed(member) == [("Globex secret", B)]


# -- one thread, one request after another ---------------------------------------------------
def test_sequential_requests_on_one_thread_never_see_each_others_tenant(
    demo_posts: dict[str, Any], demo_stack: None, user: Any, other_user: Any
) -> None:
    acme_client = login_client(Client(), user)
    globex_client = login_client(Client(), other_user)
    for _ in range(2):
        first = acme_client.get("/posts")
        assert listed(first) == [("Acme news", A)]
        assert first.wsgi_request.tenant_id == A
        assert current_tenant_id() is None
        second = globex_client.get("/posts")
        assert listed(second) == [("Globex secret", B)]
        assert second.wsgi_request.tenant_id == B
        assert current_tenant_id() is None
    anonymous = Client().get("/posts")
    assert listed(anonymous) == [("Acme news", A)]
    assert current_tenant_id() is None


def test_a_refused_request_leaves_no_tenant_on_the_thread(
    demo_posts: dict[str, Any], demo_stack: None, user: Any, other_user: Any
) -> None:
    assert login_client(Client(), other_user).get("/posts").status_code == 200
    refused = login_client(Client(), user).get("/posts", headers={"X-Tenant": str(B)})
    assert refused.status_code == 403
    assert current_tenant_id() is None


def test_a_view_that_raises_leaves_no_tenant_on_the_thread(
    two_tenants: dict[str, Any], lab_stack: None
) -> None:
    client = Client(raise_request_exception=False)
    response = client.get("/lab/boom", headers={"X-Lab-Tenant": str(A)})
    assert response.status_code == 500
    assert current_tenant_id() is None
    assert Client().get("/lab/titles").json()["tenant"] is None


# -- async views -------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_async_view_under_async_client_is_scoped_to_the_resolved_tenant(
    async_db: None, demo_posts: dict[str, Any], demo_stack: None, other_user: Any
) -> None:
    client = AsyncClient()
    headers = await sync_to_async(bearer)(other_user)
    own = await client.get(f"/posts/{demo_posts['globex'].pk}", headers=headers)
    assert own.status_code == 200
    assert own.json()["title"] == "Globex secret"
    foreign = await client.get(f"/posts/{demo_posts['acme'].pk}", headers=headers)
    assert foreign.status_code == 404
    assert b"Acme" not in foreign.content
    anonymous = await client.get(f"/posts/{demo_posts['globex'].pk}")
    assert anonymous.status_code == 404
    assert_nothing_of_globex(anonymous)
    assert current_tenant_id() is None


@pytest.mark.django_db(transaction=True)
async def test_sync_view_under_async_client_is_scoped_to_the_resolved_tenant(
    async_db: None, demo_posts: dict[str, Any], demo_stack: None, other_user: Any
) -> None:
    client = AsyncClient()
    headers = await sync_to_async(bearer)(other_user)
    member = await client.get("/posts", headers=headers)
    assert listed(member) == [("Globex secret", B)]
    anonymous = await client.get("/posts")
    assert listed(anonymous) == [("Acme news", A)]
    assert current_tenant_id() is None


def test_async_view_under_sync_client_is_scoped_to_the_resolved_tenant(
    demo_posts: dict[str, Any], demo_stack: None, other_user: Any, client: Client
) -> None:
    headers = bearer(other_user)
    own = client.get(f"/posts/{demo_posts['globex'].pk}", headers=headers)
    assert own.json()["tenant_id"] == B
    foreign = client.get(f"/posts/{demo_posts['acme'].pk}", headers=headers)
    assert foreign.status_code == 404
    assert current_tenant_id() is None


# -- streaming bodies, consumed after the middleware has returned ------------------------------
def streamed_lines(content: bytes) -> list[str]:
    return content.decode().splitlines()


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume:Warning")
@pytest.mark.parametrize("url", ["/lab/stream", "/lab/astream"])
def test_streaming_body_under_client_lists_only_the_resolved_tenants_rows(
    two_tenants: dict[str, Any], lab_stack: None, url: str
) -> None:
    for tenant, title in ((A, "A-post"), (B, "B-post")):
        response = Client().get(url, headers={"X-Lab-Tenant": str(tenant)})
        assert response.streaming
        assert current_tenant_id() is None  # the body has not been produced yet
        lines = streamed_lines(b"".join(response))
        assert lines == ["start", f"tenant={tenant}", title]
        assert current_tenant_id() is None


@pytest.mark.django_db(transaction=True)
async def test_async_streaming_body_under_async_client_lists_only_the_resolved_tenants_rows(
    async_db: None, two_tenants: dict[str, Any], lab_stack: None
) -> None:
    for tenant, title in ((A, "A-post"), (B, "B-post")):
        response = await AsyncClient().get("/lab/astream", headers={"X-Lab-Tenant": str(tenant)})
        assert response.is_async
        content = b"".join([chunk async for chunk in response.streaming_content])
        assert streamed_lines(content) == ["start", f"tenant={tenant}", title]
        assert current_tenant_id() is None


@pytest.mark.django_db(transaction=True)
async def test_sync_streaming_body_under_async_client_lists_only_the_resolved_tenants_rows(
    async_db: None, two_tenants: dict[str, Any], lab_stack: None
) -> None:
    for tenant, title in ((A, "A-post"), (B, "B-post")):
        response = await AsyncClient().get("/lab/stream", headers={"X-Lab-Tenant": str(tenant)})
        assert not response.is_async
        content = await sync_to_async(b"".join)(response.streaming_content)
        assert streamed_lines(content) == ["start", f"tenant={tenant}", title]
        assert current_tenant_id() is None


def test_streaming_body_with_no_tenant_resolved_is_not_filtered(
    two_tenants: dict[str, Any], lab_stack: None
) -> None:
    response = Client().get("/lab/stream")
    assert streamed_lines(b"".join(response)) == ["start", "tenant=None", "A-post", "B-post"]
