"""Single sign-on for an app through the demo's local OpenID provider: the provider
sign-in runs in a browser, the app gets a one-use code bound to its PKCE verifier and
exchanges it for an app session. No token ever rides in a URL."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from appframework.headless.handoff import challenge_of
from tests.oauth.peer import PASSWORD, VERIFIED_USER, ProviderBrowser

from .conftest import BASE

APP_URI = "appframework-demo://signed-in"
API = "/api/auth/app/v1"


STATE = "app-state-8f2c1e"


def _start_query(challenge: str, redirect_uri: str = APP_URI, state: str = STATE) -> str:
    return urlencode(
        {
            "kind": "oauth",
            "provider": "local",
            "code_challenge": challenge,
            "redirect_uri": redirect_uri,
            "state": state,
        }
    )


def _provider_sign_in(browser: Client, challenge: str, redirect_uri: str = APP_URI) -> Any:
    """Steps 1 and 2: start, the provider's login, back to the site; returns the answer
    of the continue page (step 3's GET)."""
    start = browser.get(f"{API}/auth/provider/redirect?{_start_query(challenge, redirect_uri)}")
    assert start.status_code == 302, start.content
    to_provider = browser.get(start["Location"])
    assert to_provider.status_code == 302
    callback = ProviderBrowser().login_and_authorize(
        to_provider["Location"], VERIFIED_USER, PASSWORD, f"{BASE}/auth/local/callback"
    )
    back = browser.get(callback.removeprefix(BASE))
    assert back.status_code == 302 and back["Location"] == f"{API}/auth/provider/complete"
    page = browser.get(back["Location"])
    assert page.status_code == 200 and b"Continue to the app" in page.content
    return page


def _browser_sign_in(challenge: str, redirect_uri: str = APP_URI) -> Any:
    """Steps 1 to 3 in a browser; returns the last answer (the redirect to the app)."""
    browser = Client()
    _provider_sign_in(browser, challenge, redirect_uri)
    done = browser.post(f"{API}/auth/provider/complete")
    # The browser's own session ended: only the app gets signed in.
    assert browser.get("/api/auth/browser/v1/session").json()["status"] == "anonymous"
    return done


def _exchange(app: Client, code: str, verifier: str) -> Any:
    return app.post(
        f"{API}/auth/provider/token",
        json.dumps({"code": code, "code_verifier": verifier}),
        content_type="application/json",
    )


@pytest.fixture
def pkce() -> Iterator[tuple[str, str]]:
    verifier = secrets.token_urlsafe(48)
    yield verifier, challenge_of(verifier)


@pytest.mark.django_db(transaction=True)
def test_an_app_signs_in_through_the_local_openid_provider_with_pkce(
    demo_env: None,
    pkce: tuple[str, str],
) -> None:
    verifier, challenge = pkce
    done = _browser_sign_in(challenge)
    assert done.status_code == 302
    target = urlsplit(done["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == APP_URI
    # The app's own state comes back with the code: the app knows it asked for it.
    assert parse_qs(target.query)["state"] == [STATE]
    code = parse_qs(target.query)["code"][0]
    app = Client(HTTP_X_SESSION_TOKEN="")
    answer = _exchange(app, code, verifier)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["status"] == "authenticated" and body["user"]["email"] == "alice@example.test"
    token = answer["X-Session-Token"]
    assert token.startswith("afs_") and body["session_token"] == token
    # The app session works on the demo's DRF API, without a cookie.
    api = Client(HTTP_X_SESSION_TOKEN=token)
    assert api.get("/api/drf/posts/", HTTP_ACCEPT="application/json").status_code == 200
    assert api.get(f"{API}/session").json()["status"] == "authenticated"


@pytest.mark.django_db(transaction=True)
def test_a_code_without_its_verifier_or_used_twice_signs_nobody_in(
    demo_env: None,
    pkce: tuple[str, str],
) -> None:
    verifier, challenge = pkce
    code = parse_qs(urlsplit(_browser_sign_in(challenge)["Location"]).query)["code"][0]
    thief = Client(HTTP_X_SESSION_TOKEN="")
    stolen = _exchange(thief, code, secrets.token_urlsafe(48))
    assert (stolen.status_code, stolen.json()["code"]) == (400, "invalid_grant")
    # The code is spent by that try: the right verifier no longer helps.
    late = _exchange(Client(HTTP_X_SESSION_TOKEN=""), code, verifier)
    assert (late.status_code, late.json()["code"]) == (400, "invalid_grant")


@pytest.mark.django_db
def test_a_redirect_uri_that_is_not_an_apps_is_refused(pkce: tuple[str, str]) -> None:
    _verifier, challenge = pkce
    for uri in ("https://evil.example/steal", "appframework-demo://elsewhere", ""):
        query = _start_query(challenge, uri)
        answer = Client().get(
            f"{API}/auth/provider/redirect?{query}", HTTP_ACCEPT="application/json"
        )
        assert (answer.status_code, answer.json()["code"]) == (400, "invalid_redirect_uri")


@pytest.mark.django_db
def test_a_challenge_that_is_not_s256_is_refused() -> None:
    query = _start_query("short")
    answer = Client().get(f"{API}/auth/provider/redirect?{query}", HTTP_ACCEPT="application/json")
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_code_challenge")


@pytest.mark.django_db
def test_the_complete_page_without_a_started_sign_in_hands_out_nothing(user: Any) -> None:
    from tests.conftest import login_client

    browser = login_client(Client(), user)
    answer = browser.get(f"{API}/auth/provider/complete", HTTP_ACCEPT="application/json")
    assert (answer.status_code, answer.json()["code"]) == (400, "handoff_missing")
