"""Login-session CSRF against DRF and django-ninja views, with their own session auth
(as an existing project has it) and with the suite's classes.

DRF and ninja views are ``@csrf_exempt`` and check CSRF in their session auth. The
suite's middleware used to mark every exempt request as verified
(``csrf_processing_done``), which switched those checks off: a cross-site POST with no
token, a wrong token or a foreign ``Origin`` was answered 201.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, Client

from appframework.security.tokens import mint_token
from tests.conftest import csrf_cookie, login_client

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hardening.api_urls")]

COOKIE = "csrf_token"
WRITES = [
    "/drf/stock",
    "/drf/suite",
    "/ninja/stock/write",
    "/ninja/suite/write",
    "/ninja/stock/awrite",
    "/ninja/suite/awrite",
]
SUITE_WRITES = [path for path in WRITES if "suite" in path]


def _signed_in(user: Any) -> tuple[Client, str]:
    """A browser signed in as ``user``, and the CSRF token its session was given."""
    client = login_client(Client(enforce_csrf_checks=True), user)
    return client, csrf_cookie(client)


def _post(client: Client, path: str, **headers: Any) -> Any:
    return client.post(path, b"{}", content_type="application/json", **headers)


@pytest.mark.parametrize("path", WRITES)
def test_session_post_without_a_token_is_refused(user: Any, path: str) -> None:
    client, _ = _signed_in(user)
    response = _post(client, path)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
@pytest.mark.parametrize("header", ["HTTP_X_CSRFTOKEN", "HTTP_X_CSRF_TOKEN"])
def test_session_post_with_a_wrong_token_is_refused(user: Any, path: str, header: str) -> None:
    client, _ = _signed_in(user)
    response = _post(client, path, **{header: "A" * 32})
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
def test_session_post_from_a_foreign_origin_is_refused_even_with_the_token(
    user: Any, path: str
) -> None:
    client, token = _signed_in(user)
    response = _post(client, path, HTTP_X_CSRFTOKEN=token, HTTP_ORIGIN="https://evil.example")
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
def test_token_of_another_session_in_the_header_is_refused(
    user: Any, other_user: Any, path: str
) -> None:
    client, _ = _signed_in(user)
    _, attackers_token = _signed_in(other_user)
    response = _post(client, path, HTTP_X_CSRFTOKEN=attackers_token)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
def test_planted_cookie_and_header_pair_of_another_session_is_refused(
    user: Any, other_user: Any, path: str
) -> None:
    # Cookie tossing: a sibling subdomain sets the attacker's own (valid, matching)
    # cookie and header. Django's check only compares the two; the suite's token is
    # bound to the session, and a cookie minted for another one is not accepted.
    client, _ = _signed_in(user)
    _, attackers_token = _signed_in(other_user)
    client.cookies[COOKIE] = attackers_token
    response = _post(client, path, HTTP_X_CSRFTOKEN=attackers_token)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
def test_anonymous_token_planted_before_login_is_refused(user: Any, path: str) -> None:
    client, _ = _signed_in(user)
    pre_login = mint_token("")
    client.cookies[COOKIE] = pre_login
    response = _post(client, path, HTTP_X_CSRFTOKEN=pre_login)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("path", WRITES)
def test_session_post_with_the_right_token_in_djangos_header_succeeds(user: Any, path: str) -> None:
    client, token = _signed_in(user)
    response = _post(client, path, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201, response.content
    assert response.json() == {"written_by": user.email}


@pytest.mark.parametrize("path", SUITE_WRITES)
def test_suite_classes_accept_the_suites_header_too(user: Any, path: str) -> None:
    client, token = _signed_in(user)
    response = _post(client, path, HTTP_X_CSRF_TOKEN=token)
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("path", SUITE_WRITES)
def test_suite_classes_answer_the_csrf_reason_as_a_problem(user: Any, path: str) -> None:
    client, token = _signed_in(user)
    missing = _post(client, path, HTTP_ACCEPT="application/json")
    foreign = _post(
        client,
        path,
        HTTP_X_CSRF_TOKEN=token,
        HTTP_ORIGIN="https://evil.example",
        HTTP_ACCEPT="application/json",
    )
    assert missing["Content-Type"].startswith("application/problem+json")
    assert missing.json()["code"] == "csrf_token_missing"
    assert foreign.json()["code"] == "csrf_origin_mismatch"


@pytest.mark.parametrize("path", ["/drf/stock", "/ninja/stock/write"])
def test_djangos_checks_still_run_with_the_suites_csrf_switched_off(
    user: Any, path: str, settings: Any
) -> None:
    # CSRF["ENABLED"] = False turns the suite's middleware off; it must not turn off
    # the checks DRF and ninja make themselves.
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app.setdefault("CSRF", {})["ENABLED"] = False
    settings.APPFRAMEWORK = app
    client = login_client(Client(enforce_csrf_checks=True), user)
    assert _post(client, path).status_code == 403


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "path", ["/ninja/stock/awrite", "/ninja/suite/awrite", "/ninja/suite/write"]
)
async def test_under_asgi_a_cross_site_post_is_refused_and_the_right_token_passes(
    user: Any, path: str
) -> None:
    from asgiref.sync import sync_to_async

    sync_client, token = await sync_to_async(_signed_in)(user)
    client = AsyncClient(enforce_csrf_checks=True)
    client.cookies = sync_client.cookies
    bare = await client.post(path, b"{}", content_type="application/json")
    foreign = await client.post(
        path,
        b"{}",
        content_type="application/json",
        headers={"X-CSRFToken": token, "Origin": "https://evil.example"},
    )
    good = await client.post(
        path, b"{}", content_type="application/json", headers={"X-CSRFToken": token}
    )
    assert (bare.status_code, foreign.status_code, good.status_code) == (403, 403, 201)


def test_bearer_requests_need_no_csrf_token(user: Any) -> None:
    from appframework.auth import TokenManager

    token = TokenManager().issue(user)
    client = Client(enforce_csrf_checks=True)
    response = _post(client, "/drf/suite", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 201
    assert (
        _post(client, "/ninja/suite/write", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 201
    )


def test_a_bearer_header_does_not_lend_the_session_to_a_cross_site_post(user: Any) -> None:
    # Authorization makes a request CSRF-exempt, so it must never be session-authenticated
    # too: a garbage bearer header next to the victim's cookie gets no user.
    client, _ = _signed_in(user)
    for path in ("/drf/suite", "/drf/stock", "/ninja/suite/write"):
        response = _post(client, path, HTTP_AUTHORIZATION="Bearer not-a-token")
        assert response.status_code in (401, 403), (path, response.content)
