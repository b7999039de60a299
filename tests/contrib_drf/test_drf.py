"""appframework.contrib.drf: the suite's tokens, sessions, Gate and error format inside
Django REST framework views, and DRF's own conventions kept."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.auth import TokenManager
from appframework_tenancy import as_tenant
from testproject.blog.models import Post, User

from .conftest import JSON, token_of

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.contrib_drf.urls")]

PROBLEM = "application/problem+json"


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(PROBLEM), response["Content-Type"]
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] == code, body
    assert {"type", "title", "detail"} <= set(body)
    return body


def _bearer(user: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}


# -- BearerTokenAuthentication ------------------------------------------------------------
def test_a_suite_token_authenticates_and_request_auth_is_the_token(
    member: Any, dashboard_ability: Any
) -> None:
    member.is_staff = True
    member.save()
    """As DRF's TokenAuthentication puts its Token in request.auth: the verified token
    object (its key, its id for revoke_id, its life), not the raw header value."""
    manager = TokenManager()
    token = manager.issue(member)
    response = Client().get("/t/dashboard", HTTP_AUTHORIZATION=f"Bearer {token}", **JSON)
    assert response.status_code == 200
    assert response.json() == {
        "user": member.email,
        "auth": {"type": "ApiToken", "key": token, "token_id": manager.token_id(token)},
        "lifetime": 30 * 24 * 3600,
    }


def test_a_garbage_token_is_401_invalid_token_with_a_bearer_challenge() -> None:
    response = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION="Bearer garbage", **JSON)
    _problem(response, 401, "invalid_token")
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_a_revoked_token_is_401(member: Any) -> None:
    manager = TokenManager()
    token = manager.issue(member)
    ok = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {token}", **JSON)
    assert ok.status_code == 200
    manager.revoke(token)
    response = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {token}", **JSON)
    _problem(response, 401, "invalid_token")


def test_a_token_of_a_user_who_changed_password_is_401(member: Any) -> None:
    headers = _bearer(member)
    member.set_password("a new one, long enough")
    member.save()
    _problem(Client().get("/api/drf/posts/", **headers), 401, "invalid_token")


def test_anonymous_is_401_not_403_with_the_bearer_challenge() -> None:
    response = Client().get("/api/drf/posts/", **JSON)
    _problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_another_authorization_scheme_is_left_to_other_classes(member: Any) -> None:
    # Not ours ("Token ..." is DRF's own scheme): no 401 from us, and no session either.
    response = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION="Token abc", **JSON)
    _problem(response, 401, "not_authenticated")


# -- SessionAuthentication ------------------------------------------------------------------
def test_a_signed_in_session_authenticates_and_request_auth_is_none(
    browser: Client, member: Any, dashboard_ability: Any
) -> None:
    member.is_staff = True
    member.save()
    response = browser.get("/t/dashboard", **JSON)
    assert response.status_code == 200
    assert response.json() == {"user": member.email, "auth": None}


def test_a_pending_totp_challenge_is_not_a_signed_in_user(member: Any, password: str) -> None:
    from tests.conftest import enable_totp

    enable_totp(member)
    client = Client()
    login = client.post("/login", {"email": member.email, "password": password})
    assert login.status_code == 302 and login["Location"].endswith("/login/mfa")
    _problem(client.get("/api/drf/posts/", **JSON), 401, "not_authenticated")


def test_drfs_browsable_login_refuses_a_totp_user(member: Any, password: str) -> None:
    from tests.conftest import enable_totp

    enable_totp(member)
    client = Client()
    response = client.post("/api/drf/auth/login/", {"username": member.email, "password": password})
    assert response.status_code == 200  # the form again, with its error
    _problem(client.get("/api/drf/posts/", **JSON), 401, "not_authenticated")


def test_drfs_browsable_login_signs_a_user_in(member: Any, password: str) -> None:
    client = Client(enforce_csrf_checks=True)
    page = client.get("/api/drf/auth/login/?next=/api/drf/posts/")
    assert page.status_code == 200
    response = client.post(
        "/api/drf/auth/login/",
        {
            "username": member.email,
            "password": password,
            "csrfmiddlewaretoken": page.context["csrf_token"],
            "next": "/api/drf/posts/",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/api/drf/posts/"
    listing = client.get("/api/drf/posts/", HTTP_ACCEPT="text/html")
    assert listing.status_code == 200
    assert member.email.encode() in listing.content  # the browsable API names the user


# -- GatePermission ---------------------------------------------------------------------------
def test_create_asks_the_gate_and_stamps_the_current_tenant(browser: Client, member: Any) -> None:
    response = browser.post(
        "/api/drf/posts/",
        {"title": "Hello"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token_of(browser),
    )
    assert response.status_code == 201, response.content
    post = Post.objects.get(pk=response.json()["id"])
    assert (post.tenant_id, post.author_id) == (1, member.pk)


def test_the_author_may_delete_their_post(browser: Client, member: Any) -> None:
    post = Post.objects.create(title="mine", author=member)
    response = browser.delete(f"/api/drf/posts/{post.pk}/", HTTP_X_CSRFTOKEN=token_of(browser))
    assert response.status_code == 204
    assert not Post.objects.filter(pk=post.pk).exists()


def test_deleting_someone_elses_post_is_403_ability_denied(
    browser: Client, other_user: Any
) -> None:
    post = Post.objects.create(title="theirs", author=other_user)
    response = browser.delete(
        f"/api/drf/posts/{post.pk}/", HTTP_X_CSRFTOKEN=token_of(browser), **JSON
    )
    body = _problem(response, 403, "ability_denied")
    assert "delete-post" in body["detail"]
    assert Post.objects.filter(pk=post.pk).exists()


def test_an_editor_may_delete_any_post_through_the_role(other_user: Any, member: Any) -> None:
    from appframework.authorization import Role

    editor = User.objects.create_user("ed@example.com", "pw-pw-pw-pw")
    editor.roles.add(Role.objects.get_or_create(name="editor")[0])
    post = Post.objects.create(title="theirs", author=other_user)
    response = Client().delete(f"/api/drf/posts/{post.pk}/", **_bearer(editor))
    assert response.status_code == 204


def test_a_custom_action_is_its_own_ability(member: Any, other_user: Any) -> None:
    from appframework.authorization import Role

    post = Post.objects.create(title="p", author=other_user)
    denied = Client().post(f"/api/drf/posts/{post.pk}/publish/", **_bearer(member))
    _problem(denied, 403, "ability_denied")
    member.roles.add(Role.objects.get_or_create(name="moderator")[0])
    allowed = Client().post(f"/api/drf/posts/{post.pk}/publish/", **_bearer(member))
    assert allowed.status_code == 200 and allowed.json() == {"published": post.pk}


def test_another_tenants_post_is_404_for_read_and_delete_even_for_an_editor(
    member: Any, other_user: Any
) -> None:
    from appframework.authorization import Role

    member.roles.add(Role.objects.get_or_create(name="editor")[0])
    with as_tenant(2):
        foreign = Post.objects.create(title="Globex only", author=other_user)
    headers = _bearer(member)
    _problem(Client().get(f"/api/drf/posts/{foreign.pk}/", **headers), 404, "not_found")
    _problem(Client().delete(f"/api/drf/posts/{foreign.pk}/", **headers), 404, "not_found")
    listed = Client().get("/api/drf/posts/", **headers).json()["results"]
    assert foreign.pk not in [row["id"] for row in listed]
    with as_tenant(2):
        assert Post.objects.filter(pk=foreign.pk).exists()


def test_abilities_map_names_the_ability_of_a_model_less_view(
    member: Any, dashboard_ability: list[Any]
) -> None:
    _problem(Client().get("/t/dashboard", **_bearer(member)), 403, "ability_denied")
    assert dashboard_ability == [()]  # asked with no object
    member.is_staff = True
    member.save()
    assert Client().get("/t/dashboard", **_bearer(member)).status_code == 200


def test_an_action_mapped_to_none_needs_only_a_signed_in_user(member: Any) -> None:
    assert Client().get("/t/open-posts", **_bearer(member)).status_code == 200
    _problem(Client().get("/t/open-posts", **JSON), 401, "not_authenticated")


def test_options_offers_the_create_form_only_when_the_gate_allows_create(
    browser: Client,
) -> None:
    from appframework.authorization import Gate
    from appframework.container import container

    allowed = browser.options("/api/drf/posts/", **JSON)
    assert allowed.status_code == 200 and "POST" in allowed.json()["actions"]
    gate: Gate = container.resolve(Gate)
    gate.define("create-post", lambda user, *args: False)  # a define wins over the policy
    try:
        denied = browser.options("/api/drf/posts/", **JSON)
    finally:
        gate._abilities.pop("create-post")
    assert denied.status_code == 200 and "actions" not in denied.json()


# -- exception_handler ----------------------------------------------------------------------
def test_authorize_sync_inside_a_drf_view_is_401_for_anonymous(other_user: Any) -> None:
    post = Post.objects.create(title="p", author=other_user)
    _problem(Client().post(f"/t/authorize/{post.pk}", **JSON), 401, "not_authenticated")


def test_authorize_sync_inside_a_drf_view_is_403_when_denied(member: Any, other_user: Any) -> None:
    post = Post.objects.create(title="p", author=other_user)
    _problem(Client().post(f"/t/authorize/{post.pk}", **_bearer(member)), 403, "ability_denied")


def test_validation_errors_keep_every_field_with_code_and_message(browser: Client) -> None:
    response = browser.post(
        "/api/drf/posts/",
        {"title": "", "body": 3.5},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token_of(browser),
    )
    body = _problem(response, 400, "invalid")
    assert body["errors"]["title"] == [{"code": "blank", "message": "This field may not be blank."}]
    assert Post.objects.count() == 0


def test_nested_and_non_field_errors_get_dotted_names(member: Any) -> None:
    response = Client().post(
        "/t/nested",
        {"title": "t", "items": [{"name": "ok"}, {}]},
        content_type="application/json",
        **_bearer(member),
    )
    body = _problem(response, 400, "invalid")
    assert body["errors"] == {
        "items.1.name": [{"code": "required", "message": "This field is required."}]
    }
    whole = Client().post(
        "/t/nested", {"title": "t", "items": []}, content_type="application/json", **_bearer(member)
    )
    assert _problem(whole, 400, "invalid")["errors"] == {
        "non_field_errors": [{"code": "invalid", "message": "never valid as a whole"}]
    }


def test_the_suites_validation_exception_is_422(member: Any) -> None:
    _problem(Client().get("/t/errors/validation", **JSON), 422, "invalid")


def test_the_suites_429_keeps_retry_after(member: Any) -> None:
    response = Client().get("/t/errors/throttled", **JSON)
    _problem(response, 429, "throttled")
    assert response["Retry-After"] == "3"


def test_djangos_http404_and_permission_denied_use_the_suites_texts() -> None:
    missing = _problem(Client().get("/t/errors/http404", **JSON), 404, "not_found")
    assert "internals" not in missing["detail"]
    _problem(Client().get("/t/errors/permission", **JSON), 403, "permission_denied")


def test_drf_throttling_is_429_with_retry_after(member: Any) -> None:
    headers = _bearer(member)
    assert Client().get("/t/throttled", **headers).status_code == 200
    response = Client().get("/t/throttled", **headers)
    _problem(response, 429, "throttled")
    assert int(response["Retry-After"]) >= 1


def test_405_and_415_and_a_parse_error_are_problems(browser: Client) -> None:
    token = token_of(browser)
    not_allowed = browser.put(
        "/api/drf/posts/", {}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    _problem(not_allowed, 405, "method_not_allowed")
    assert "POST" in not_allowed["Allow"]
    media = browser.post("/api/drf/posts/", "x", content_type="text/plain", HTTP_X_CSRFTOKEN=token)
    _problem(media, 415, "unsupported_media_type")
    parse = browser.post(
        "/api/drf/posts/", "{bad", content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    _problem(parse, 400, "parse_error")


def test_an_unexpected_error_is_not_swallowed_by_the_handler(member: Any) -> None:
    client = Client(raise_request_exception=False)
    response = client.get("/t/errors/boom", **JSON)
    assert response.status_code == 500


def test_the_browsable_api_shows_the_problem_in_its_html_page(browser: Client) -> None:
    response = browser.get("/api/drf/posts/999999/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert b"not_found" in response.content


# -- DRF's own conventions ------------------------------------------------------------------
def test_pagination_pages_the_tenants_posts(member: Any) -> None:
    Post.objects.bulk_create([Post(title=f"p{i}", author=member) for i in range(25)])
    first = Client().get("/api/drf/posts/", **_bearer(member)).json()
    assert first["count"] == 25 and len(first["results"]) == 20 and first["next"]
    second = Client().get(first["next"], **_bearer(member)).json()
    assert len(second["results"]) == 5


# -- without the suite's CSRF middleware, Django's own check decides ---------------------------
@pytest.mark.urls("tests.hardening.api_urls")
def test_with_djangos_csrf_middleware_the_suites_session_class_runs_djangos_check(
    member: Any, settings: Any
) -> None:
    settings.MIDDLEWARE = [
        "django.middleware.csrf.CsrfViewMiddleware" if m.endswith(".CsrfMiddleware") else m
        for m in settings.MIDDLEWARE
    ]
    client = Client(enforce_csrf_checks=True)
    client.force_login(member, backend="appframework.auth.AuthManager")
    secret = "a" * 32  # the shape of Django's CSRF secret
    client.cookies[settings.CSRF_COOKIE_NAME] = secret
    bare = client.post("/drf/suite", b"{}", content_type="application/json", **JSON)
    body = _problem(bare, 403, "csrf_failed")
    assert "CSRF" in body["detail"]
    ok = client.post(
        "/drf/suite", b"{}", content_type="application/json", HTTP_X_CSRFTOKEN=secret
    )
    assert ok.status_code == 201, ok.content


# -- one write path: PUT and PATCH keep the rules of POST --------------------------------------
@pytest.mark.parametrize("method", ["patch", "put"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "evil\u202etxt.exe"),  # a right-to-left override: the title lies
        ("title", "\x00"),
        ("body", "x" * 50_000),  # past the 10,000-character limit of a new post
        ("body", "a\u200bb\x07"),
    ],
    ids=["bidi-override", "nul", "50000-characters", "control-characters"],
)
def test_changing_a_post_is_refused_where_creating_it_would_be(
    member: Any, method: str, field: str, value: str
) -> None:
    post = Post.objects.create(title="mine", body="before", author=member)
    data = {"title": "mine", "body": "before", field: value}
    response = getattr(Client(), method)(
        f"/api/drf/posts/{post.pk}/",
        data if method == "put" else {field: value},
        content_type="application/json",
        **_bearer(member),
    )
    created = Client().post(
        "/api/drf/posts/", data, content_type="application/json", **_bearer(member)
    )
    # Refused as a new post with it is: 422 from the demo's rules (400 where DRF's own
    # CharField refuses a NUL first).
    assert created.status_code in (400, 422)
    assert response.status_code == created.status_code, response.content[:200]
    post.refresh_from_db()
    assert (post.title, post.body) == ("mine", "before")


def test_a_valid_patch_changes_only_what_it_names(member: Any) -> None:
    post = Post.objects.create(title="mine", body="before", author=member)
    response = Client().patch(
        f"/api/drf/posts/{post.pk}/",
        {"title": "  renamed  "},
        content_type="application/json",
        **_bearer(member),
    )
    assert response.status_code == 200, response.content
    post.refresh_from_db()
    assert (post.title, post.body) == ("renamed", "before")
