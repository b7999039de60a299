"""The demo's SAML provider (testproject/blog/sso.py, as ``scripts/demo`` configures it
through environment variables): it refuses IdP-initiated login, which no request id
can bind to a browser (login CSRF), and does not trust its IdP for email addresses.

The demo is driven here against the suite's signing IdP, set up to trust the demo's
service provider, so that a refusal is the demo provider's own setting at work.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from django.test.utils import override_settings

from appframework.saml import SamlProvider
from appframework.saml import checks as saml_checks
from testproject.blog.models import User
from testproject.blog.sso import saml_providers
from testproject.local_idp.keys import KeyPair
from testproject.local_idp.saml_idp import SigningIdp, SpInfo

from .conftest import (
    ALICE,
    IDP_ENTITY_ID,
    IDP_SSO_URL,
    appframework_with,
    assert_problem,
    assert_redirect,
    authn_request_query,
    post_acs,
    signed_in_user,
)

BASE = "http://testserver"
DEMO_SP = SpInfo(f"{BASE}/saml/local/metadata", f"{BASE}/saml/local/acs")


@pytest.fixture
def demo_idp(idp_keys: KeyPair) -> SigningIdp:
    return SigningIdp(
        entity_id=IDP_ENTITY_ID, sso_url=IDP_SSO_URL, keypair=idp_keys, service_providers=[DEMO_SP]
    )


@pytest.fixture
def demo_provider(idp_keys: KeyPair, monkeypatch: pytest.MonkeyPatch) -> Iterator[SamlProvider]:
    """The demo's provider, built from the variables scripts/demo exports, and installed
    as the demo installs it (the factory's import string)."""
    monkeypatch.setenv("SAML_IDP_ENTITY_ID", IDP_ENTITY_ID)
    monkeypatch.setenv("SAML_IDP_SSO_URL", IDP_SSO_URL)
    monkeypatch.setenv("SAML_IDP_CERT", str(idp_keys.cert_path))
    saml = {"PROVIDERS": "testproject.blog.sso.saml_providers"}
    with override_settings(DEMO_BASE_URL=BASE, APPFRAMEWORK=appframework_with(saml)):
        [provider] = saml_providers()
        yield provider


def test_the_demo_provider_refuses_idp_initiated_login_and_does_not_trust_emails(
    demo_provider: SamlProvider,
) -> None:
    assert demo_provider.name == "local"
    assert demo_provider.allow_idp_initiated is False
    assert demo_provider.trust_email is False
    assert demo_provider.allow_sha1 is False
    # Listed in settings, it would not raise appframework_saml.W004.
    saml = {"PROVIDERS": [demo_provider]}
    with override_settings(APPFRAMEWORK=appframework_with(saml)):
        assert saml_checks.check_idp_initiated() == []


@pytest.mark.django_db
def test_an_idp_initiated_response_to_the_demo_signs_nobody_in(
    demo_provider: SamlProvider, demo_idp: SigningIdp
) -> None:
    """Login CSRF: a valid unsolicited Response for the attacker's own account, posted
    from the visitor's browser, would sign the visitor in as the attacker."""
    xml = demo_idp.create_response(sp_entity_id=DEMO_SP.entity_id, acs_url=DEMO_SP.acs_url)
    visitor = Client()
    response = post_acs(visitor, xml, relay_state="/posts", path="/saml/local/acs")
    assert_problem(response, 403, "saml_invalid")
    assert signed_in_user(visitor) is None
    assert not User.objects.exists()


@pytest.mark.django_db
def test_the_demo_still_signs_in_through_its_own_login(
    demo_provider: SamlProvider, demo_idp: SigningIdp
) -> None:
    browser = Client()
    login = browser.get("/saml/local/login?next=/posts")
    request = demo_idp.parse_authn_request_query(authn_request_query(login["Location"]))
    xml = demo_idp.create_response(
        sp_entity_id=DEMO_SP.entity_id, acs_url=DEMO_SP.acs_url, in_response_to=request.id
    )
    assert_redirect(post_acs(browser, xml, path="/saml/local/acs"), "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)
