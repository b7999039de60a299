"""Under mandatory verification the JSON API's sign-up (both clients) and the page's
answer a taken address exactly as a new one, in the response and in the session."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from appframework.auth.verification import confirmation_key

pytestmark = [pytest.mark.django_db]

PASSPHRASE = "a long fresh passphrase"
NEW = "brand.new@example.com"
VARYING = {"Expires", "X-Session-Token"}  # a date and a random token


def _signup(client: Client, api: str, email: str) -> Any:
    return client.post(
        f"{api}/auth/signup",
        json.dumps({"email": email, "password": PASSPHRASE}),
        content_type="application/json",
    )


def _shape(response: Any) -> tuple[Any, ...]:
    headers = {k: v for k, v in response.headers.items() if k not in VARYING}
    cookies = {
        name: {k: v for k, v in dict(m).items() if k != "expires"}
        for name, m in response.cookies.items()
    }
    body = response.json()
    if body.get("session_token"):  # random: only its length may be compared
        body["session_token"] = len(body["session_token"])
    return response.status_code, body, headers, cookies, sorted(response.headers)


@pytest.mark.parametrize("api", ["/api/auth/browser/v1", "/api/auth/app/v1"])
def test_api_signup_with_a_taken_address_answers_and_leaves_the_session_as_a_new_one(
    user: Any, api: str
) -> None:
    taken_client, new_client = Client(), Client()
    taken, new = _signup(taken_client, api, user.email), _signup(new_client, api, NEW)
    assert _shape(taken) == _shape(new)
    assert taken.json()["status"] == "verification_required"
    headers = {}
    if api.endswith("app/v1"):
        assert len(taken["X-Session-Token"]) == len(new["X-Session-Token"])
        headers = {"X-Session-Token": taken["X-Session-Token"]}
        new_headers = {"X-Session-Token": new["X-Session-Token"]}
    else:
        new_headers = {}
    after_taken = taken_client.get(f"{api}/session", headers=headers)
    after_new = new_client.get(f"{api}/session", headers=new_headers)
    assert _shape(after_taken) == _shape(after_new)
    # The owner is told someone tried; the new address gets its confirmation.
    assert sorted(m.to[0] for m in mail.outbox) == sorted([user.email, NEW])


def test_page_signup_with_a_taken_address_leaves_the_same_session_status(user: Any) -> None:
    taken_client, new_client = Client(), Client()
    taken_client.post("/signup", {"email": user.email, "password": PASSPHRASE})
    new_client.post("/signup", {"email": NEW, "password": PASSPHRASE})
    taken = taken_client.get("/api/auth/browser/v1/session")
    new = new_client.get("/api/auth/browser/v1/session")
    assert _shape(taken) == _shape(new)
    assert taken.json()["status"] == "verification_required"


def test_the_pending_confirmation_of_a_taken_address_never_signs_in_its_owner(user: Any) -> None:
    # Even holding a valid link key of the owner, the session that tried the taken
    # address is not signed in to the owner's account by confirming it.
    api = "/api/auth/browser/v1"
    client = Client()
    _signup(client, api, user.email)
    answer = client.post(
        f"{api}/auth/email/verify",
        json.dumps({"key": confirmation_key(user, user.email)}),
        content_type="application/json",
    )
    assert answer.json()["status"] != "authenticated", answer.content


def _session_shape(client: Client) -> dict[str, Any]:
    """The session's keys and, per value, its type (a dict: its keys): what a holder of
    a signed-cookie session can read, minus what is random."""
    shape: dict[str, Any] = {}
    for key, value in client.session.items():
        shape[key] = sorted(value) if isinstance(value, dict) else type(value).__name__
    return shape


def _pending_marks(client: Client) -> list[int]:
    """The lengths of the pending codes' account marks: the same for every account,
    and for none."""
    return [
        len(str(v["user"])) for v in client.session.values() if isinstance(v, dict) and "user" in v
    ]


def _no_account_id(client: Client, user: Any) -> None:
    for value in client.session.values():
        values = value.values() if isinstance(value, dict) else [value]
        assert str(user.pk) not in {str(v) for v in values}, client.session.items()


@pytest.mark.parametrize("api", ["/api/auth/browser/v1", "/api/auth/app/v1"])
def test_with_codes_the_session_of_a_taken_address_has_the_shape_of_a_new_ones(
    user: Any, api: str
) -> None:
    from tests.auth.flows import appframework_settings

    with appframework_settings(auth={"EMAIL_VERIFICATION_BY_CODE": True}):
        taken_client, new_client = Client(), Client()
        taken, new = _signup(taken_client, api, user.email), _signup(new_client, api, NEW)
        assert _shape(taken) == _shape(new)
        if api.endswith("app/v1"):
            taken_client.defaults["HTTP_X_SESSION_TOKEN"] = taken["X-Session-Token"]
            new_client.defaults["HTTP_X_SESSION_TOKEN"] = new["X-Session-Token"]
        assert _session_shape(taken_client) == _session_shape(new_client)
        # Neither names an account: "" for the taken address would tell it from a new id.
        made = get_user_model()._default_manager.get(email=NEW)
        _no_account_id(new_client, made)
        assert _pending_marks(taken_client) == _pending_marks(new_client)
        # The new account's code still confirms it and signs it in.
        [mailed] = [m for m in mail.outbox if m.to == [NEW]]
        code = re.search(r"^\s+([A-Z0-9]{6})\s*$", mailed.body, re.MULTILINE)
        assert code, mailed.body
        confirmed = new_client.post(
            f"{api}/auth/email/verify",
            json.dumps({"code": code.group(1)}),
            content_type="application/json",
        )
        assert confirmed.json()["status"] == "authenticated", confirmed.content


def test_a_login_code_for_an_unknown_address_leaves_the_session_of_a_known_one(
    user: Any,
) -> None:
    from tests.auth.flows import appframework_settings

    api = "/api/auth/browser/v1"
    with appframework_settings(auth={"LOGIN_BY_CODE": True}):
        known, unknown = Client(), Client()
        for client, email in ((known, user.email), (unknown, NEW)):
            answer = client.post(
                f"{api}/auth/code/request",
                json.dumps({"email": email}),
                content_type="application/json",
            )
            assert answer.status_code == 200, answer.content
        assert _session_shape(known) == _session_shape(unknown)
        _no_account_id(known, user)
        assert _pending_marks(known) == _pending_marks(unknown)
