"""SAML squatting: an identity provider not trusted for addresses asserts someone
else's unconfirmed address and gets an account made for it. When the address's owner
proves it with a password reset, the identity linked before stops signing in."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from appframework.auth.password_flows import reset_password
from appframework.saml import SamlProvider
from appframework.saml.models import SamlIdentity
from testproject.blog.models import User
from testproject.local_idp.saml_idp import SigningIdp

from .conftest import ALICE, assert_problem, signed_in_user
from .test_users import sign_in

pytestmark = pytest.mark.django_db


def test_a_reset_by_the_addresses_owner_ends_an_identity_linked_before_it(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    assert not provider.trust_email
    browser, _ = sign_in(idp, "mallory-at-her-idp", ALICE)
    squatted = User.objects.get(email=ALICE)
    assert signed_in_user(browser) == squatted and SamlIdentity.objects.count() == 1
    request = RequestFactory().post("/")
    reset_password(request, squatted, "owners-new-password-1")
    assert not SamlIdentity.objects.exists()
    # The squatter's browser was signed out, and the identity signs in nowhere.
    assert signed_in_user(browser) is None
    browser, response = sign_in(idp, "mallory-at-her-idp", ALICE)
    assert_problem(response, 403, "saml_email_not_trusted")
    assert signed_in_user(browser) is None
    squatted.refresh_from_db()
    assert squatted.check_password("owners-new-password-1")
