"""Helpers: the demo's passkey endpoints driven with the software authenticator."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.passkeys.models import Passkey
from tests.conftest import login_client

from .authenticator import SoftAuthenticator

JSON = {"HTTP_ACCEPT": "application/json"}


def options(client: Client, kind: str, status: int = 200) -> dict[str, Any]:
    response = client.post("/passkeys/options", {"kind": kind}, **JSON)
    assert response.status_code == status, response.content
    return response.json().get("publicKey", response.json())


def add_passkey(client: Client, authenticator: SoftAuthenticator, name: str = "Laptop") -> Passkey:
    credential = authenticator.create(options(client, "register"))
    response = client.post(
        "/account/passkeys/add", {"credential": credential, "name": name}
    )
    assert (response.status_code, response["Location"]) == (302, "/account/passkeys"), response
    return Passkey.objects.get(credential_id=authenticator.id)


def passwordless(client: Client, authenticator: SoftAuthenticator, **answer: Any) -> Any:
    credential = authenticator.get(options(client, "login"), **answer)
    return client.post("/login/passkey", {"credential": credential}, **JSON)


def code_of(response: Any) -> str:
    return str(response.json()["code"])


@pytest.fixture
def authenticator() -> SoftAuthenticator:
    return SoftAuthenticator()


@pytest.fixture
def alice_key(user: Any, authenticator: SoftAuthenticator) -> Passkey:
    """``user`` (alice) with one passkey on ``authenticator``, registered on the page by
    a session of hers that is gone again."""
    return add_passkey(login_client(Client(), user), authenticator)
