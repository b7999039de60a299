"""A copied session cookie alone changes nothing about the account.

The attack as it was found: with only the victim's cookie, ask for passkey registration
options, register the attacker's own passkey, then keep the account after the victim
logs out everywhere and an admin resets the password (the passkey still signs in); or
enrol the attacker's TOTP, remove the victim's passkey, mint an API token. Every one of
those requests is now refused — a browser is sent to "Confirm it's you", an API client
gets 401 ``reauthentication_required`` — until the session proves a factor again.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.passkeys.models import Passkey
from tests.conftest import age_proof, enable_totp, login_client
from tests.passkeys.authenticator import SoftAuthenticator
from tests.passkeys.conftest import add_passkey, options

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}
HTML = {"HTTP_ACCEPT": "text/html"}


@pytest.fixture
def stolen(user: Any) -> Client:
    """The victim signed in an hour ago; the attacker holds a copy of the cookie."""
    client = login_client(Client(), user)
    age_proof(client)
    return client


def _refused(response: Any) -> None:
    assert response.status_code == 401, response.content
    assert response.json()["code"] == "reauthentication_required"


def test_registering_the_attackers_passkey_is_refused(stolen: Client, user: Any) -> None:
    attacker = SoftAuthenticator()
    credential = attacker.create(options(stolen, "register"))
    _refused(stolen.post("/account/passkeys/add", {"credential": credential}, **JSON))
    assert not Passkey.objects.filter(user=user).exists()


def test_enrolling_the_attackers_totp_is_refused(stolen: Client, user: Any) -> None:
    _refused(stolen.get("/account/mfa/totp/on", **JSON))
    _refused(stolen.post("/account/mfa/totp/on", {"code": "123456"}, **JSON))
    user.refresh_from_db()
    assert user.mfa_secret is None and user.mfa_enabled is False


def test_removing_the_victims_passkey_or_totp_is_refused(user: Any) -> None:
    own = login_client(Client(), user)
    passkey = add_passkey(own, SoftAuthenticator())
    _secret, codes = enable_totp(user)
    thief = login_client(Client(), user)
    age_proof(thief)
    _refused(thief.post(f"/account/passkeys/{passkey.pk}/remove", {}, **JSON))
    _refused(thief.post("/account/mfa/totp/off", {"code": codes[0]}, **JSON))
    _refused(thief.post("/account/mfa/recovery-codes", {"code": codes[1]}, **JSON))
    user.refresh_from_db()
    assert Passkey.objects.filter(pk=passkey.pk).exists() and user.mfa_enabled is True
    assert len(user.mfa_recovery_codes) == 10


def test_minting_an_api_token_is_refused(stolen: Client) -> None:
    _refused(stolen.post("/token", **JSON))
    # The token page itself sends a browser to confirm first.
    page = stolen.get("/account/token", **HTML)
    assert page.status_code == 302 and page["Location"] == "/account/confirm?next=/account/token"


def test_changing_the_email_or_the_password_is_refused(stolen: Client, user: Any) -> None:
    _refused(stolen.post("/account/email/change", {"email": "thief@example.com"}, **JSON))
    _refused(
        stolen.post(
            "/account/password",
            {"new_password1": "thief's passphrase 42", "new_password2": "thief's passphrase 42"},
            **JSON,
        )
    )
    user.refresh_from_db()
    assert user.email == "alice@example.com" and user.check_password("thief's passphrase 42") is False


def test_the_cookie_alone_cannot_pass_the_confirmation(stolen: Client, user: Any) -> None:
    """Without a factor the confirm page refuses; the changes stay refused."""
    for data in ({}, {"password": "guess"}, {"code": "000000"}):
        answer = stolen.post("/account/confirm", data, **JSON)
        assert answer.status_code in (401, 422), answer.content
    _refused(stolen.post("/token", **JSON))


def test_after_the_owners_password_the_change_goes_through(
    stolen: Client, user: Any, password: str
) -> None:
    """The counterpart: the same session, once it proves the password, may change."""
    confirmed = stolen.post("/account/confirm", {"password": password, "next": "/account/token"})
    assert (confirmed.status_code, confirmed["Location"]) == (302, "/account/token")
    issued = stolen.post("/token", **JSON)
    assert issued.status_code == 200 and issued.json()["type"] == "Bearer"
    attacker = SoftAuthenticator()
    credential = attacker.create(options(stolen, "register"))
    added = stolen.post("/account/passkeys/add", {"credential": credential})
    assert added.status_code == 302 and Passkey.objects.filter(user=user).count() == 1


def test_a_bearer_token_never_counts_as_a_recent_proof(user: Any, password: str) -> None:
    fresh = login_client(Client(), user)
    token = fresh.post("/token", **JSON).json()["token"]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = api.post("/token", **JSON)
    assert response.status_code in (401, 403)
