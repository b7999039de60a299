"""``csrf_protect_login`` (login CSRF) and the public decision steps of ``CsrfMiddleware``.

Login CSRF: a third-party page auto-submits a form to the site's login view with the
*attacker's* credentials; the visitor is then signed in as the attacker and whatever
they type lands in the attacker's account. The visitor has no session cookie yet, so the
usual "no session cookie, nothing to forge" exemption would let it through; a view
marked ``csrf_protect_login`` is checked anyway.

The decision steps (``is_exempt``, ``check_origin``, ``check_token``, ``reject``) are
overridden by subclasses defined in this module, installed with
``override_settings(MIDDLEWARE=[...])`` under their import paths
``tests.security.test_csrf_protect_login.<ClassName>``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import AsyncClient, Client, override_settings

from appframework.security import CsrfMiddleware, csrf_protect_login
from appframework.security.csrf import CsrfFailure
from tests.conftest import login_client

from . import login_csrf_urls
from .helpers import (
    COOKIE,
    HEADER,
    HTML_ACCEPT,
    JSON_ACCEPT,
    anonymous_session_cookie,
    prime,
    send_form,
    send_json,
)

pytestmark = [pytest.mark.urls("tests.security.login_csrf_urls")]

EVIL = "https://evil.example"
MARKED = ["/sec/login-marked", "/sec/async-login-marked"]
UNMARKED = ["/sec/unmarked", "/sec/async-unmarked"]
THIS_MODULE = __name__


def failure_code(response: Any) -> str:
    assert response.status_code == 403, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    return str(response.json()["code"])


def forged_login(client: Client, path: str, **extra: Any) -> Any:
    """What a third-party page's auto-submitting form sends: the attacker's credentials,
    no token (it cannot read the site's cookie), cross-site."""
    fields = {"email": "attacker@example.com", "password": "attacker's password"}
    return send_form(client, "POST", fields, path, HTTP_SEC_FETCH_SITE="cross-site", **extra)


# -- the marker --------------------------------------------------------------------------------------
def test_csrf_protect_login_marks_and_returns_the_same_view() -> None:
    def view(request: HttpRequest) -> HttpResponse:
        return HttpResponse()

    assert csrf_protect_login(view) is view
    assert view.csrf_protect_login is True  # type: ignore[attr-defined]


def test_csrf_protect_login_keeps_an_async_view_async() -> None:
    assert inspect.iscoroutinefunction(login_csrf_urls.async_marked_login)
    assert login_csrf_urls.async_marked_login.csrf_protect_login is True  # type: ignore[attr-defined]


# -- login CSRF on a marked view ---------------------------------------------------------------------
@pytest.mark.parametrize("path", MARKED)
def test_cross_site_post_without_cookies_or_token_to_a_marked_view_is_403(
    csrf_client: Client, path: str
) -> None:
    assert not csrf_client.cookies
    response = forged_login(csrf_client, path, **JSON_ACCEPT)
    assert failure_code(response) == "csrf_cookie_missing"


@pytest.mark.parametrize("path", MARKED)
def test_cross_site_post_with_origin_to_a_marked_view_is_403(
    csrf_client: Client, path: str
) -> None:
    response = forged_login(csrf_client, path, HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert failure_code(response) == "csrf_origin_mismatch"


@pytest.mark.parametrize("path", MARKED)
def test_forged_login_from_a_browser_gets_the_html_failure_page(
    csrf_client: Client, path: str
) -> None:
    response = forged_login(csrf_client, path, HTTP_ORIGIN=EVIL, **HTML_ACCEPT)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("path", MARKED)
def test_forged_login_with_a_guessed_token_but_no_cookie_is_403(
    csrf_client: Client, path: str
) -> None:
    fields = {"email": "attacker@example.com", "password": "x", "_token": "a" * 32}
    response = send_form(csrf_client, "POST", fields, path, **JSON_ACCEPT)
    assert failure_code(response) == "csrf_cookie_missing"


@pytest.mark.parametrize("path", MARKED)
def test_get_then_post_with_cookie_and_form_token_passes(csrf_client: Client, path: str) -> None:
    token = prime(csrf_client)
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies
    fields = {"email": "alice@example.com", "password": "x", "_token": token}
    response = send_form(csrf_client, "POST", fields, path)
    assert response.status_code == 200
    assert response.json() == {"method": "POST", "email": "alice@example.com"}


@pytest.mark.parametrize("path", MARKED)
def test_get_then_post_with_cookie_and_header_token_passes(csrf_client: Client, path: str) -> None:
    token = prime(csrf_client)
    assert send_json(csrf_client, "POST", path, **{HEADER: token}).status_code == 200


@pytest.mark.parametrize("path", MARKED)
def test_marked_view_is_origin_checked_without_a_session_cookie(
    csrf_client: Client, path: str
) -> None:
    token = prime(csrf_client)
    response = send_json(csrf_client, "POST", path, **{HEADER: token}, HTTP_ORIGIN=EVIL)
    assert failure_code(response) == "csrf_origin_mismatch"


@pytest.mark.parametrize("path", MARKED)
def test_marked_view_with_a_session_cookie_is_checked_as_usual(
    csrf_client: Client, path: str
) -> None:
    anonymous_session_cookie(csrf_client)
    token = prime(csrf_client)
    refused = send_json(csrf_client, "POST", path, **JSON_ACCEPT)
    allowed = send_json(csrf_client, "POST", path, **{HEADER: token})
    assert failure_code(refused) == "csrf_token_missing"
    assert allowed.status_code == 200


@pytest.mark.parametrize("path", MARKED)
def test_marked_view_with_authorization_header_is_still_checked(
    csrf_client: Client, path: str
) -> None:
    # A view that signs a browser in sets the browser's cookie whatever else the request
    # carries: an Authorization header (even Basic junk) does not exempt it.
    response = send_json(csrf_client, "POST", path, HTTP_AUTHORIZATION="Bearer x", **JSON_ACCEPT)
    assert failure_code(response) == "csrf_cookie_missing"


@pytest.mark.parametrize("path", UNMARKED)
def test_unmarked_view_without_session_cookie_stays_exempt(csrf_client: Client, path: str) -> None:
    response = forged_login(csrf_client, path, HTTP_ORIGIN=EVIL)
    assert response.status_code == 200


@pytest.mark.parametrize("path", UNMARKED)
def test_unmarked_view_with_session_cookie_is_checked(csrf_client: Client, path: str) -> None:
    anonymous_session_cookie(csrf_client)
    prime(csrf_client)
    assert failure_code(forged_login(csrf_client, path, **JSON_ACCEPT)) == "csrf_token_missing"


async def test_marked_async_view_in_an_async_chain_refuses_a_forged_login() -> None:
    client = AsyncClient(enforce_csrf_checks=True)
    forged = await client.post(
        "/sec/async-login-marked",
        {"email": "attacker@example.com", "password": "x"},
        headers={"Accept": "application/json"},
    )
    assert forged.status_code == 403
    assert forged.json()["code"] == "csrf_cookie_missing"
    assert (await client.get("/sec/async-token-only")).status_code == 200
    token = client.cookies[COOKIE].value
    genuine = await client.post(
        "/sec/async-login-marked", {"email": "alice@example.com", "_token": token}
    )
    assert genuine.status_code == 200
    unmarked = await AsyncClient(enforce_csrf_checks=True).post(
        "/sec/async-unmarked", {"email": "attacker@example.com"}
    )
    assert unmarked.status_code == 200


# -- the demo's /login -------------------------------------------------------------------------------
def test_demo_login_refuses_a_cross_site_login_with_the_attackers_credentials(
    csrf_client: Client, other_user: Any, password: str
) -> None:
    fields = {"email": other_user.email, "password": password}
    response = send_form(
        csrf_client, "POST", fields, "/login", HTTP_ORIGIN=EVIL, HTTP_SEC_FETCH_SITE="cross-site"
    )
    assert response.status_code == 403
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies


def test_demo_login_without_cookies_or_token_is_403_even_without_origin(
    csrf_client: Client, other_user: Any, password: str
) -> None:
    fields = {"email": other_user.email, "password": password}
    response = send_form(csrf_client, "POST", fields, "/login", **JSON_ACCEPT)
    assert failure_code(response) == "csrf_cookie_missing"
    assert settings.SESSION_COOKIE_NAME not in csrf_client.cookies


def test_demo_login_get_then_post_with_cookie_and_token_logs_in(
    csrf_client: Client, user: Any, password: str
) -> None:
    token = prime(csrf_client, "/login")
    response = csrf_client.post(
        "/login", {"email": user.email, "password": password, "_token": token}
    )
    assert response.status_code == 302
    assert settings.SESSION_COOKIE_NAME in csrf_client.cookies


# -- the decision steps, overridden in subclasses ----------------------------------------------------
class HooksExemptCsrfMiddleware(CsrfMiddleware):
    """Loosens ``is_exempt``: webhook receivers under /sec/hooks/ are never checked."""

    def is_exempt(self, request: HttpRequest, callback: Callable[..., Any]) -> bool:
        return request.path.startswith("/sec/hooks/") or super().is_exempt(request, callback)


class NeverExemptCsrfMiddleware(CsrfMiddleware):
    """Tightens ``is_exempt``: every unsafe request is checked, cookie or not."""

    def is_exempt(self, request: HttpRequest, callback: Callable[..., Any]) -> bool:
        return False


class PartnerOriginCsrfMiddleware(CsrfMiddleware):
    """Loosens ``check_origin`` for one partner origin."""

    def check_origin(self, request: HttpRequest) -> CsrfFailure | None:
        if request.headers.get("Origin") == "https://partner.example":
            return None
        return super().check_origin(request)


class RequireOriginCsrfMiddleware(CsrfMiddleware):
    """Tightens ``check_origin``: an unsafe request must name its origin, even on HTTP."""

    def check_origin(self, request: HttpRequest) -> CsrfFailure | None:
        if "HTTP_ORIGIN" not in request.META:
            return CsrfFailure("An Origin header is required.", code="csrf_origin_required")
        return super().check_origin(request)


class HeaderOnlyCsrfMiddleware(CsrfMiddleware):
    """Tightens ``check_token``: the form field does not count, only the header."""

    def check_token(self, request: HttpRequest) -> CsrfFailure | None:
        failure = super().check_token(request)
        if failure is None and HEADER not in request.META:
            return CsrfFailure("Send the token in X-CSRF-Token.", code="csrf_header_required")
        return failure


class PageExpiredCsrfMiddleware(CsrfMiddleware):
    """Replaces ``reject``: 419 with the failure's code, for every client."""

    def reject(self, request: HttpRequest, failure: CsrfFailure) -> HttpResponse:
        return JsonResponse({"code": failure.code, "detail": str(failure.detail)}, status=419)


@contextmanager
def csrf_middleware(cls: type[CsrfMiddleware]) -> Iterator[None]:
    """``MIDDLEWARE`` with ``cls`` (by its import path) in place of ``CsrfMiddleware``."""
    dotted = f"{THIS_MODULE}.{cls.__name__}"
    stack = [
        dotted if entry == "appframework.security.CsrfMiddleware" else entry
        for entry in settings.MIDDLEWARE
    ]
    assert dotted in stack
    with override_settings(MIDDLEWARE=stack):
        yield


def session_client() -> Client:
    """Made inside ``csrf_middleware()``: the client loads the middleware on first use."""
    client = Client(enforce_csrf_checks=True)
    anonymous_session_cookie(client)
    prime(client)
    return client


def test_middleware_subclasses_are_importable_by_the_path_given() -> None:
    from django.utils.module_loading import import_string

    path = "tests.security.test_csrf_protect_login.HooksExemptCsrfMiddleware"
    assert import_string(path) is HooksExemptCsrfMiddleware


def test_overridden_is_exempt_can_exempt_more() -> None:
    control = session_client()
    assert failure_code(send_json(control, "POST", "/sec/hooks/x", **JSON_ACCEPT)) == (
        "csrf_token_missing"
    )
    with csrf_middleware(HooksExemptCsrfMiddleware):
        client = session_client()
        hook = send_json(client, "POST", "/sec/hooks/x", HTTP_ORIGIN=EVIL)
        other = send_json(client, "POST", "/sec/echo", **JSON_ACCEPT)
    assert hook.status_code == 200
    assert failure_code(other) == "csrf_token_missing"


def test_overridden_is_exempt_can_exempt_less() -> None:
    assert send_json(Client(enforce_csrf_checks=True), "POST", "/sec/echo").status_code == 200
    with csrf_middleware(NeverExemptCsrfMiddleware):
        no_cookie = send_json(Client(enforce_csrf_checks=True), "POST", "/sec/echo", **JSON_ACCEPT)
        bearer = send_json(
            Client(enforce_csrf_checks=True),
            "POST",
            "/sec/echo",
            HTTP_AUTHORIZATION="Bearer x",
            **JSON_ACCEPT,
        )
    assert failure_code(no_cookie) == "csrf_cookie_missing"
    assert failure_code(bearer) == "csrf_cookie_missing"


async def test_overridden_is_exempt_applies_in_an_async_chain() -> None:
    with csrf_middleware(NeverExemptCsrfMiddleware):
        response = await AsyncClient(enforce_csrf_checks=True).post(
            "/sec/async-plain", b"{}", content_type="application/json"
        )
    assert response.status_code == 403
    assert response.json()["code"] == "csrf_cookie_missing"


def test_overridden_check_origin_can_trust_a_partner() -> None:
    control = session_client()
    token = control.cookies[COOKIE].value
    partner = {HEADER: token, "HTTP_ORIGIN": "https://partner.example"}
    assert failure_code(send_json(control, "POST", **partner, **JSON_ACCEPT)) == (
        "csrf_origin_mismatch"
    )
    with csrf_middleware(PartnerOriginCsrfMiddleware):
        client = session_client()
        token = client.cookies[COOKIE].value
        allowed = send_json(
            client, "POST", **{HEADER: token}, HTTP_ORIGIN="https://partner.example"
        )
        refused = send_json(client, "POST", **{HEADER: token}, HTTP_ORIGIN=EVIL, **JSON_ACCEPT)
    assert allowed.status_code == 200
    assert failure_code(refused) == "csrf_origin_mismatch"


def test_overridden_check_origin_can_require_an_origin() -> None:
    with csrf_middleware(RequireOriginCsrfMiddleware):
        client = session_client()
        token = client.cookies[COOKIE].value
        missing = send_json(client, "POST", **{HEADER: token}, **JSON_ACCEPT)
        present = send_json(client, "POST", **{HEADER: token}, HTTP_ORIGIN="http://testserver")
    assert failure_code(missing) == "csrf_origin_required"
    assert missing.json()["detail"] == "An Origin header is required."
    assert present.status_code == 200


def test_overridden_check_token_changes_what_counts_as_a_token() -> None:
    with csrf_middleware(HeaderOnlyCsrfMiddleware):
        client = session_client()
        token = client.cookies[COOKIE].value
        form = send_form(client, "POST", {"_token": token}, **JSON_ACCEPT)
        header = send_json(client, "POST", **{HEADER: token})
        missing = send_json(client, "POST", **JSON_ACCEPT)
    assert failure_code(form) == "csrf_header_required"
    assert header.status_code == 200
    assert failure_code(missing) == "csrf_token_missing"


@pytest.mark.parametrize("accept", [JSON_ACCEPT, HTML_ACCEPT], ids=["json", "html"])
def test_overridden_reject_shapes_the_refusal(accept: dict[str, str]) -> None:
    with csrf_middleware(PageExpiredCsrfMiddleware):
        client = session_client()
        refused = send_json(client, "POST", **accept)
        allowed = send_json(client, "POST", **{HEADER: client.cookies[COOKIE].value})
    assert refused.status_code == 419
    assert refused.json()["code"] == "csrf_token_missing"
    assert allowed.status_code == 200


def test_overridden_steps_apply_to_marked_login_views(user: Any) -> None:
    with csrf_middleware(PageExpiredCsrfMiddleware):
        forged = forged_login(Client(enforce_csrf_checks=True), "/sec/login-marked")
        logged_in = login_client(Client(enforce_csrf_checks=True), user)
        checked = send_json(logged_in, "POST", "/sec/echo")
    assert forged.status_code == 419
    assert forged.json()["code"] == "csrf_cookie_missing"
    assert checked.status_code == 419
