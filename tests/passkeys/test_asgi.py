"""The passkey endpoints under ASGI (AsyncClient): sync views, as the other account
pages, run by Django's async handler."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from appframework.auth.challenge import login_or_challenge
from appframework.mfa import acomplete_challenge
from appframework.passkeys import authentication_options
from appframework.passkeys.models import Passkey

from .authenticator import SoftAuthenticator
from .conftest import JSON
from .test_challenge import sso_request

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_passwordless_sign_in_under_asgi(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = AsyncClient()
    response = await client.post("/passkeys/options", {"kind": "login"}, **JSON)
    credential = authenticator.get(response.json()["publicKey"])
    response = await client.post("/login/passkey", {"credential": credential})
    assert response.status_code == 302
    landing = await client.get("/")
    assert "Signed in as <strong>alice@example.com</strong>" in landing.content.decode()


async def test_the_second_factor_under_asgi(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = AsyncClient()
    response = await client.post(
        "/login", {"email": "alice@example.com", "password": "correct horse battery staple"}
    )
    assert response["Location"] == "/login/mfa"
    response = await client.post("/passkeys/options", {"kind": "challenge"}, **JSON)
    credential = authenticator.get(response.json()["publicKey"])
    response = await client.post("/login/mfa", {"credential": credential})
    assert response.status_code == 302
    landing = await client.get("/")
    assert "Signed in as <strong>alice@example.com</strong>" in landing.content.decode()


async def test_acomplete_challenge_takes_a_passkey(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    request = sso_request()
    assert await sync_to_async(login_or_challenge)(request, user) is False
    opts = await sync_to_async(authentication_options)(request, "challenge", user)
    assert await acomplete_challenge(request, passkey=authenticator.get(opts)) == user
