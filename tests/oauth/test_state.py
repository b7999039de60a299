"""The one-use ``state``: one test per row of the callback table in docs/oauth.md
("The flow"), in the order the callback is checked.

Every refused callback is refused before anything is sent to the provider:
``exchange_calls`` records each call of ``ProviderClient.exchange_code`` (the real one
still runs), and stays empty.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from appframework.oauth import OAuthProvider
from appframework.oauth import state as state_module
from appframework.oauth.state import MAX_PENDING, SESSION_KEY
from appframework.security.tokens import session_cookie_name
from tests.oauth.conftest import (
    JSON,
    OTHER_REDIRECT_URI,
    authorize_at_provider,
    local_path,
    oauth_settings,
    problem,
    query_of,
    session_user_id,
    start,
)

pytestmark = pytest.mark.django_db


def callback(
    client: Client, provider: str = "local", *, issuer: str | None = None, **params: str
) -> Any:
    """GET /auth/<provider>/callback with ``params`` (and ``iss`` when given)."""
    if issuer is not None:
        params["iss"] = issuer
    return client.get(f"/auth/{provider}/callback?{urlencode(params)}", **JSON)


def pending(client: Client) -> dict[str, Any]:
    stored: dict[str, Any] = client.session.get(SESSION_KEY, {})
    return stored


def cookie_copy(client: Client) -> Client:
    """Another browser holding a copy of ``client``'s session cookie as it is now."""
    copy = Client()
    copy.cookies[session_cookie_name()] = client.cookies[session_cookie_name()].value
    return copy


@pytest.fixture
def two_providers(local_provider: OAuthProvider) -> Iterator[OAuthProvider]:
    """ "local" and "other", both at the local provider."""
    other = dataclasses.replace(local_provider, name="other", redirect_uri=OTHER_REDIRECT_URI)
    with oauth_settings([local_provider, other]):
        yield other


# -- redirect ---------------------------------------------------------------------------------
def test_redirect_stores_a_new_state_for_the_provider_in_the_session(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()
    before = time.time()

    first = query_of(start(client, next="/posts"))["state"]
    second = query_of(start(client))["state"]

    assert first != second
    stored = pending(client)
    assert list(stored) == [first, second]
    assert stored[first]["p"] == "local"
    assert stored[first]["n"] == "/posts"
    assert stored[second]["n"] is None
    assert before <= stored[first]["t"] <= time.time()


# -- success ----------------------------------------------------------------------------------
def test_callback_with_the_stored_state_succeeds_and_removes_the_state(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    authorize_url = start(client, next="/posts")
    state = query_of(authorize_url)["state"]
    url = authorize_at_provider(authorize_url)
    assert state in pending(client)

    response = client.get(local_path(url), **JSON)

    assert response.status_code == 302
    assert response["Location"] == "/posts"
    assert session_user_id(client) is not None
    assert state not in pending(client)
    assert len(exchange_calls) == 1


# -- refusals, in the order of the table ------------------------------------------------------
def test_callback_without_state_is_403_state_missing(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    start(client)

    response = callback(client, code="a-code", issuer=oauth_local.issuer)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_missing"
    assert exchange_calls == []


def test_callback_with_a_state_this_session_did_not_store_is_403_state_mismatch(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    stored = query_of(start(client))["state"]

    response = callback(client, state=stored[:-2] + "xx", code="c", issuer=oauth_local.issuer)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert exchange_calls == []
    assert stored in pending(client)  # the sign-in that was started stays valid


def test_a_state_stored_for_another_provider_is_403_state_mismatch(
    two_providers: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    authorize_url = start(client, "other")
    # The user really signs in at the provider, so the code is valid: only the provider
    # name of the callback is wrong.
    url = authorize_at_provider(authorize_url, redirect_uri=OTHER_REDIRECT_URI)

    response = client.get(local_path(url).replace("/auth/other/", "/auth/local/"), **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert exchange_calls == []
    assert session_user_id(client) is None


@pytest.mark.parametrize(("age", "accepted"), [(-1.0, True), (0.0, False), (3600.0, False)])
def test_an_expired_state_is_403_state_mismatch(
    oauth_local: OAuthProvider,
    exchange_calls: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    age: float,
    accepted: bool,
) -> None:
    """``age``: seconds past the state's STATE_TTL (600) when the callback arrives."""
    client = Client()
    state = query_of(start(client))["state"]
    started = pending(client)[state]["t"]
    monkeypatch.setattr(state_module, "time", SimpleNamespace(time=lambda: started + 600 + age))

    # No code: a state still valid gets as far as the code check (400).
    response = callback(client, state=state, issuer=oauth_local.issuer)

    if accepted:
        assert response.status_code == 400
        assert problem(response)["code"] == "oauth_code_missing"
    else:
        assert response.status_code == 403
        assert problem(response)["code"] == "oauth_state_mismatch"
    assert exchange_calls == []


def test_a_shorter_state_ttl_setting_applies(
    local_provider: OAuthProvider,
    exchange_calls: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = Client()
    with oauth_settings([local_provider], STATE_TTL=5):
        state = query_of(start(client))["state"]
        started = pending(client)[state]["t"]
        monkeypatch.setattr(state_module, "time", SimpleNamespace(time=lambda: started + 5))

        response = callback(client, state=state, code="c", issuer=local_provider.issuer)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert exchange_calls == []


def test_replaying_the_same_callback_url_is_403_state_replayed(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    url = local_path(authorize_at_provider(start(client)))
    assert client.get(url, **JSON).status_code == 302

    replay = client.get(url, **JSON)

    assert replay.status_code == 403
    assert problem(replay)["code"] == "oauth_state_replayed"
    assert len(exchange_calls) == 1


def test_replaying_with_a_copy_of_the_session_cookie_from_before_is_403_state_replayed(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    url = local_path(authorize_at_provider(start(client)))
    kept = cookie_copy(client)  # the cookie still holds the unspent state
    assert client.get(url, **JSON).status_code == 302

    replay = kept.get(url, **JSON)

    assert replay.status_code == 403
    assert problem(replay)["code"] == "oauth_state_replayed"
    assert session_user_id(kept) is None
    assert len(exchange_calls) == 1


def test_issuer_mismatch_comes_after_the_state_check(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    # The state is checked (and spent) first: a foreign state with a wrong iss is a
    # state error, a good state with a wrong iss an issuer error.
    client = Client()
    state = query_of(start(client))["state"]

    foreign = callback(client, state="not-a-state", code="c", issuer="http://evil.example")
    wrong_iss = callback(client, state=state, code="c", issuer="http://evil.example")

    assert (foreign.status_code, problem(foreign)["code"]) == (403, "oauth_state_mismatch")
    assert (wrong_iss.status_code, problem(wrong_iss)["code"]) == (403, "oauth_issuer_mismatch")
    assert exchange_calls == []


def test_an_error_from_the_provider_is_400_oauth_error_and_spends_the_state(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    state = query_of(start(client))["state"]
    kept = cookie_copy(client)

    response = callback(
        client,
        state=state,
        issuer=oauth_local.issuer,
        error="access_denied",
        error_description="The resource owner denied the request.",
    )

    assert response.status_code == 400
    document = problem(response)
    assert document["code"] == "oauth_error"
    assert "(access_denied)" in document["detail"]
    assert "The resource owner denied the request." in document["detail"]
    assert state not in pending(client)
    again = callback(kept, state=state, code="c", issuer=oauth_local.issuer)
    assert again.status_code == 403
    assert problem(again)["code"] == "oauth_state_replayed"
    assert exchange_calls == []


def test_the_provider_error_text_is_shown_without_markup_or_control_characters(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()
    state = query_of(start(client))["state"]

    response = client.get(
        "/auth/local/callback?"
        + urlencode(
            {
                "state": state,
                "iss": oauth_local.issuer,
                "error": "access_denied",
                "error_description": "<script>alert(1)</script>\r\nX-Injected: 1",
            }
        ),
        HTTP_ACCEPT="text/html",
    )

    assert response.status_code == 400
    body = response.content.decode()
    assert "access_denied" in body
    assert "<script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;X-Injected: 1" in body


def test_a_valid_state_without_code_is_400_code_missing(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    state = query_of(start(client))["state"]

    response = callback(client, state=state, issuer=oauth_local.issuer)

    assert response.status_code == 400
    assert problem(response)["code"] == "oauth_code_missing"
    assert exchange_calls == []


@pytest.mark.parametrize("route", ["redirect", "callback?state=s&code=c"])
def test_an_unknown_provider_is_404_on_both_routes(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]], route: str
) -> None:
    client = Client()

    response = client.get(f"/auth/nope/{route}", **JSON)

    assert response.status_code == 404
    document = problem(response)
    assert document["code"] == "oauth_unknown_provider"
    assert "nope" in document["detail"]
    assert pending(client) == {}
    assert exchange_calls == []


def test_at_most_ten_pending_states_are_kept_the_oldest_dropped(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    states = [query_of(start(client))["state"] for _ in range(MAX_PENDING + 1)]

    assert MAX_PENDING == 10
    assert list(pending(client)) == states[1:]
    oldest = callback(client, state=states[0], issuer=oauth_local.issuer)
    assert oldest.status_code == 403
    assert problem(oldest)["code"] == "oauth_state_mismatch"
    # The second-oldest is still valid: it gets as far as the code check.
    second = callback(client, state=states[1], issuer=oauth_local.issuer)
    assert second.status_code == 400
    assert problem(second)["code"] == "oauth_code_missing"
    assert exchange_calls == []


def test_ten_pending_sign_ins_with_their_verifiers_and_nonces_fit_in_the_session_cookie(
    oauth_local: OAuthProvider,
) -> None:
    # With the signed-cookie session every pending entry (state, verifier, nonce) rides
    # in the cookie, and browsers drop a cookie over 4096 bytes: the sign-in would then
    # fail with a state mismatch.
    client = Client()
    for _ in range(MAX_PENDING + 1):
        start(client, next="/posts?page=2&order=newest")

    entries = list(pending(client).values())
    assert len(entries) == MAX_PENDING
    assert all("v" in entry and "o" in entry for entry in entries)
    cookie = client.cookies[session_cookie_name()]
    assert len(cookie.key) + len(cookie.value) < 2500  # room left for the rest of the session


def test_callback_of_a_valid_state_with_a_code_reaches_the_token_endpoint_once(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    # The positive control of the spy: the same shape of callback as the refusals above,
    # with a good state, is exchanged (and the provider refuses the made-up code).
    client = Client()
    state = query_of(start(client))["state"]

    response = callback(client, state=state, code="made-up", issuer=oauth_local.issuer)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_invalid_grant"
    assert [call["code"] for call in exchange_calls] == ["made-up"]
