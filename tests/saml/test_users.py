"""The default ``SAML["USER_HANDLER"]``: which local account a SAML identity signs in to.

An identity is the provider and the NameID, linked to its account at its first sign-in
(``SamlIdentity``). A linked identity signs in its account whatever email it asserts.
An identity never linked signs in to an existing account with the same email only when
the provider is trusted for emails (``trust_email=True``): otherwise whoever controls
an IdP account (or the IdP) that asserts someone's address would take over that
person's password account. A new email gets a new account, linked.
"""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import Client
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NAMEID_FORMAT_TRANSIENT

from appframework.saml import SamlProvider
from appframework.saml.models import SamlIdentity
from testproject.blog.models import User
from testproject.local_idp.saml_idp import SigningIdp

from .conftest import (
    ALICE,
    EVIL,
    ProviderFactory,
    SettingsInstaller,
    assert_problem,
    assert_redirect,
    link_identity,
    post_acs,
    respond,
    signed_in_user,
    start_login,
)

pytestmark = pytest.mark.django_db

BOB = "bob@example.test"


def persistent(idp: SigningIdp, name_id: str, email: str, request_id: str | None = None) -> str:
    """A Response naming the user by a persistent NameID, with ``email`` as ``mail``."""
    return respond(
        idp,
        request_id,
        name_id=name_id,
        name_id_format=NAMEID_FORMAT_PERSISTENT,
        attributes={"mail": [email], "displayName": ["Someone"]},
    )


def sign_in(idp: SigningIdp, name_id: str, email: str) -> tuple[Client, HttpResponse]:
    """An SP-initiated sign-in as (``name_id``, ``email``): the browser and the answer."""
    browser = Client()
    request_id = start_login(browser, next="/posts")
    return browser, post_acs(browser, persistent(idp, name_id, email, request_id))


# -- an identity never linked -------------------------------------------------------------------


def test_an_unlinked_identity_asserting_a_password_accounts_email_does_not_get_it(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    victim = User.objects.create_user(ALICE, "victim-password-1", name="Alice")
    browser, response = sign_in(idp, "mallory-at-the-idp", ALICE)
    assert_problem(response, 403, "saml_email_not_trusted")
    assert signed_in_user(browser) is None
    assert list(User.objects.all()) == [victim]
    assert not SamlIdentity.objects.exists()


def test_an_idp_initiated_unlinked_identity_does_not_get_it_either(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    User.objects.create_user(ALICE, "victim-password-1")
    browser = Client()
    response = post_acs(browser, persistent(idp, "mallory-at-the-idp", ALICE.upper()))
    assert_problem(response, 403, "saml_email_not_trusted")
    assert signed_in_user(browser) is None
    assert User.objects.count() == 1 and not SamlIdentity.objects.exists()


def test_a_new_email_creates_an_account_and_links_the_identity(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser, response = sign_in(idp, "p-alice", ALICE)
    assert_redirect(response, "/posts")
    user = User.objects.get(email=ALICE)
    assert signed_in_user(browser) == user and not user.has_usable_password()
    [identity] = SamlIdentity.objects.all()
    assert (identity.user, identity.provider, identity.name_id, identity.email) == (
        user,
        "test",
        "p-alice",
        ALICE,
    )
    # The next sign-in finds the link: no second account, no refusal.
    browser, response = sign_in(idp, "p-alice", ALICE)
    assert_redirect(response, "/posts")
    assert signed_in_user(browser) == user
    assert User.objects.count() == 1 and SamlIdentity.objects.count() == 1


def test_trust_email_links_the_existing_account(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(trust_email=True))
    existing = User.objects.create_user("Alice@Example.TEST", "own-password-1", name="Alice")
    browser, response = sign_in(idp, "p-alice", ALICE)
    assert_redirect(response, "/posts")
    assert signed_in_user(browser) == existing
    assert SamlIdentity.objects.get(provider="test", name_id="p-alice").user == existing
    assert User.objects.count() == 1
    # Linked now: it keeps working once the provider is no longer trusted for emails.
    saml_settings(make_provider(trust_email=False))
    browser, response = sign_in(idp, "p-alice", ALICE)
    assert_redirect(response, "/posts")
    assert signed_in_user(browser) == existing


# -- a linked identity ----------------------------------------------------------------------------


def test_a_linked_identity_signs_in_its_account_whatever_email_it_asserts(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    alice = User.objects.create_user(ALICE, None)
    link_identity(alice, "p-alice")
    bob = User.objects.create_user(BOB, "bobs-password-1")
    # Alice's address at the IdP changed to Bob's: the link decides, not the address.
    browser, response = sign_in(idp, "p-alice", BOB)
    assert_redirect(response, "/posts")
    assert signed_in_user(browser) == alice != bob
    assert SamlIdentity.objects.get(name_id="p-alice").email == BOB


def test_a_link_counts_for_its_own_provider_only(idp: SigningIdp, provider: SamlProvider) -> None:
    alice = User.objects.create_user(ALICE, None)
    link_identity(alice, "p-alice", provider="other")
    browser, response = sign_in(idp, "p-alice", ALICE)
    assert_problem(response, 403, "saml_email_not_trusted")
    assert signed_in_user(browser) is None


# -- NameIDs that name nobody twice -----------------------------------------------------------------


def transient(idp: SigningIdp, email: str) -> str:
    return respond(
        idp,
        name_id="_t-" + email.split("@")[0],
        name_id_format=NAMEID_FORMAT_TRANSIENT,
        attributes={"mail": [email]},
    )


def test_a_transient_name_id_is_refused_without_trust_email(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    """A transient NameID changes at every sign-in: it could never find its link again,
    and without trusting the email nothing else can recognise the person."""
    browser = Client()
    assert_problem(post_acs(browser, transient(idp, EVIL)), 403, "saml_name_id_transient")
    assert signed_in_user(browser) is None
    assert not User.objects.exists() and not SamlIdentity.objects.exists()


def test_a_transient_name_id_with_trust_email_goes_by_the_email_and_is_not_linked(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(trust_email=True))
    browser = Client()
    assert_redirect(post_acs(browser, transient(idp, ALICE), relay_state="/posts"), "/posts")
    user = User.objects.get(email=ALICE)
    assert signed_in_user(browser) == user
    browser = Client()
    assert_redirect(post_acs(browser, transient(idp, ALICE), relay_state="/posts"), "/posts")
    assert signed_in_user(browser) == user
    assert User.objects.count() == 1 and not SamlIdentity.objects.exists()
