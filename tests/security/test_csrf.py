"""The double-submit cookie CSRF check, one group of tests per rule: a readable
``csrf_token`` cookie; unsafe methods (POST, PUT, PATCH, DELETE) must echo it in
``X-CSRF-Token`` or the ``_token`` form field; the exemptions (an ``Authorization``
header, no session cookie, the exempt predicate); ``CSRF_ENABLED=false`` turns it off."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

from appframework.conf import AUTO
from appframework.security.csrf import REASON_MISMATCH, REASON_NO_COOKIE, REASON_NO_TOKEN
from tests.conftest import login_client

from .helpers import (
    COOKIE,
    HEADER,
    HTML_ACCEPT,
    JSON_ACCEPT,
    SAFE,
    UNSAFE,
    URLS,
    anonymous_session_cookie,
    prime,
    problem_detail,
    send_form,
    send_json,
    send_multipart,
)

pytestmark = [pytest.mark.urls(URLS)]


@pytest.fixture
def session_client(csrf_client: Client, user: Any) -> Client:
    """A CSRF-enforcing client with a logged-in session cookie and a matching CSRF cookie."""
    login_client(csrf_client, user)
    prime(csrf_client)
    return csrf_client


def _csrf(app: dict[str, Any] | None = None, **csrf: Any) -> dict[str, Any]:
    """A full APPFRAMEWORK dict: the test settings' one with CSRF keys overridden."""
    base = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    base.setdefault("CSRF", {}).update(csrf)
    for section, values in (app or {}).items():
        base.setdefault(section, {}).update(values)
    return base


# -- a readable cookie named csrf_token -------------------------------------------------
class TestReadableCookie:
    def test_a_page_using_the_token_sets_a_cookie_named_csrf_token(
        self, csrf_client: Client
    ) -> None:
        response = csrf_client.get("/sec/token-only")
        assert response.status_code == 200
        assert COOKIE in response.cookies
        assert len(response.cookies[COOKIE].value) == 32
        assert response.json()["token"] == response.cookies[COOKIE].value

    def test_djangos_get_token_sets_the_cookie_too(self, csrf_client: Client) -> None:
        response = csrf_client.get("/sec/token")
        assert response.cookies[COOKIE].value == response.json()["token"]

    def test_a_page_that_does_not_use_the_token_sets_no_cookie_as_in_django(
        self, csrf_client: Client
    ) -> None:
        response = csrf_client.get("/sec/echo")
        assert response.status_code == 200
        assert COOKIE not in response.cookies

    def test_a_stale_cookie_is_replaced_even_where_the_page_does_not_use_the_token(
        self, csrf_client: Client
    ) -> None:
        csrf_client.cookies[COOKIE] = "x" * 32
        response = csrf_client.get("/sec/echo")
        assert len(response.cookies[COOKIE].value) == 32
        assert response.cookies[COOKIE].value != "x" * 32

    def test_cookie_is_readable_not_httponly(self, csrf_client: Client) -> None:
        response = csrf_client.get("/sec/token-only")
        assert not response.cookies[COOKIE]["httponly"]

    def test_cookie_is_set_on_a_rendered_page_too(self, csrf_client: Client, db: Any) -> None:
        response = csrf_client.get("/login")
        assert response.status_code == 200
        assert not response.cookies[COOKIE]["httponly"]

    def test_cookie_not_resent_when_client_already_holds_a_valid_one(
        self, csrf_client: Client
    ) -> None:
        prime(csrf_client)
        again = csrf_client.get("/sec/echo")
        assert COOKIE not in again.cookies

    def test_cookie_name_override(self, csrf_client: Client) -> None:
        with override_settings(APPFRAMEWORK=_csrf(COOKIE_NAME="xsrf")):
            response = csrf_client.get("/sec/token-only")
        assert "xsrf" in response.cookies
        assert COOKIE not in response.cookies
        assert not response.cookies["xsrf"]["httponly"]

    def test_overridden_cookie_name_is_the_one_checked(
        self, csrf_client: Client, user: Any
    ) -> None:
        login_client(csrf_client, user)
        with override_settings(APPFRAMEWORK=_csrf(COOKIE_NAME="xsrf")):
            token = prime(csrf_client, cookie="xsrf")
            ok = send_json(csrf_client, "POST", **{HEADER: token})
            # the same value in a cookie of the default name does not count
            del csrf_client.cookies["xsrf"]
            csrf_client.cookies[COOKIE] = token
            refused = send_json(csrf_client, "POST", **{HEADER: token}, **JSON_ACCEPT)
        assert ok.status_code == 200
        assert refused.status_code == 403
        assert problem_detail(refused) == REASON_NO_COOKIE


# -- unsafe methods must echo the cookie ------------------------------------------------
@pytest.mark.parametrize("method", UNSAFE)
class TestUnsafeMethodsEchoTheCookie:
    def test_no_token_is_403(self, session_client: Client, method: str) -> None:
        response = send_json(session_client, method, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_NO_TOKEN

    def test_header_equal_to_cookie_passes(
        self, session_client: Client, method: str, user: Any
    ) -> None:
        token = session_client.cookies[COOKIE].value
        response = send_json(session_client, method, **{HEADER: token})
        assert response.status_code == 200
        assert response.json() == {"method": method, "authenticated": True, "user_id": user.pk}

    def test_form_field_equal_to_cookie_passes_urlencoded(
        self, session_client: Client, method: str
    ) -> None:
        token = session_client.cookies[COOKIE].value
        response = send_form(session_client, method, {"_token": token, "title": "x"})
        assert response.status_code == 200, response.content
        assert response.json()["authenticated"] is True

    def test_form_field_equal_to_cookie_passes_multipart(
        self, session_client: Client, method: str
    ) -> None:
        token = session_client.cookies[COOKIE].value
        response = send_multipart(session_client, method, {"_token": token, "title": "x"})
        assert response.status_code == 200, response.content
        assert response.json()["authenticated"] is True

    def test_header_not_equal_to_cookie_is_403(self, session_client: Client, method: str) -> None:
        token = session_client.cookies[COOKIE].value
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        response = send_json(session_client, method, **{HEADER: wrong}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_MISMATCH

    def test_form_field_not_equal_to_cookie_is_403(
        self, session_client: Client, method: str
    ) -> None:
        response = send_form(session_client, method, {"_token": "x" * 32}, **JSON_ACCEPT)
        assert response.status_code == 403

    def test_token_present_but_no_cookie_is_403(self, session_client: Client, method: str) -> None:
        token = session_client.cookies[COOKIE].value
        del session_client.cookies[COOKIE]
        assert settings.SESSION_COOKIE_NAME in session_client.cookies
        response = send_json(session_client, method, **{HEADER: token}, **JSON_ACCEPT)
        assert response.status_code == 403
        assert problem_detail(response) == REASON_NO_COOKIE

    def test_json_client_gets_problem_json_with_reason(
        self, session_client: Client, method: str
    ) -> None:
        response = send_json(session_client, method, **JSON_ACCEPT)
        assert response.status_code == 403
        body = response.json()
        assert body["title"] == "CSRF verification failed"
        assert body["detail"] == REASON_NO_TOKEN

    def test_html_client_gets_django_csrf_failure_page(
        self, session_client: Client, method: str
    ) -> None:
        response = send_form(session_client, method, {"title": "x"}, **HTML_ACCEPT)
        assert response.status_code == 403
        assert response["Content-Type"].startswith("text/html")
        assert b"CSRF verification failed" in response.content


def test_html_failure_page_states_the_reason_in_debug(session_client: Client) -> None:
    with override_settings(DEBUG=True):
        response = send_form(session_client, "POST", {"title": "x"}, **HTML_ACCEPT)
    assert response.status_code == 403
    assert REASON_NO_TOKEN.encode() in response.content


def test_html_failure_page_uses_project_csrf_failure_view(session_client: Client) -> None:
    with override_settings(CSRF_FAILURE_VIEW="tests.security.test_csrf.custom_failure"):
        response = send_form(session_client, "POST", {"title": "x"}, **HTML_ACCEPT)
    assert response.status_code == 403
    assert response.content == b"custom failure: " + REASON_NO_TOKEN.encode()


def custom_failure(request: Any, reason: str = "") -> Any:
    from django.http import HttpResponseForbidden

    return HttpResponseForbidden(f"custom failure: {reason}")


def test_custom_header_name(session_client: Client) -> None:
    token = session_client.cookies[COOKIE].value
    with override_settings(APPFRAMEWORK=_csrf(HEADER_NAME="X-XSRF-Token")):
        custom = send_json(session_client, "POST", HTTP_X_XSRF_TOKEN=token)
        default = send_json(session_client, "POST", **{HEADER: token}, **JSON_ACCEPT)
    assert custom.status_code == 200
    assert default.status_code == 403
    assert problem_detail(default) == REASON_NO_TOKEN


def test_header_wins_check_with_real_login_session(
    csrf_client: Client, user: Any, password: str
) -> None:
    """Same rule with a session made by a real POST /login rather than force_login."""
    prime(csrf_client, "/login")
    # The login form itself is CSRF-protected (login CSRF), so it echoes the token too.
    anonymous_token = csrf_client.cookies[COOKIE].value
    login = csrf_client.post(
        "/login", {"email": user.email, "password": password, "_token": anonymous_token}
    )
    assert login.status_code == 302
    token = csrf_client.cookies[COOKIE].value
    assert send_json(csrf_client, "POST", **JSON_ACCEPT).status_code == 403
    assert send_json(csrf_client, "POST", **{HEADER: token}).json()["authenticated"] is True


# -- the exemptions: Authorization header, no session cookie, the predicate -------------
# TRACE is refused before any view (tests/hardening/test_second_pass.py).
ANSWERED_SAFE = [method for method in SAFE if method != "TRACE"]


@pytest.mark.parametrize("method", ANSWERED_SAFE)
def test_safe_methods_are_never_checked(session_client: Client, method: str) -> None:
    del session_client.cookies[COOKIE]
    response = session_client.generic(method, "/sec/echo", **JSON_ACCEPT)
    assert response.status_code == 200


@pytest.mark.parametrize("method", ANSWERED_SAFE)
def test_safe_methods_not_checked_even_with_protection_everywhere(
    csrf_client: Client, method: str
) -> None:
    with override_settings(APPFRAMEWORK=_csrf(PROTECT_IF_COOKIE_PRESENT=None)):
        response = csrf_client.generic(method, "/sec/echo", **JSON_ACCEPT)
    assert response.status_code == 200


@pytest.mark.parametrize("method", UNSAFE)
@pytest.mark.parametrize("authorization", ["Bearer garbage", "Basic dXNlcjpwYXNz", "Token abc"])
def test_request_with_authorization_header_is_exempt(
    session_client: Client, method: str, authorization: str
) -> None:
    response = send_json(session_client, method, HTTP_AUTHORIZATION=authorization)
    assert response.status_code == 200


@pytest.mark.parametrize("method", UNSAFE)
def test_request_without_session_cookie_is_exempt(csrf_client: Client, method: str) -> None:
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies
    response = send_json(csrf_client, method)
    assert response.status_code == 200


def test_protect_if_cookie_present_defaults_to_session_cookie_name() -> None:
    from appframework.conf import app_settings
    from appframework.security.csrf import _protect_cookie

    assert app_settings.CSRF.PROTECT_IF_COOKIE_PRESENT is AUTO
    assert _protect_cookie() == settings.SESSION_COOKIE_NAME


def test_protect_if_cookie_present_follows_renamed_session_cookie(csrf_client: Client) -> None:
    with override_settings(SESSION_COOKIE_NAME="my_session"):
        csrf_client.cookies["sessionid"] = "not-our-session-cookie-any-more"
        exempt = send_json(csrf_client, "POST")
        csrf_client.cookies["my_session"] = "whatever"
        checked = send_json(csrf_client, "POST", **JSON_ACCEPT)
    assert exempt.status_code == 200
    assert checked.status_code == 403


def test_explicit_protect_cookie_name(csrf_client: Client) -> None:
    with override_settings(APPFRAMEWORK=_csrf(PROTECT_IF_COOKIE_PRESENT="app_cookie")):
        csrf_client.cookies[settings.SESSION_COOKIE_NAME] = "x"
        exempt = send_json(csrf_client, "POST")
        csrf_client.cookies["app_cookie"] = "y"
        checked = send_json(csrf_client, "POST", **JSON_ACCEPT)
    assert exempt.status_code == 200
    assert checked.status_code == 403


def test_protect_if_cookie_present_auto_is_none_without_auth_app() -> None:
    from appframework.security.csrf import _protect_cookie

    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with override_settings(INSTALLED_APPS=apps):
        assert _protect_cookie() is None
    assert _protect_cookie() == settings.SESSION_COOKIE_NAME


@pytest.mark.parametrize("method", UNSAFE)
def test_protect_if_cookie_present_none_checks_every_unsafe_request(
    csrf_client: Client, method: str
) -> None:
    with override_settings(APPFRAMEWORK=_csrf(PROTECT_IF_COOKIE_PRESENT=None)):
        refused = send_json(csrf_client, method, **JSON_ACCEPT)
        token = prime(csrf_client)
        allowed = send_json(csrf_client, method, **{HEADER: token})
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies
    assert refused.status_code == 403
    assert problem_detail(refused) == REASON_NO_COOKIE
    assert allowed.status_code == 200


class TestExemptPredicate:
    PREDICATE = "tests.security.views.exempt_hooks"

    @pytest.fixture(autouse=True)
    def _predicate(self) -> Any:
        with override_settings(APPFRAMEWORK=_csrf(app={"AUTH": {"CSRF_EXEMPT": self.PREDICATE}})):
            yield

    @pytest.mark.parametrize("method", UNSAFE)
    def test_requests_the_predicate_accepts_are_exempt(
        self, session_client: Client, method: str
    ) -> None:
        response = send_json(session_client, method, "/sec/hooks/github")
        assert response.status_code == 200

    @pytest.mark.parametrize(
        "path", ["/sec/echo", "/sec/other/github", "/sec/other/sec/hooks/x", "/posts"]
    )
    def test_requests_the_predicate_refuses_are_checked(
        self, session_client: Client, path: str
    ) -> None:
        response = send_json(session_client, "POST", path, **JSON_ACCEPT)
        assert response.status_code == 403

    def test_predicate_is_called_with_the_request(self, session_client: Client) -> None:
        from appframework.conf import app_settings

        assert app_settings.AUTH.CSRF_EXEMPT.__name__ == "exempt_hooks"


@pytest.mark.parametrize(
    "path,extra",
    [
        ("/sec/hooks/github", {}),  # the predicate's paths, without the predicate
        ("/sec/echo", {"HTTP_X_REQUESTED_WITH": "XMLHttpRequest"}),
        ("/sec/echo", {"HTTP_ORIGIN": "http://testserver", "HTTP_SEC_FETCH_SITE": "same-origin"}),
        ("/sec/echo", {"HTTP_REFERER": "http://testserver/"}),
        (
            "/sec/echo",
            {"wsgi.url_scheme": "https", "SERVER_PORT": "443", "HTTP_REFERER": "https://testserver/"},
        ),
        ("/sec/async-echo", {}),
        ("/posts", {}),
        ("/login", {}),
        ("/logout", {}),
        ("/token", {}),
    ],
)
def test_nothing_is_exempt_automatically(
    session_client: Client, path: str, extra: dict[str, str]
) -> None:
    response = send_json(session_client, "POST", path, **JSON_ACCEPT, **extra)
    assert response.status_code == 403
    assert problem_detail(response) == REASON_NO_TOKEN


@pytest.mark.parametrize("method", UNSAFE)
def test_django_csrf_exempt_decorator_is_honoured(
    session_client: Client, method: str, user: Any
) -> None:
    response = send_json(session_client, method, "/sec/exempt")
    assert response.status_code == 200
    assert response.json()["user_id"] == user.pk


@pytest.mark.parametrize("method", UNSAFE)
def test_async_view_is_checked_like_a_sync_one(
    session_client: Client, method: str, user: Any
) -> None:
    token = session_client.cookies[COOKIE].value
    refused = send_json(session_client, method, "/sec/async-echo", **JSON_ACCEPT)
    allowed = send_json(session_client, method, "/sec/async-echo", **{HEADER: token})
    assert refused.status_code == 403
    assert allowed.status_code == 200
    assert allowed.json()["user_id"] == user.pk


# -- CSRF_ENABLED=false turns it off ----------------------------------------------------
class TestDisabled:
    @pytest.fixture(autouse=True)
    def _disabled(self) -> Any:
        with override_settings(APPFRAMEWORK=_csrf(ENABLED=False)):
            yield

    def test_no_cookie_is_set(self, csrf_client: Client) -> None:
        response = csrf_client.get("/sec/echo")
        assert COOKIE not in response.cookies
        assert COOKIE not in csrf_client.cookies

    @pytest.mark.parametrize("method", UNSAFE)
    def test_no_check(self, csrf_client: Client, user: Any, method: str) -> None:
        login_client(csrf_client, user)
        response = send_json(csrf_client, method)
        assert response.status_code == 200
        assert response.json()["authenticated"] is True

    def test_wrong_token_is_not_rejected_either(self, csrf_client: Client, user: Any) -> None:
        login_client(csrf_client, user)
        csrf_client.cookies[COOKIE] = "a" * 32
        response = send_json(csrf_client, "POST", **{HEADER: "b" * 32})
        assert response.status_code == 200

    def test_csrf_token_helper_is_none(self, csrf_client: Client) -> None:
        assert csrf_client.get("/sec/token-only").json() == {"token": None}


def test_csrf_token_returns_the_cookie_token_in_a_view(csrf_client: Client) -> None:
    first = csrf_client.get("/sec/token-only")
    issued = first.cookies[COOKIE].value
    assert first.json()["token"] == issued
    again = csrf_client.get("/sec/token-only")
    assert again.json()["token"] == issued == csrf_client.cookies[COOKIE].value


def test_csrf_token_returns_the_logged_in_cookie_token(session_client: Client) -> None:
    token = session_client.cookies[COOKIE].value
    assert session_client.get("/sec/token-only").json()["token"] == token


def test_csrf_token_is_none_without_the_middleware() -> None:
    middleware = [m for m in settings.MIDDLEWARE if m != "appframework.security.CsrfMiddleware"]
    with override_settings(MIDDLEWARE=middleware):
        response = Client(enforce_csrf_checks=True).get("/sec/token-only")
    assert response.status_code == 200
    assert response.json() == {"token": None}
    assert COOKIE not in response.cookies


def test_csrf_token_is_none_outside_a_request() -> None:
    from django.http import HttpRequest

    from appframework.security import csrf_token

    assert csrf_token(HttpRequest()) is None


def test_anonymous_session_cookie_alone_triggers_the_check(csrf_client: Client) -> None:
    anonymous_session_cookie(csrf_client)
    response = send_json(csrf_client, "POST", **JSON_ACCEPT)
    assert response.status_code == 403
    token = prime(csrf_client)
    assert send_json(csrf_client, "POST", **{HEADER: token}).status_code == 200


# -- odd input: a 403, never a 500 --------------------------------------------------------
def test_client_without_accept_header_gets_problem_json(session_client: Client) -> None:
    response = send_json(session_client, "POST")
    assert response.status_code == 403
    assert problem_detail(response) == REASON_NO_TOKEN


def test_malformed_multipart_body_is_403_not_500(session_client: Client) -> None:
    response = session_client.generic(
        "POST",
        "/sec/echo",
        data=b"--broken\r\nnot a part",
        content_type="multipart/form-data; boundary=other",
        **JSON_ACCEPT,
    )
    assert response.status_code == 403


def test_multipart_without_boundary_is_403_not_500(session_client: Client) -> None:
    response = session_client.generic(
        "POST", "/sec/echo", data=b"_token=x", content_type="multipart/form-data", **JSON_ACCEPT
    )
    assert response.status_code == 403


@pytest.mark.parametrize("sent", ["\u00e9" * 32, "A" * 10_000, " " * 32, "\u00e9" * 64])
def test_odd_header_values_are_403(session_client: Client, sent: str) -> None:
    response = send_json(session_client, "POST", **{HEADER: sent}, **JSON_ACCEPT)
    assert response.status_code == 403


def test_odd_cookie_value_is_403_and_replaced(session_client: Client) -> None:
    session_client.cookies[COOKIE] = "\u00e9" * 32
    response = send_json(session_client, "POST", **{HEADER: "\u00e9" * 32}, **JSON_ACCEPT)
    assert response.status_code == 403
    fresh = prime(session_client)
    assert len(fresh) == 32 and fresh.isalnum()


def test_token_in_query_string_does_not_count(session_client: Client) -> None:
    token = session_client.cookies[COOKIE].value
    response = send_json(session_client, "POST", f"/sec/echo?_token={token}", **JSON_ACCEPT)
    assert response.status_code == 403


def test_token_in_json_body_does_not_count(session_client: Client) -> None:
    token = session_client.cookies[COOKIE].value
    response = session_client.post(
        "/sec/echo", {"_token": token}, content_type="application/json", **JSON_ACCEPT
    )
    assert response.status_code == 403
