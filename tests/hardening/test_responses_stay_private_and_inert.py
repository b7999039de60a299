"""A bearer request takes its tenant from its token; tenant-dependent answers are private
and vary on what the resolver reads; TRACE is refused; the suite's pages allow no
script they do not name; a bad Host is one error format for API clients."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.auth import TokenManager
from tests.conftest import demo_tenant, login_client

pytestmark = [pytest.mark.django_db]



# -- a token request takes its tenant from the token, never the session ------------------------
def test_a_bearer_request_beside_a_session_cookie_ignores_the_sessions_tenant(
    demo_stack: None, user: Any
) -> None:
    from testproject.blog.models import Tenant

    acme = demo_tenant()
    globex = Tenant.objects.get_or_create(pk=2, defaults={"name": "Globex", "slug": "globex"})[0]
    user.tenants.add(acme, globex)
    from appframework_tenancy import as_tenant
    from testproject.blog.models import Post

    for tenant in (1, 2):
        with as_tenant(tenant):
            Post.objects.create(title=f"in {tenant}", author=user)
    browser = login_client(Client(), user)
    browser.get("/tenant")  # the CSRF cookie
    csrf = browser.cookies["csrf_token"].value
    assert browser.post("/tenant", {"tenant": "2", "_token": csrf}).status_code in (200, 302)
    assert browser.get("/posts", HTTP_ACCEPT="application/json").status_code == 200
    api_token = TokenManager().issue(user)
    response = browser.get(
        "/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {api_token}", HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200
    # The token's user's first tenant (Acme), not the session's choice (Globex).
    assert {row["tenant_id"] for row in response.json()["results"]} == {1}
    assert not response.cookies, f"a token request wrote cookies: {list(response.cookies)}"

# -- shared caches cannot mix tenants up; TRACE is refused -----------------------------------------
def test_tenant_dependent_json_varies_on_the_resolvers_inputs_and_is_private(
    demo_stack: None,
) -> None:
    response = Client().get("/posts", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    vary = {part.strip().lower() for part in response["Vary"].split(",")}
    assert {"cookie", "authorization", "x-tenant"} <= vary
    assert "private" in response["Cache-Control"]


@pytest.mark.parametrize("path", ["/", "/posts", "/api/drf/posts/", "/no-such-page"])
def test_trace_is_405_without_echoing_the_request(path: str) -> None:
    response = Client().generic(
        "TRACE", path, HTTP_ACCEPT="application/json", HTTP_COOKIE="sessionid=secret-value"
    )
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/problem+json")
    assert "TRACE" not in response["Allow"]
    assert b"secret-value" not in response.content

# -- the suite's own pages carry a Content-Security-Policy -------------------------------------
def test_the_html_error_page_allows_nothing_to_run() -> None:
    response = Client().get("/no-such-page", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy


def test_graphiql_runs_its_inline_script_by_nonce_only(settings: Any) -> None:
    import re

    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("GRAPHQL", {})["GRAPHIQL"] = True
    settings.APPFRAMEWORK = app
    first, second = (Client().get("/graphql", HTTP_ACCEPT="text/html") for _ in range(2))
    assert first.status_code == 200
    policy = first["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)  # type: ignore[union-attr]
    assert f'<script nonce="{nonce}">'.encode() in first.content
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert "connect-src 'self'" in policy and "default-src 'none'" in policy
    assert nonce not in second["Content-Security-Policy"]  # one per response

# -- DEBUG on: a bad Host is still one format for API clients ---------------------------------
@pytest.mark.parametrize("accept", ["application/json", "*/*"])
def test_a_bad_host_under_debug_is_a_problem_for_api_clients(settings: Any, accept: str) -> None:
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = ["example.com"]
    response = Client(raise_request_exception=False).get(
        "/posts", HTTP_HOST="evil.example", HTTP_ACCEPT=accept
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "bad_request"
    assert b"SECRET_KEY" not in response.content and b"Traceback" not in response.content


def test_a_bad_host_under_debug_keeps_djangos_page_for_a_browser(settings: Any) -> None:
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = ["example.com"]
    response = Client(raise_request_exception=False).get(
        "/posts", HTTP_HOST="evil.example", HTTP_ACCEPT="text/html"
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
