"""Self-tests of the SAML test IdP (testproject/local_idp/saml_idp.py) and the attack
tools in tests/saml/idp_tools.py, against a plain pysaml2 service provider in-process.

What they establish for the tests that will use these tools: a genuine Response is
accepted by a strictly configured SP; each forgery is what its name says (checked on
the XML, and with xmlsec1 where the point is that a signature still verifies); and a
strict pysaml2 SP rejects each one, so a service provider that accepts one has a hole
of its own rather than a broken tool.
"""

from __future__ import annotations

import base64
import re
import stat
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509

with warnings.catch_warnings():
    # pysaml2 7.5 still imports the CFB mode from its old place in cryptography, which
    # warns once at import; nothing here uses CFB.
    warnings.filterwarnings("ignore", message=r"CFB has been moved")
    from defusedxml import EntitiesForbidden
    from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, SAMLError
    from saml2.client import Saml2Client
    from saml2.config import SPConfig
    from saml2.response import AuthnResponse, IncorrectlySigned, InvalidAssertion, VerificationError
    from saml2.sigver import SignatureError, get_xmlsec_binary
    from saml2.validate import ResponseLifetimeExceed, ToEarly
    from saml2.xmldsig import DIGEST_SHA1, SIG_RSA_SHA1, SIG_RSA_SHA256

    from testproject.local_idp.keys import KeyPair, make_keypair
    from testproject.local_idp.saml_idp import RawAttribute, SigningIdp
    from tests.saml import idp_tools

from .conftest import ACS_URL as SP_ACS_URL
from .conftest import EVIL, IDP_ENTITY_ID, IDP_SSO_URL, SP_ENTITY_ID

# -- fixtures ---------------------------------------------------------------------------


# The keys, the quiet saml2 logger and the `idp` fixture come from tests/saml/conftest.py.
SpFactory = Callable[..., Saml2Client]


def _has(xml: str, text: str) -> bool:
    """``text`` in ``xml`` with ``{p}`` standing for any namespace prefix: the prefix
    pysaml2 writes depends on ElementTree's process-wide registry, which other code
    (metadata, other tests) may have filled."""
    parts = [re.escape(part) for part in text.split("{p}")]
    return re.search(r"(?:[A-Za-z_][\w.-]*:)?".join(parts), xml) is not None


@pytest.fixture(scope="module")
def make_sp(idp: SigningIdp) -> SpFactory:
    def make(
        *,
        want_response_signed: bool = True,
        want_assertions_signed: bool = True,
        signing_keys: KeyPair | None = None,
        accepted_time_diff: int | None = None,
    ) -> Saml2Client:
        config: dict[str, Any] = {
            "entityid": SP_ENTITY_ID,
            "xmlsec_binary": get_xmlsec_binary(),
            "metadata": {"inline": [idp.metadata_xml()]},
            # A top-level option: inside service/sp pysaml2 silently ignores it.
            "allow_unknown_attributes": True,
            "service": {
                "sp": {
                    "endpoints": {"assertion_consumer_service": [(SP_ACS_URL, BINDING_HTTP_POST)]},
                    "want_response_signed": want_response_signed,
                    "want_assertions_signed": want_assertions_signed,
                    "allow_unsolicited": True,
                    "authn_requests_signed": signing_keys is not None,
                },
            },
        }
        if signing_keys is not None:
            config["key_file"] = str(signing_keys.key_path)
            config["cert_file"] = str(signing_keys.cert_path)
        if accepted_time_diff is not None:
            config["accepted_time_diff"] = accepted_time_diff
        sp_config = SPConfig()
        sp_config.load(config)
        return Saml2Client(config=sp_config)

    return make


@pytest.fixture(scope="module")
def strict_sp(make_sp: SpFactory) -> Saml2Client:
    return make_sp()


@pytest.fixture(scope="module")
def genuine(idp: SigningIdp) -> str:
    """An IdP-initiated Response, both Response and Assertion signed."""
    return idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL)


@pytest.fixture(scope="module")
def assertion_signed_only(idp: SigningIdp) -> str:
    """Only the Assertion signed: the shape that signature-wrapping attacks target."""
    return idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL, sign_response=False)


# -- helpers ----------------------------------------------------------------------------


def consume(
    sp: Saml2Client,
    xml: str,
    *,
    outstanding: dict[str, str] | None = None,
    conv_info: dict[str, str] | None = None,
) -> AuthnResponse | None:
    return sp.parse_authn_request_response(
        SigningIdp.encode(xml), BINDING_HTTP_POST, outstanding=outstanding, conv_info=conv_info
    )


def accepted(sp: Saml2Client, xml: str, **kwargs: Any) -> AuthnResponse:
    response = consume(sp, xml, **kwargs)
    assert response is not None and response.assertion is not None and response.name_id
    return response


def rejection(sp: Saml2Client, xml: str, **kwargs: Any) -> BaseException | str:
    """How the SP refused the Response: the exception it raised, or a description when it
    returned without a usable assertion (pysaml2 does that for some checks instead of
    raising). Fails the test if the Response was accepted."""
    try:
        response = consume(sp, xml, **kwargs)
    except Exception as exc:
        return exc
    if response is None:
        return "returned None"
    if response.assertion is None or response.name_id is None:
        return "returned a response with no verified assertion"
    pytest.fail(f"the SP accepted it, NameID={response.name_id.text!r}, ava={response.ava!r}")


def redirect_query(info: dict[str, Any]) -> dict[str, list[str]]:
    location = dict(info["headers"])["Location"]
    return parse_qs(urlsplit(location).query)


# -- keys -------------------------------------------------------------------------------


def test_keypair_files_are_reused_and_the_key_is_private(tmp_path: Path) -> None:
    first = make_keypair(tmp_path, "x", common_name="x.test")
    again = make_keypair(tmp_path, "x", common_name="ignored.test")
    assert first.key_path == tmp_path / "x.key.pem" and first.cert_path == tmp_path / "x.crt.pem"
    assert again.cert_pem == first.cert_pem and again.key_pem == first.key_pem
    assert stat.S_IMODE(first.key_path.stat().st_mode) == 0o600
    assert "-----" not in first.cert_b64 and "\n" not in first.cert_b64
    der = base64.b64decode(first.cert_b64)
    assert x509.load_der_x509_certificate(der) == x509.load_pem_x509_certificate(
        first.cert_pem.encode()
    )


def test_keypair_validity_window(tmp_path: Path) -> None:
    pair = make_keypair(
        tmp_path, "old", common_name="old.test", days_valid=2, not_before_offset_days=-10
    )
    cert = x509.load_pem_x509_certificate(pair.cert_pem.encode())
    now = datetime.now(UTC)
    assert cert.not_valid_after_utc < now - timedelta(days=7)
    assert abs(cert.not_valid_before_utc - (now - timedelta(days=10))) < timedelta(minutes=5)
    assert cert.subject.rfc4514_string() == "CN=old.test"


# -- the IdP itself -----------------------------------------------------------------------


def test_metadata_names_the_sso_endpoint_and_the_signing_cert(
    idp: SigningIdp, idp_keys: KeyPair
) -> None:
    metadata = idp.metadata_xml()
    assert f'entityID="{IDP_ENTITY_ID}"' in metadata
    assert f'Binding="{BINDING_HTTP_REDIRECT}" Location="{IDP_SSO_URL}"' in metadata
    assert 'use="signing"' in metadata and idp_keys.cert_b64 in metadata


def test_genuine_response_is_really_signed(genuine: str, idp_keys: KeyPair) -> None:
    [assertion_id] = idp_tools.assertion_ids(genuine)
    response_id = idp_tools.response_id(genuine)
    assert idp_tools.signature_reference_uris(genuine) == {
        f"Response#{response_id}": f"#{response_id}",
        f"Assertion#{assertion_id}": f"#{assertion_id}",
    }
    assert idp_tools.xmlsec_verifies(genuine, idp_keys.cert_path, node_id=response_id)
    assert idp_tools.xmlsec_verifies(genuine, idp_keys.cert_path, node_id=assertion_id)
    assert "rsa-sha256" in genuine and "rsa-sha1" not in genuine


@pytest.mark.parametrize(
    ("sign_response", "sign_assertion", "signed"),
    [(True, False, {"Response"}), (False, True, {"Assertion"}), (False, False, set())],
)
def test_what_is_signed_is_chosen_per_response(
    idp: SigningIdp, sign_response: bool, sign_assertion: bool, signed: set[str]
) -> None:
    xml = idp.create_response(
        sp_entity_id=SP_ENTITY_ID,
        acs_url=SP_ACS_URL,
        sign_response=sign_response,
        sign_assertion=sign_assertion,
    )
    assert {key.split("#")[0] for key in idp_tools.signature_reference_uris(xml)} == signed


def test_sp_initiated_login_is_accepted(idp: SigningIdp, strict_sp: Saml2Client) -> None:
    request_id, info = strict_sp.prepare_for_authenticate(
        entityid=IDP_ENTITY_ID, relay_state="/next"
    )
    parsed = idp.parse_authn_request_query(redirect_query(info))
    assert (parsed.id, parsed.sp_entity_id, parsed.acs_url) == (
        request_id,
        SP_ENTITY_ID,
        SP_ACS_URL,
    )
    assert parsed.relay_state == "/next" and parsed.signed is False

    xml = idp.create_response(
        sp_entity_id=parsed.sp_entity_id,
        acs_url=parsed.acs_url,
        in_response_to=parsed.id,
        session_index="session-42",
        raw_attributes=[
            RawAttribute("email", ["alice@example.test"]),
            RawAttribute("firstName", ["Alice"]),
            RawAttribute("urn:oid:0.9.2342.19200300.100.1.3", ["alice.oid@example.test"]),
        ],
    )
    response = accepted(strict_sp, xml, outstanding={request_id: "/next"})
    assert response.in_response_to == request_id and response.came_from == "/next"
    assert response.name_id.text == "alice@example.test"
    assert response.assertion.authn_statement[0].session_index == "session-42"
    assert response.ava == {
        "mail": ["alice@example.test"],
        "displayName": ["Alice Example"],
        "eduPersonAffiliation": ["member", "staff"],
        # No NameFormat and in no map: kept under their own names.
        "email": ["alice@example.test"],
        "firstName": ["Alice"],
        "urn:oid:0.9.2342.19200300.100.1.3": ["alice.oid@example.test"],
    }


def test_mapped_attribute_names_travel_as_oids(idp: SigningIdp, strict_sp: Saml2Client) -> None:
    # "firstName" is in pysaml2's eIDAS map, so through ``attributes`` it is sent under
    # that map's URI; ``raw_attributes`` is the way to send the bare name.
    xml = idp.create_response(
        sp_entity_id=SP_ENTITY_ID,
        acs_url=SP_ACS_URL,
        attributes={"mail": ["a@example.test"], "firstName": ["A"]},
    )
    assert 'Name="urn:oid:0.9.2342.19200300.100.1.3"' in xml and 'FriendlyName="mail"' in xml
    assert 'Name="http://eidas.europa.eu/attributes/naturalperson/CurrentGivenName"' in xml
    # ...and pysaml2's reverse map brings it back capitalised.
    assert accepted(strict_sp, xml).ava == {"mail": ["a@example.test"], "FirstName": ["A"]}


def test_idp_initiated_login_is_accepted(genuine: str, strict_sp: Saml2Client) -> None:
    assert "InResponseTo" not in genuine
    response = accepted(strict_sp, genuine)
    assert response.name_id.text == "alice@example.test"
    assert response.ava["mail"] == ["alice@example.test"]


def test_expired_and_future_times_are_signed_and_refused(
    idp: SigningIdp, idp_keys: KeyPair, strict_sp: Saml2Client, make_sp: SpFactory
) -> None:
    expired = idp.create_response(
        sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL, issue_instant_offset_seconds=-600
    )
    early = idp.create_response(
        sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL, issue_instant_offset_seconds=600
    )
    for xml in (expired, early):
        assert idp_tools.xmlsec_verifies(
            xml, idp_keys.cert_path, node_id=idp_tools.response_id(xml)
        )
    assert isinstance(rejection(strict_sp, expired), ResponseLifetimeExceed)
    assert isinstance(rejection(strict_sp, early), ToEarly)
    # pysaml2's clock-skew allowance (seconds) covers both.
    lenient = make_sp(accepted_time_diff=900)
    accepted(lenient, expired)
    accepted(lenient, early)


def test_audience_destination_and_recipient_overrides(
    idp: SigningIdp, strict_sp: Saml2Client
) -> None:
    def create(**overrides: str) -> str:
        return idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL, **overrides)

    wrong_audience = create(audience="http://elsewhere.test/metadata")
    assert _has(wrong_audience, "<{p}Audience>http://elsewhere.test/metadata</{p}Audience>")
    assert "AudienceRestrictions conditions not satisfied" in str(
        rejection(strict_sp, wrong_audience)
    )

    wrong_destination = create(destination="http://elsewhere.test/acs")
    assert 'Destination="http://elsewhere.test/acs"' in wrong_destination
    # pysaml2 does not raise here: it returns a response whose assertion was never read.
    assert (
        rejection(strict_sp, wrong_destination) == "returned a response with no verified assertion"
    )

    wrong_recipient = create(recipient="http://elsewhere.test/acs")
    assert 'Recipient="http://elsewhere.test/acs"' in wrong_recipient
    # pysaml2 compares Recipient only when the caller passes conv_info.
    accepted(strict_sp, wrong_recipient)
    refusal = rejection(strict_sp, wrong_recipient, conv_info={"entity_id": SP_ENTITY_ID})
    assert isinstance(refusal, VerificationError)


def test_post_form_carries_the_encoded_response(idp: SigningIdp, genuine: str) -> None:
    page = idp.post_form(genuine, "http://testserver/saml/test/acs?a=1&b=2", '"/x"<y>')
    assert 'action="http://testserver/saml/test/acs?a=1&amp;b=2"' in page
    assert f'name="SAMLResponse" value="{idp.encode(genuine)}"' in page
    assert 'name="RelayState" value="&quot;/x&quot;&lt;y&gt;"' in page
    assert base64.b64decode(idp.encode(genuine)).decode("utf-8") == genuine
    assert '<button type="submit">' in page and "<script>document.forms[0].submit();" in page
    assert "RelayState" not in idp.post_form(genuine, SP_ACS_URL, None)
    assert '<script nonce="n0nce">' in idp.post_form(
        genuine, SP_ACS_URL, None, script_nonce="n0nce"
    )


# -- AuthnRequests ----------------------------------------------------------------------


def test_signed_redirect_request_is_seen_as_signed(
    idp: SigningIdp, make_sp: SpFactory, sp_keys: KeyPair
) -> None:
    sp = make_sp(signing_keys=sp_keys)
    request_id, info = sp.prepare_for_authenticate(
        entityid=IDP_ENTITY_ID, relay_state="/next", sigalg=SIG_RSA_SHA256
    )
    query = redirect_query(info)
    assert "Signature" in query and query["SigAlg"] == [SIG_RSA_SHA256]
    parsed = idp.parse_authn_request_query(query)
    assert parsed.signed is True and parsed.id == request_id

    signature = query["Signature"][0]
    flipped = ("A" if signature[10] != "A" else "B").join((signature[:10], signature[11:]))
    assert idp.parse_authn_request_query({**query, "Signature": [flipped]}).signed is False
    assert idp.parse_authn_request_query({**query, "RelayState": ["/elsewhere"]}).signed is False
    unsigned = {k: v for k, v in query.items() if k not in ("Signature", "SigAlg")}
    assert idp.parse_authn_request_query(unsigned).signed is False


def test_request_signed_with_a_key_not_in_metadata_is_not_signed(
    idp: SigningIdp, make_sp: SpFactory, attacker_keys: KeyPair
) -> None:
    sp = make_sp(signing_keys=attacker_keys)
    _request_id, info = sp.prepare_for_authenticate(entityid=IDP_ENTITY_ID, sigalg=SIG_RSA_SHA256)
    assert idp.parse_authn_request_query(redirect_query(info)).signed is False


def test_signed_post_request(idp: SigningIdp, make_sp: SpFactory, sp_keys: KeyPair) -> None:
    sp = make_sp(signing_keys=sp_keys)
    request_id, request = sp.create_authn_request(IDP_SSO_URL, sign=True, sign_alg=SIG_RSA_SHA256)
    encoded = base64.b64encode(str(request).encode()).decode()
    parsed = idp.parse_authn_request(encoded, "post")
    assert parsed.signed is True and parsed.id == request_id

    tampered = str(request).replace(SP_ACS_URL, SP_ACS_URL + "?x")
    with pytest.raises(IncorrectlySigned):
        idp.parse_authn_request(base64.b64encode(tampered.encode()).decode(), "post")


def test_requests_naming_an_unknown_acs_or_sp_are_refused(
    idp: SigningIdp, strict_sp: Saml2Client
) -> None:
    _request_id, request = strict_sp.create_authn_request(
        IDP_SSO_URL, assertion_consumer_service_urls=["http://elsewhere.test/acs"]
    )
    with pytest.raises(SAMLError):
        idp.parse_authn_request(base64.b64encode(str(request).encode()).decode(), "post")

    stranger = str(strict_sp.create_authn_request(IDP_SSO_URL)[1]).replace(
        f">{SP_ENTITY_ID}<", ">http://stranger.test/metadata<"
    )
    with pytest.raises(SAMLError):
        idp.parse_authn_request(base64.b64encode(stranger.encode()).decode(), "post")


# -- the mutators -----------------------------------------------------------------------


def test_tamper_name_id(genuine: str, idp_keys: KeyPair, strict_sp: Saml2Client) -> None:
    forged = idp_tools.tamper_name_id(genuine, EVIL)
    assert idp_tools.name_id_text(forged) == EVIL
    [assertion_id] = idp_tools.assertion_ids(forged)
    assert not idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=assertion_id)
    assert isinstance(rejection(strict_sp, forged), SignatureError)


def test_tamper_attribute(genuine: str, strict_sp: Saml2Client) -> None:
    forged = idp_tools.tamper_attribute(genuine, "mail", EVIL)
    assert _has(forged, EVIL + "</{p}AttributeValue>")
    assert isinstance(rejection(strict_sp, forged), SignatureError)
    with pytest.raises(KeyError):
        idp_tools.tamper_attribute(genuine, "no-such-attribute", EVIL)


@pytest.mark.filterwarnings("ignore:The SAML service provider accepts unsigned:UserWarning")
def test_strip_signatures(genuine: str, strict_sp: Saml2Client, make_sp: SpFactory) -> None:
    forged = idp_tools.strip_signatures(genuine)
    assert idp_tools.signature_reference_uris(forged) == {}
    assert isinstance(rejection(strict_sp, forged), SignatureError)
    # The stripped Response is otherwise intact: an SP demanding no signature takes it.
    assert accepted(make_sp(want_response_signed=False, want_assertions_signed=False), forged)


def test_impostor_idp_signs_with_a_key_not_in_metadata(
    idp: SigningIdp, attacker_keys: KeyPair, idp_keys: KeyPair, strict_sp: Saml2Client
) -> None:
    forged = idp_tools.impostor_idp(idp, attacker_keys).create_response(
        sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL
    )
    response_id = idp_tools.response_id(forged)
    assert _has(forged, ">" + IDP_ENTITY_ID + "</{p}Issuer>")
    assert idp_tools.xmlsec_verifies(forged, attacker_keys.cert_path, node_id=response_id)
    assert not idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=response_id)
    assert isinstance(rejection(strict_sp, forged), SignatureError)


def test_wrap_signature_extensions(
    genuine: str,
    assertion_signed_only: str,
    idp_keys: KeyPair,
    strict_sp: Saml2Client,
    make_sp: SpFactory,
) -> None:
    [signed_id] = idp_tools.assertion_ids(assertion_signed_only)
    forged = idp_tools.wrap_signature_extensions(assertion_signed_only, EVIL)
    assert idp_tools.name_id_text(forged) == EVIL
    ids = idp_tools.assertion_ids(forged)
    assert ids[0] == signed_id and len(ids) == 2  # the genuine one first, in Extensions
    assert forged.index(":Extensions>") < forged.index(f'ID="{ids[1]}"')
    # The moved assertion's signature still verifies: only structure can give it away.
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=signed_id)

    assertions_only_sp = make_sp(want_response_signed=False)
    assert isinstance(rejection(assertions_only_sp, forged), SignatureError)
    assert isinstance(rejection(strict_sp, forged), SignatureError)
    assert isinstance(
        rejection(strict_sp, idp_tools.wrap_signature_extensions(genuine, EVIL)), SignatureError
    )


def test_wrap_sibling_assertion(
    genuine: str,
    assertion_signed_only: str,
    idp_keys: KeyPair,
    strict_sp: Saml2Client,
    make_sp: SpFactory,
) -> None:
    [signed_id] = idp_tools.assertion_ids(assertion_signed_only)
    forged = idp_tools.wrap_sibling_assertion(assertion_signed_only, EVIL)
    ids = idp_tools.assertion_ids(forged)
    assert len(ids) == 2 and ids[1] == signed_id
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=signed_id)
    assert _has(forged.split(f'ID="{signed_id}"')[0], ">" + EVIL + "</{p}NameID>")

    assertions_only_sp = make_sp(want_response_signed=False)
    assert isinstance(rejection(assertions_only_sp, forged), InvalidAssertion)
    assert isinstance(rejection(strict_sp, forged), SignatureError)
    assert isinstance(
        rejection(strict_sp, idp_tools.wrap_sibling_assertion(genuine, EVIL)), SignatureError
    )


def test_wrap_reference_to_other_id(
    genuine: str, idp_keys: KeyPair, strict_sp: Saml2Client, make_sp: SpFactory
) -> None:
    forged = idp_tools.wrap_reference_to_other_id(genuine)
    response_id = idp_tools.response_id(forged)
    [assertion_id] = idp_tools.assertion_ids(forged)
    # One signature left, on the Response, naming the Assertion...
    assert idp_tools.signature_reference_uris(forged) == {
        f"Response#{response_id}": f"#{assertion_id}"
    }
    # ...and it verifies: it covers exactly the (now unsigned) Assertion it always did.
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=response_id)

    response_only_sp = make_sp(want_assertions_signed=False)
    for sp in (strict_sp, response_only_sp):
        refusal = rejection(sp, forged)
        assert isinstance(refusal, SignatureError)
        assert "the anchor points to the enclosing element ID attribute': False" in str(refusal)


def test_doctype_xxe_is_refused_unread(
    genuine: str, strict_sp: Saml2Client, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret-canary", encoding="utf-8")
    forged = idp_tools.with_doctype_xxe(genuine, secret)
    assert f'<!ENTITY xxe SYSTEM "{secret.resolve().as_uri()}">' in forged
    assert _has(forged, ">&xxe;</{p}NameID>")
    refusal = rejection(strict_sp, forged)
    assert isinstance(refusal, EntitiesForbidden)
    assert "s3cret-canary" not in repr(refusal)
    assert 'SYSTEM "http://attacker.test/x"' in idp_tools.with_doctype_xxe(
        genuine, "http://attacker.test/x"
    )


def test_entity_expansion_is_refused(genuine: str, strict_sp: Saml2Client) -> None:
    forged = idp_tools.with_entity_expansion(genuine)
    assert '<!ENTITY lol0 "lol">' in forged and _has(forged, ">&lol10;</{p}NameID>")
    assert isinstance(rejection(strict_sp, forged), EntitiesForbidden)


def test_comment_in_name_id_keeps_the_signature_and_is_read_whole(
    idp: SigningIdp, idp_keys: KeyPair, strict_sp: Saml2Client
) -> None:
    xml = idp.create_response(
        sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL, name_id="alice@example.test.evil.test"
    )
    forged = idp_tools.inject_comment_in_name_id(xml)
    assert _has(forged, ">alice@example.test<!---->.evil.test</{p}NameID>")
    [assertion_id] = idp_tools.assertion_ids(forged)
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=assertion_id)
    assert idp_tools.xmlsec_verifies(
        forged, idp_keys.cert_path, node_id=idp_tools.response_id(forged)
    )
    assert accepted(strict_sp, forged).name_id.text == "alice@example.test.evil.test"
    with pytest.raises(ValueError):
        idp_tools.inject_comment_in_name_id(
            idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL)
        )


# -- responses bent before signing, and other algorithms ----------------------------------


def _attributes(xml: str, local_name: str) -> list[dict[str, str]]:
    """The attributes of every element called ``local_name``, in document order."""
    from xml.dom import minidom

    elements = minidom.parseString(xml.encode()).getElementsByTagNameNS("*", local_name)
    return [dict(element.attributes.items()) for element in elements]


@pytest.mark.parametrize(
    ("edit", "element", "attribute"),
    [
        (idp_tools.drop_destination, "Response", "Destination"),
        (idp_tools.drop_audience_restriction, "AudienceRestriction", None),
        (idp_tools.drop_bearer_not_on_or_after, "SubjectConfirmationData", "NotOnOrAfter"),
        (idp_tools.drop_conditions_not_on_or_after, "Conditions", "NotOnOrAfter"),
    ],
    ids=["destination", "audience", "bearer-expiry", "conditions-expiry"],
)
def test_bent_idp_signs_the_edited_response(
    idp: SigningIdp,
    idp_keys: KeyPair,
    strict_sp: Saml2Client,
    edit: idp_tools.Edit,
    element: str,
    attribute: str | None,
) -> None:
    genuine = idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL)
    xml = idp_tools.bent_idp(idp, edit).create_response(
        sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL
    )
    if attribute is None:  # the element itself is gone
        assert _attributes(genuine, element) and not _attributes(xml, element)
    else:
        assert all(attribute in found for found in _attributes(genuine, element))
        assert not any(attribute in found for found in _attributes(xml, element))
    assert [c.get("Recipient") for c in _attributes(xml, "SubjectConfirmationData")] == [SP_ACS_URL]
    [assertion_id] = idp_tools.assertion_ids(xml)
    assert idp_tools.xmlsec_verifies(xml, idp_keys.cert_path, node_id=idp_tools.response_id(xml))
    assert idp_tools.xmlsec_verifies(xml, idp_keys.cert_path, node_id=assertion_id)
    # pysaml2 alone accepts every one of them: refusing them is the service provider's job.
    accepted(strict_sp, xml)


def test_idp_signing_with_signs_with_the_algorithms_given(
    idp: SigningIdp, idp_keys: KeyPair, strict_sp: Saml2Client
) -> None:
    legacy = idp_tools.idp_signing_with(
        idp, signing_algorithm=SIG_RSA_SHA1, digest_algorithm=DIGEST_SHA1
    )
    xml = legacy.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL)
    assert idp_tools.signature_algorithms(xml) == {(SIG_RSA_SHA1, DIGEST_SHA1)}
    assert idp_tools.xmlsec_verifies(xml, idp_keys.cert_path, node_id=idp_tools.response_id(xml))
    # pysaml2 verifies SHA-1 signatures without complaint.
    accepted(strict_sp, xml)
    genuine = idp.create_response(sp_entity_id=SP_ENTITY_ID, acs_url=SP_ACS_URL)
    assert (SIG_RSA_SHA1, DIGEST_SHA1) not in idp_tools.signature_algorithms(genuine)
