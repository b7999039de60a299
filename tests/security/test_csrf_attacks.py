"""CSRF attacks, one class each: forged requests without or with a wrong token; cookie
tossing (a token planted from a sibling subdomain, or taken from another user's or
another session's cookie); token rotation at login and logout; a request carrying both
an ``Authorization`` header and the victim's session cookie; login CSRF against a
pre-login (anonymous) session; and rotation of the secret key."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import Client

from appframework.auth import TokenManager
from appframework.container import container
from appframework.security.csrf import (
    REASON_FOREIGN,
    REASON_MISMATCH,
    REASON_NO_TOKEN,
)
from testproject.blog.models import Post
from tests.conftest import demo_tenant, login_client

from .helpers import (
    COOKIE,
    HEADER,
    HTML_ACCEPT,
    JSON_ACCEPT,
    URLS,
    anonymous_session_cookie,
    prime,
    problem_detail,
    send_form,
    send_json,
)

pytestmark = [pytest.mark.urls(URLS)]


@pytest.fixture
def victim(user: Any) -> Client:
    client = login_client(Client(enforce_csrf_checks=True), user)
    prime(client)
    return client


@pytest.fixture
def attacker(other_user: Any) -> Client:
    client = login_client(Client(enforce_csrf_checks=True), other_user)
    prime(client)
    return client


def _session_user_id(client: Client) -> Any:
    value = client.cookies.get(settings.SESSION_COOKIE_NAME)
    if value is None or not value.value:
        return None
    return SessionStore(session_key=value.value).get(SESSION_KEY)


def _form_token(html: bytes, field: str) -> str:
    match = re.search(rf'name="{field}" value="([^"]+)"'.encode(), html)
    assert match, f"no {field} in page"
    return match.group(1).decode()


# -- forged requests: no token, or one that does not match the cookie -----------------
class TestForgedRequestBasics:
    def test_no_header_no_field_is_403(self, victim: Client) -> None:
        response = send_form(victim, "POST", {"title": "x"}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_NO_TOKEN

    def test_header_not_equal_to_cookie_is_403(self, victim: Client) -> None:
        response = send_json(victim, "POST", **{HEADER: "A" * 32}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_MISMATCH

    def test_form_field_equal_to_cookie_is_200(self, victim: Client) -> None:
        token = victim.cookies[COOKIE].value
        response = send_form(victim, "POST", {"_token": token})
        assert response.status_code == 200
        assert response.json()["authenticated"] is True

    def test_demo_create_post_with_header_succeeds(self, victim: Client, user: Any) -> None:
        user.tenants.add(demo_tenant())  # the demo lets members of the tenant write
        token = victim.cookies[COOKIE].value
        response = victim.post(
            "/posts", {"title": "hi"}, content_type="application/json", **{HEADER: token}
        )
        assert response.status_code == 201
        assert Post.objects.get().author == user

    def test_demo_create_post_without_token_writes_nothing(self, victim: Client) -> None:
        response = victim.post(
            "/posts", {"title": "hi"}, content_type="application/json", **JSON_ACCEPT
        )
        assert response.status_code == 403
        assert not Post.objects.exists()


# -- cookie tossing: a token planted or borrowed from another session -----------------
class TestCookieTossing:
    def test_attackers_own_session_token_planted_is_403(
        self, victim: Client, attacker: Client
    ) -> None:
        planted = attacker.cookies[COOKIE].value
        # sanity: the attacker's token does work for the attacker
        assert send_json(attacker, "POST", **{HEADER: planted}).status_code == 200
        victim.cookies[COOKIE] = planted
        response = send_json(victim, "POST", **{HEADER: planted}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_FOREIGN

    def test_anonymously_minted_token_planted_is_403(self, victim: Client) -> None:
        planted = prime(Client(enforce_csrf_checks=True))
        victim.cookies[COOKIE] = planted
        response = send_json(victim, "POST", **{HEADER: planted}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_FOREIGN

    def test_anonymously_minted_token_planted_in_form_is_403(self, victim: Client) -> None:
        planted = prime(Client(enforce_csrf_checks=True))
        victim.cookies[COOKIE] = planted
        response = send_form(victim, "POST", {"_token": planted}, **HTML_ACCEPT)
        assert response.status_code == 403

    @pytest.mark.parametrize("planted", ["A" * 32, "0" * 32, "a" * 64, "x", "A" * 31 + "!"])
    def test_attacker_chosen_value_planted_is_403(self, victim: Client, planted: str) -> None:
        victim.cookies[COOKIE] = planted
        response = send_json(victim, "POST", **{HEADER: planted}, **JSON_ACCEPT)
        assert response.status_code == 403

    def test_planted_cookie_is_replaced_on_next_response(
        self, victim: Client, attacker: Client
    ) -> None:
        planted = attacker.cookies[COOKIE].value
        victim.cookies[COOKIE] = planted
        response = victim.get("/sec/echo")
        assert response.cookies[COOKIE].value != planted
        fresh = victim.cookies[COOKIE].value
        assert send_json(victim, "POST", **{HEADER: fresh}).status_code == 200

    def test_token_from_another_users_session_is_403(
        self, victim: Client, attacker: Client
    ) -> None:
        """User B's token sent with user A's session (A's own cookie kept)."""
        b_token = attacker.cookies[COOKIE].value
        response = send_json(victim, "POST", **{HEADER: b_token}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_MISMATCH

    def test_token_from_another_session_of_the_same_user_is_403(
        self, victim: Client, user: Any
    ) -> None:
        second = login_client(Client(enforce_csrf_checks=True), user)
        other_session_token = prime(second)
        victim.cookies[COOKIE] = other_session_token
        response = send_json(victim, "POST", **{HEADER: other_session_token}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_FOREIGN

    def test_victims_token_with_attackers_session_is_403(
        self, victim: Client, attacker: Client
    ) -> None:
        stolen = victim.cookies[COOKIE].value
        attacker.cookies[COOKIE] = stolen
        response = send_json(attacker, "POST", **{HEADER: stolen}, **JSON_ACCEPT)
        assert response.status_code == 403


class TestTokenRotationAtLoginAndLogout:
    def test_pre_login_token_stops_working_after_real_login(
        self, csrf_client: Client, user: Any, password: str
    ) -> None:
        before = prime(csrf_client, "/login")
        login = csrf_client.post(
            "/login", {"email": user.email, "password": password, "_token": before}
        )
        assert login.status_code == 302
        assert _session_user_id(csrf_client) == str(user.pk)
        assert COOKIE in login.cookies, "the login response must set a new CSRF cookie"
        after = login.cookies[COOKIE].value
        assert after != before
        assert not login.cookies[COOKIE]["httponly"]

        csrf_client.cookies[COOKIE] = before
        refused = send_json(csrf_client, "POST", **{HEADER: before}, **JSON_ACCEPT)
        assert refused.status_code == 403
        assert problem_detail(refused) == REASON_FOREIGN

        csrf_client.cookies[COOKIE] = after
        assert send_json(csrf_client, "POST", **{HEADER: after}).status_code == 200

    def test_pre_login_token_stops_working_after_force_login(
        self, csrf_client: Client, user: Any
    ) -> None:
        before = prime(csrf_client)
        login_client(csrf_client, user)
        refused = send_json(csrf_client, "POST", **{HEADER: before}, **JSON_ACCEPT)
        assert refused.status_code == 403
        assert problem_detail(refused) == REASON_FOREIGN

    def test_token_of_previous_login_stops_working_after_relogin(
        self, csrf_client: Client, user: Any, password: str
    ) -> None:
        login_client(csrf_client, user)
        first = prime(csrf_client)
        login = csrf_client.post(
            "/login", {"email": user.email, "password": password}, **{HEADER: first}
        )
        assert login.status_code == 302
        second = login.cookies[COOKIE].value
        assert second != first
        csrf_client.cookies[COOKIE] = first
        assert send_json(csrf_client, "POST", **{HEADER: first}, **JSON_ACCEPT).status_code == 403
        csrf_client.cookies[COOKIE] = second
        assert send_json(csrf_client, "POST", **{HEADER: second}).status_code == 200

    def test_logout_issues_a_new_token(self, victim: Client) -> None:
        logged_in = victim.cookies[COOKIE].value
        response = victim.post("/logout", {"_token": logged_in})
        assert response.status_code == 302
        assert _session_user_id(victim) is None
        assert COOKIE in response.cookies, "the logout response must set a new CSRF cookie"
        fresh = response.cookies[COOKIE].value
        assert fresh and fresh != logged_in

        # the old token is no good for the anonymous session that follows
        anonymous_session_cookie(victim)
        victim.cookies[COOKIE] = logged_in
        assert send_json(victim, "POST", **{HEADER: logged_in}, **JSON_ACCEPT).status_code == 403
        victim.cookies[COOKIE] = fresh
        assert send_json(victim, "POST", **{HEADER: fresh}).status_code == 200

    def test_logout_without_token_is_refused_and_keeps_session(
        self, victim: Client, user: Any
    ) -> None:
        response = victim.post("/logout", **JSON_ACCEPT)
        assert response.status_code == 403
        assert _session_user_id(victim) == str(user.pk)


# -- Authorization header sent along with the victim's session cookie -----------------
class TestAuthorizationHeaderIgnoresTheSession:
    def test_not_a_csrf_403_but_anonymous(self, victim: Client) -> None:
        response = send_json(victim, "POST", HTTP_AUTHORIZATION="Bearer garbage")
        assert response.status_code == 200
        assert response.json()["authenticated"] is False
        assert response.json()["user_id"] is None

    def test_async_view_sees_anonymous_too(self, victim: Client) -> None:
        response = send_json(victim, "POST", "/sec/async-echo", HTTP_AUTHORIZATION="Bearer garbage")
        assert response.status_code == 200
        assert response.json()["authenticated"] is False

    def test_safe_method_with_authorization_also_ignores_the_session(self, victim: Client) -> None:
        response = victim.get("/sec/echo", HTTP_AUTHORIZATION="Bearer garbage")
        assert response.json()["authenticated"] is False

    def test_demo_post_answers_401_bearer_invalid(self, victim: Client) -> None:
        response = victim.post(
            "/posts",
            {"title": "forged"},
            content_type="application/json",
            HTTP_AUTHORIZATION="Bearer garbage",
            **JSON_ACCEPT,
        )
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert not Post.objects.exists()

    def test_demo_post_is_authenticated_by_the_bearer_only(
        self, victim: Client, other_user: Any
    ) -> None:
        other_user.tenants.add(demo_tenant())  # the demo lets members of the tenant write
        bearer = container.resolve(TokenManager).issue(other_user)
        response = victim.post(
            "/posts",
            {"title": "by bob"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {bearer}",
        )
        assert response.status_code == 201
        assert Post.objects.get().author == other_user

    def test_api_me_with_session_and_garbage_bearer_is_401(self, victim: Client) -> None:
        response = victim.get("/api/me", HTTP_AUTHORIZATION="Bearer garbage", **JSON_ACCEPT)
        assert response.status_code == 401

    def test_token_endpoint_with_session_and_garbage_bearer_is_401(self, victim: Client) -> None:
        response = victim.post("/token", HTTP_AUTHORIZATION="Bearer garbage", **JSON_ACCEPT)
        assert response.status_code == 401


# -- login CSRF against a pre-login (anonymous) session -------------------------------
class TestLoginCsrf:
    def test_login_post_with_anonymous_session_needs_the_token(
        self, csrf_client: Client, user: Any, password: str
    ) -> None:
        anonymous_session_cookie(csrf_client)
        prime(csrf_client, "/login")
        response = csrf_client.post(
            "/login", {"email": user.email, "password": password}, **HTML_ACCEPT
        )
        assert response.status_code == 403
        assert b"CSRF verification failed" in response.content
        assert _session_user_id(csrf_client) is None

    def test_login_post_with_anonymous_session_and_token_logs_in(
        self, csrf_client: Client, user: Any, password: str
    ) -> None:
        anonymous_session_cookie(csrf_client)
        page = csrf_client.get("/login")
        field = _form_token(page.content, "csrfmiddlewaretoken")
        response = csrf_client.post(
            "/login", {"email": user.email, "password": password, "csrfmiddlewaretoken": field}
        )
        assert response.status_code == 302
        assert _session_user_id(csrf_client) == str(user.pk)

    def test_login_post_with_anonymous_session_and_forged_token_is_403(
        self, csrf_client: Client, user: Any, password: str
    ) -> None:
        anonymous_session_cookie(csrf_client)
        prime(csrf_client, "/login")
        response = csrf_client.post(
            "/login", {"email": user.email, "password": password, "_token": "Z" * 32}, **JSON_ACCEPT
        )
        assert response.status_code == 403
        assert _session_user_id(csrf_client) is None


# -- key rotation -----------------------------------------------------------------------------
class TestSecretRotation:
    def test_token_valid_while_old_key_is_a_fallback(self, victim: Client) -> None:
        from django.test import override_settings

        token = victim.cookies[COOKIE].value
        old = settings.SECRET_KEY
        with override_settings(
            SECRET_KEY="a-brand-new-key-" + "x" * 40, SECRET_KEY_FALLBACKS=[old]
        ):
            response = send_json(victim, "POST", **{HEADER: token})
        assert response.status_code == 200
        assert response.json()["authenticated"] is True

    def test_token_refused_once_old_key_is_gone(self, victim: Client) -> None:
        from django.test import override_settings

        token = victim.cookies[COOKIE].value
        with override_settings(SECRET_KEY="a-brand-new-key-" + "x" * 40, SECRET_KEY_FALLBACKS=[]):
            response = send_json(victim, "POST", **{HEADER: token}, **JSON_ACCEPT)
        assert response.status_code == 403
