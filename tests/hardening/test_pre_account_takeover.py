"""Pre-account takeover: an attacker signs up someone else's address with a password of
their own and waits. When the owner later proves the address without that password (a
mailed sign-in code here; a provider's verified address and a reset link in
tests/demo/test_pre_account_takeover_by_provider.py and tests/saml/test_squatting.py),
the attacker's password, sessions and tokens stop working."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail

from appframework.auth.access_tokens import access_tokens, create_access_token
from testproject.blog.models import User
from tests.headless.test_flows import CLIENTS, Api

pytestmark = pytest.mark.django_db

VICTIM = "victim@example.test"
ATTACKERS_PASSWORD = "attackers-own-password-1"


def squat(kind: str) -> Any:
    attacker = Api(kind, address="198.51.100.7")
    answer = attacker.call("post", "auth/signup", {"email": VICTIM, "password": ATTACKERS_PASSWORD})
    assert answer.status_code in (200, 401), answer.content
    user = User.objects.get(email=VICTIM)
    assert user.check_password(ATTACKERS_PASSWORD)
    return user


def mailed_code(address: str) -> str:
    [message] = [m for m in mail.outbox if address in m.to and "code" in m.body.lower()][-1:]
    found = re.search(r"\b([A-Z0-9]{6,8})\b", message.body)
    assert found, message.body
    return found.group(1)


@pytest.mark.parametrize("kind", CLIENTS)
def test_the_owners_mailed_sign_in_code_ends_the_squatters_password(kind: str) -> None:
    user = squat(kind)
    create_access_token(user, name="squatter", scopes=["read"])
    mail.outbox.clear()
    owner = Api(kind, address="203.0.113.50")
    assert owner.call("post", "auth/code/request", {"email": VICTIM}).status_code in (200, 401)
    confirmed = owner.call("post", "auth/code/confirm", {"code": mailed_code(VICTIM)})
    assert confirmed.json()["status"] == "authenticated", confirmed.content
    # The squatter's password no longer signs in, on either client; their token is gone.
    for attacker_kind in CLIENTS:
        attempt = Api(attacker_kind, address="198.51.100.7").login(VICTIM, ATTACKERS_PASSWORD)
        assert attempt.json().get("status") != "authenticated", attempt.content
        assert attempt.status_code in (400, 401), attempt.content
    user.refresh_from_db()
    assert not user.has_usable_password()
    assert not access_tokens(user).exists()
    # The owner's own session goes on.
    assert owner.call("get", "session").json()["status"] == "authenticated"


def test_a_confirmed_account_keeps_its_password_when_its_owner_signs_in_by_code() -> None:
    user = User.objects.create_user("owner@example.test", "owners-password-1")
    owner = Api("app")
    owner.call("post", "auth/code/request", {"email": user.email})
    owner.call("post", "auth/code/confirm", {"code": mailed_code(user.email)})
    user.refresh_from_db()
    assert user.check_password("owners-password-1")
