"""Pre-account takeover through a provider's verified address: an attacker signs up the
owner's address with a password of their own; the owner then signs in through the
demo's OpenID provider, which verified the address. The account is the owner's from
then on: the attacker's password signs in nowhere."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.oauth.models import OAuthIdentity
from testproject.blog.models import User
from tests.headless.test_flows import CLIENTS, Api
from tests.oauth.peer import PASSWORD, VERIFIED_USER, ProviderBrowser

from .conftest import BASE

OWNER = "alice@example.test"  # VERIFIED_USER's address at the local provider
ATTACKERS_PASSWORD = "attackers-own-password-1"


def provider_sign_in(browser: Client) -> Any:
    start = browser.get("/auth/local/redirect")
    assert start.status_code == 302
    callback = ProviderBrowser().login_and_authorize(
        start["Location"], VERIFIED_USER, PASSWORD, f"{BASE}/auth/local/callback"
    )
    return browser.get(callback.removeprefix(BASE))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", CLIENTS)
def test_the_owners_provider_sign_in_ends_the_squatters_password(demo_env: None, kind: str) -> None:
    attacker = Api(kind, address="198.51.100.7")
    attacker.call("post", "auth/signup", {"email": OWNER, "password": ATTACKERS_PASSWORD})
    squatted = User.objects.get(email=OWNER)
    owner = Client()
    done = provider_sign_in(owner)
    assert done.status_code == 302, done.content
    assert owner.get("/api/auth/browser/v1/session").json()["status"] == "authenticated"
    assert OAuthIdentity.objects.get().user == squatted
    squatted.refresh_from_db()
    assert not squatted.has_usable_password()
    for attacker_kind in CLIENTS:
        attempt = Api(attacker_kind, address="198.51.100.7").login(OWNER, ATTACKERS_PASSWORD)
        assert attempt.status_code in (400, 401), attempt.content
