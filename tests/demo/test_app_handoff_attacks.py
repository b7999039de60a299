"""Attacks on the app's single sign-on hand-off (``app/v1/auth/provider/...``).

A hand-off hands an app a session with a fresh proof of authentication, so it must come
from a sign-in at the identity provider made inside it, never from the session the
browser (or a stolen app token) already has; and no navigation alone, cross-site
included, may hand out a code or sign anyone out.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from appframework.auth.sso import SSO_SIGN_IN_SESSION_KEY
from appframework.headless.handoff import challenge_of
from tests.conftest import age_proof, login_client

from .test_demo_app_sso import API, APP_URI, STATE, _exchange, _provider_sign_in, _start_query

pytestmark = pytest.mark.django_db


def _challenge() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, challenge_of(verifier)


def _status(client: Client, api: str = "/api/auth/browser/v1") -> str:
    return str(client.get(f"{api}/session").json()["status"])


def _no_code(answer: Any) -> None:
    assert "code=" not in answer.get("Location", ""), answer.get("Location")


def test_a_stolen_stale_cookie_gets_no_code_and_no_fresh_proof_from_the_handoff(user: Any) -> None:
    thief = login_client(Client(), user)
    age_proof(thief)
    _verifier, challenge = _challenge()
    start = thief.get(f"{API}/auth/provider/redirect?{_start_query(challenge)}")
    assert start.status_code == 302 and "code=" not in start["Location"]
    for answer in (
        thief.get(f"{API}/auth/provider/complete", HTTP_ACCEPT="application/json"),
        thief.post(f"{API}/auth/provider/complete", HTTP_ACCEPT="application/json"),
    ):
        assert (answer.status_code, answer.json()["code"]) == (401, "handoff_not_signed_in")
        _no_code(answer)
    # The cookie's own session is untouched (and still without a recent proof).
    assert _status(thief) == "authenticated"


def test_a_stolen_app_session_token_gets_no_code_from_the_handoff(user: Any, password: str) -> None:
    app = Client(HTTP_X_SESSION_TOKEN="")
    login = app.post(
        f"{API}/auth/login",
        json.dumps({"email": user.email, "password": password}),
        content_type="application/json",
    )
    assert login.status_code == 200, login.content
    thief = Client(HTTP_X_SESSION_TOKEN=login["X-Session-Token"])
    _verifier, challenge = _challenge()
    thief.get(f"{API}/auth/provider/redirect?{_start_query(challenge)}")
    answer = thief.post(f"{API}/auth/provider/complete", HTTP_ACCEPT="application/json")
    assert (answer.status_code, answer.json()["code"]) == (401, "handoff_not_signed_in")
    _no_code(answer)


def test_a_provider_sign_in_from_before_the_handoff_does_not_count(user: Any) -> None:
    browser = login_client(Client(), user)
    session = browser.session
    session[SSO_SIGN_IN_SESSION_KEY] = {"uid": str(user.pk), "at": time.time() - 5}
    session.save()
    _verifier, challenge = _challenge()
    browser.get(f"{API}/auth/provider/redirect?{_start_query(challenge)}")
    answer = browser.post(f"{API}/auth/provider/complete", HTTP_ACCEPT="application/json")
    assert (answer.status_code, answer.json()["code"]) == (401, "handoff_not_signed_in")


def test_cross_site_navigations_through_the_handoff_neither_hand_out_a_code_nor_sign_out(
    user: Any,
) -> None:
    victim = login_client(Client(), user)
    _verifier, attackers_challenge = _challenge()
    cross_site = {"HTTP_SEC_FETCH_SITE": "cross-site", "HTTP_REFERER": "https://evil.example/"}
    start = victim.get(
        f"{API}/auth/provider/redirect?{_start_query(attackers_challenge)}", **cross_site
    )
    assert start.status_code == 302
    complete = victim.get(f"{API}/auth/provider/complete", **cross_site)
    assert complete.status_code == 401
    _no_code(complete)
    assert _status(victim) == "authenticated"


def test_the_handoff_needs_the_apps_state() -> None:
    _verifier, challenge = _challenge()
    for state in (None, "short", "has space in it", "x" * 513):
        query = {
            "kind": "oauth",
            "provider": "local",
            "code_challenge": challenge,
            "redirect_uri": APP_URI,
        }
        if state is not None:
            query["state"] = state
        answer = Client().get(
            f"{API}/auth/provider/redirect?{urlencode(query)}", HTTP_ACCEPT="application/json"
        )
        assert (answer.status_code, answer.json()["code"]) == (400, "invalid_state")


@pytest.mark.django_db(transaction=True)
def test_after_the_provider_sign_in_only_a_same_site_post_hands_out_the_code(
    demo_env: None,
) -> None:
    verifier, challenge = _challenge()
    browser = Client(enforce_csrf_checks=True)
    page = _provider_sign_in(browser, challenge)
    _no_code(page)
    # A form another site posts (no CSRF token): refused, nothing handed out.
    forged = browser.post(f"{API}/auth/provider/complete", HTTP_ORIGIN="https://evil.example")
    assert forged.status_code == 403
    _no_code(forged)
    token = browser.cookies["csrf_token"].value
    done = browser.post(f"{API}/auth/provider/complete", {"_token": token})
    assert done.status_code == 302, done.content
    query = parse_qs(urlsplit(done["Location"]).query)
    assert query["state"] == [STATE]
    app = Client(HTTP_X_SESSION_TOKEN="")
    answer = _exchange(app, query["code"][0], verifier)
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "authenticated"
