"""What real IdPs send: their attribute names for the email and the name (Okta, Entra ID,
Google, ADFS, Keycloak, the npm saml-idp, bare OIDs), their refusals (a Response whose
status is not Success, signed or not), and an IdP certificate kept in a file.

Every Response here is made and signed by the test IdP (xmlsec1).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from saml2 import samlp

from appframework.exceptions import ForbiddenException
from appframework.saml import SamlProvider, saml_acs
from testproject.blog.models import User
from testproject.local_idp.keys import KeyPair
from testproject.local_idp.saml_idp import RawAttribute, SigningIdp

from .conftest import (
    ACS_URL,
    ALICE,
    ProviderFactory,
    SettingsInstaller,
    acs_request,
    assert_problem,
    post_acs,
    respond,
    signed_in_user,
    start_login,
)
from .idp_tools import error_response, response_id, xmlsec_verifies

pytestmark = pytest.mark.django_db

NAMEID_UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
CLAIMS = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/"
MS_CLAIMS = "http://schemas.microsoft.com/identity/claims/"
URI_FORMAT = "urn:oasis:names:tc:SAML:2.0:attrname-format:uri"


def _user(idp: SigningIdp, raw: list[RawAttribute] | dict[str, list[str]]) -> Any:
    xml = respond(
        idp,
        name_id="employee-4711",
        name_id_format=NAMEID_UNSPECIFIED,
        attributes={},
        raw_attributes=raw,
    )
    return saml_acs(acs_request(xml), "test")


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        # Okta's and the npm saml-idp's usual attribute statements.
        {"email": ["carol@example.test"], "firstName": ["Carol"], "lastName": ["Example"]},
        # Entra ID's default claims: .../claims/name is the UPN.
        {
            CLAIMS + "name": ["carol@corp.example"],
            CLAIMS + "givenname": ["Carol"],
            CLAIMS + "surname": ["Example"],
            CLAIMS + "emailaddress": ["carol@example.test"],
        },
        # ADFS: the same claim URIs, without the UPN as name.
        {CLAIMS + "givenname": ["Carol"], CLAIMS + "surname": ["Example"]},
        # X.500 OIDs with no FriendlyName (Shibboleth, and others that send URI names only).
        [
            RawAttribute("urn:oid:2.5.4.42", ["Carol"], URI_FORMAT),
            RawAttribute("urn:oid:2.5.4.4", ["Example"], URI_FORMAT),
        ],
        # Keycloak's X500 mappers: the OIDs, with FriendlyNames givenName and surname.
        [
            RawAttribute("urn:oid:2.5.4.42", ["Carol"], URI_FORMAT, "givenName"),
            RawAttribute("urn:oid:2.5.4.4", ["Example"], URI_FORMAT, "surname"),
        ],
        # Keycloak's user property mappers (basic names), Google Workspace's usual mapping.
        {"firstName": ["Carol"], "lastName": ["Example"], "name": ["carol@example.test"]},
        {"givenName": ["Carol"], "surname": ["Example"]},
    ],
    ids=["okta", "entra", "adfs", "oids", "keycloak-x500", "keycloak-basic", "surname"],
)
def test_given_and_family_names_of_each_idp_make_the_name(
    idp: SigningIdp, provider: SamlProvider, raw: Any
) -> None:
    assert _user(idp, raw).name == "Carol Example"


def test_entra_display_name_claim_wins_over_given_and_surname(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    user = _user(
        idp,
        {
            CLAIMS + "name": ["carol@corp.example"],
            MS_CLAIMS + "displayname": ["Carol E. (Sales)"],
            CLAIMS + "givenname": ["Carol"],
            CLAIMS + "surname": ["Example"],
        },
    )
    assert user.name == "Carol E. (Sales)"


def test_a_name_that_looks_like_an_address_is_never_the_name(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    # Entra ID with the given name and surname claims removed: only the UPN is left.
    assert _user(idp, {CLAIMS + "name": ["carol@corp.example"]}).name is None
    # A displayName an administrator left as the address: the plain cn is used.
    user = _user(idp, {"displayName": ["carol@example.test"], "cn": ["Carol Example"]})
    assert user.name == "Carol Example"
    # Only one half of a name is still a name.
    assert _user(idp, {"lastName": ["Example"]}).name == "Example"


def test_name_attribute_override_wins_over_every_recognised_name(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(name_attribute=CLAIMS + "name"))
    entra = {
        CLAIMS + "name": ["carol@corp.example"],
        CLAIMS + "givenname": ["Carol"],
        CLAIMS + "surname": ["Example"],
        MS_CLAIMS + "displayname": ["Carol Example"],
    }
    # The configured attribute is taken as it is, even an address.
    assert _user(idp, entra).name == "carol@corp.example"


def test_a_capitalised_email_attribute_is_read(idp: SigningIdp, provider: SamlProvider) -> None:
    assert _user(idp, {"Email": ["carol@example.test"]}).email == "carol@example.test"


def test_an_entra_sign_in_creates_the_user_with_their_name_not_their_upn(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser)
    xml = respond(
        idp,
        request_id,
        name_id="carol@corp.example",
        attributes={},
        raw_attributes={
            CLAIMS + "name": ["carol@corp.example"],
            CLAIMS + "givenname": ["Carol"],
            CLAIMS + "surname": ["Example"],
            CLAIMS + "emailaddress": ["carol@example.test"],
        },
    )
    assert post_acs(browser, xml).status_code == 302
    assert User.objects.get(email="carol@example.test").name == "Carol Example"


# -- the IdP's refusal ------------------------------------------------------------------------


def _refusal(idp: SigningIdp, in_response_to: str | None = None, **kwargs: Any) -> str:
    return error_response(idp, acs_url=ACS_URL, in_response_to=in_response_to, **kwargs)


@pytest.mark.parametrize("sign", [True, False], ids=["signed", "unsigned"])
def test_an_authn_failed_response_is_403_saml_idp_refused_with_its_status(
    idp: SigningIdp, idp_keys: KeyPair, provider: SamlProvider, sign: bool
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts")
    xml = _refusal(idp, request_id, message="The password was wrong.", sign=sign)
    assert xmlsec_verifies(xml, idp_keys.cert_path, node_id=response_id(xml)) is sign

    body = assert_problem(post_acs(browser, xml), 403, "saml_idp_refused")

    assert body["detail"] == (
        "The identity provider refused the sign-in (AuthnFailed: The password was wrong.)."
    )
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


@pytest.mark.parametrize(
    ("status", "second", "shown"),
    [
        (samlp.STATUS_RESPONDER, samlp.STATUS_REQUEST_DENIED, "RequestDenied"),
        # A user who cancelled at the IdP, as several IdPs report it.
        (samlp.STATUS_REQUESTER, samlp.STATUS_AUTHN_FAILED, "AuthnFailed"),
        (samlp.STATUS_REQUESTER, None, "Requester"),
        (samlp.STATUS_RESPONDER, "urn:example:vendor:status:Locked", "Locked"),
        (samlp.STATUS_RESPONDER, "urn:example:status:<b>bad name</b>", "Responder"),
    ],
)
def test_the_refusal_names_the_second_level_status_else_the_top_level_one(
    idp: SigningIdp, provider: SamlProvider, status: str, second: str | None, shown: str
) -> None:
    browser = Client()
    request_id = start_login(browser)
    xml = _refusal(idp, request_id, status=status, second_status=second)
    body = assert_problem(post_acs(browser, xml), 403, "saml_idp_refused")
    assert body["detail"] == f"The identity provider refused the sign-in ({shown})."


def test_the_refusal_spends_the_request_and_a_second_answer_to_it_is_refused(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser)
    assert_problem(post_acs(browser, _refusal(idp, request_id)), 403, "saml_idp_refused")

    # Neither the refusal again nor a success for the same request signs anyone in.
    assert_problem(post_acs(browser, _refusal(idp, request_id)), 403, "saml_invalid")
    assert_problem(post_acs(browser, respond(idp, request_id)), 403, "saml_invalid")
    assert signed_in_user(browser) is None


def test_a_refusal_answering_no_outstanding_request_is_saml_invalid(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    response = post_acs(Client(), _refusal(idp, "_never_issued", sign=False))
    assert_problem(response, 403, "saml_invalid")


def test_a_refusal_of_a_request_another_browser_started_is_not_reported_here(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    # Someone starts a login, forges a refusal of it with words of their choosing, and
    # has a visitor's browser post it: the visitor never sees those words.
    request_id = start_login(Client())
    xml = _refusal(idp, request_id, message="Call +1 555 0100 to unlock your account.")
    response = post_acs(Client(), xml)
    assert_problem(response, 403, "saml_request_not_started_here")
    assert b"555" not in response.content


def test_an_idp_initiated_refusal_shows_its_status_but_not_its_message(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = _refusal(idp, message="Call +1 555 0100 to unlock your account.", sign=False)
    body = assert_problem(post_acs(Client(), xml), 403, "saml_idp_refused")
    assert body["detail"] == "The identity provider refused the sign-in (AuthnFailed)."


def test_an_idp_initiated_refusal_is_saml_invalid_when_the_provider_accepts_none(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(allow_idp_initiated=False))
    assert_problem(post_acs(Client(), _refusal(idp)), 403, "saml_invalid")


def test_a_refusal_signed_with_sha1_is_refused_as_any_response_is(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    from saml2.xmldsig import DIGEST_SHA1, SIG_RSA_SHA1

    from .idp_tools import idp_signing_with

    legacy = idp_signing_with(idp, signing_algorithm=SIG_RSA_SHA1, digest_algorithm=DIGEST_SHA1)
    browser = Client()
    request_id = start_login(browser)
    xml = error_response(legacy, acs_url=ACS_URL, in_response_to=request_id)
    assert_problem(post_acs(browser, xml), 403, "saml_invalid")


def test_the_refusal_page_escapes_and_bounds_the_idp_message(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser)
    from appframework.saml.flows import MAX_STATUS_MESSAGE

    message = "<script>alert(1)</script>\nsecond line " + "x" * 1000
    post = Client(enforce_csrf_checks=True).post(
        "/saml/test/acs",
        {"SAMLResponse": SigningIdp.encode(_refusal(idp, request_id, message=message))},
    )
    page = browser.get(post["Location"], HTTP_ACCEPT="text/html")

    assert page.status_code == 403
    assert page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert "The identity provider refused the sign-in (AuthnFailed: " in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; second line" in html
    assert "x" * MAX_STATUS_MESSAGE not in html and "x" * 100 in html


def test_saml_acs_raises_saml_idp_refused_without_the_message_and_logs_it(
    idp: SigningIdp, provider: SamlProvider, caplog: pytest.LogCaptureFixture
) -> None:
    request_id = start_login(Client(), next="/posts")
    request = acs_request(_refusal(idp, request_id, message="Account locked\nFORGED LINE"))
    with (
        caplog.at_level(logging.WARNING, logger="appframework.saml"),
        pytest.raises(ForbiddenException) as refused,
    ):
        saml_acs(request, "test")
    assert refused.value.code == "saml_idp_refused"
    assert str(refused.value.detail) == "The identity provider refused the sign-in (AuthnFailed)."
    assert request.saml_next == "/posts"  # type: ignore[attr-defined]
    [record] = [r for r in caplog.records if r.name == "appframework.saml"]
    assert "AuthnFailed: Account locked FORGED LINE" in record.getMessage()
    assert "\n" not in record.getMessage()


def test_a_successful_response_is_unchanged_by_the_status_check(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    assert saml_acs(acs_request(respond(idp)), "test").email == ALICE


# -- idp_x509_cert from a file ----------------------------------------------------------------


def test_the_idp_cert_may_be_a_file_path(
    provider_kwargs: dict[str, Any], idp_keys: KeyPair, make_provider: ProviderFactory
) -> None:
    from_file = SamlProvider(**{**provider_kwargs, "idp_x509_cert": str(idp_keys.cert_path)})
    assert from_file.idp_x509_cert == idp_keys.cert_b64
    assert from_file == make_provider()


def test_a_file_holding_the_bare_base64_is_read_too(
    provider_kwargs: dict[str, Any], idp_keys: KeyPair, tmp_path: Path
) -> None:
    # A path made of base64 characters only: the file is read, not decoded.
    path = tmp_path / "idpcert"
    path.write_text(idp_keys.cert_b64 + "\n")
    provider = SamlProvider(**{**provider_kwargs, "idp_x509_cert": str(path)})
    assert provider.idp_x509_cert == idp_keys.cert_b64


def test_a_provider_with_its_idp_cert_in_a_file_accepts_the_idps_responses(
    idp: SigningIdp,
    idp_keys: KeyPair,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
) -> None:
    saml_settings(make_provider(idp_x509_cert=str(idp_keys.cert_path)))
    assert saml_acs(acs_request(respond(idp)), "test").email == ALICE


@pytest.mark.parametrize("field", ["idp_x509_cert", "sp_x509_cert"])
def test_a_cert_path_that_is_missing_or_a_directory_is_refused_alike(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair, tmp_path: Path, field: str
) -> None:
    pair = {"sp_x509_cert": sp_keys.cert_pem, "sp_private_key": sp_keys.key_pem}
    for value in (str(tmp_path / "missing.pem"), str(tmp_path)):
        with pytest.raises(ValueError, match=f"{field} is neither PEM text nor a readable file"):
            SamlProvider(**{**provider_kwargs, **pair, field: value})


def test_an_idp_cert_file_that_cannot_be_read_as_text_is_refused(
    provider_kwargs: dict[str, Any], tmp_path: Path
) -> None:
    # Not UTF-8: unreadable as a certificate whoever runs the process (a chmod 0 file
    # would still be read by root, which CI is).
    path = tmp_path / "idp.pem"
    path.write_bytes(b"\xff\xfe\x00 not a certificate \x80")
    with pytest.raises(ValueError, match="idp_x509_cert is neither PEM text nor a readable file"):
        SamlProvider(**{**provider_kwargs, "idp_x509_cert": str(path)})


@pytest.mark.parametrize("field", ["idp_x509_cert", "sp_x509_cert"])
def test_a_cert_file_that_holds_no_certificate_is_refused_alike(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair, field: str
) -> None:
    # The SP's private key, named by mistake.
    pair = {"sp_x509_cert": sp_keys.cert_pem, "sp_private_key": sp_keys.key_pem}
    with pytest.raises(ValueError, match=f"{field} is not an X.509 certificate"):
        SamlProvider(**{**provider_kwargs, **pair, field: str(sp_keys.key_path)})


def test_a_long_bare_base64_sp_cert_is_a_value_error_not_an_os_error(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair
) -> None:
    # Read as a path it is a name too long for the file system.
    with pytest.raises(ValueError, match="sp_x509_cert is neither PEM text nor a readable file"):
        SamlProvider(
            **provider_kwargs, sp_x509_cert=sp_keys.cert_b64, sp_private_key=sp_keys.key_pem
        )
