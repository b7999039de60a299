"""Forged and bent Responses: each is refused with 403 ``saml_invalid`` and nobody is
signed in (nor any account created for the name it smuggles in).

The forgeries come from tests/saml/idp_tools.py, whose own tests show that each is what
its name says (the signatures that must still verify do, per xmlsec1). The bent fields
(times, audience, destination, recipient) are set by the IdP before it signs, so each
of those refusals comes from the check it names, not from a broken signature. Every
attack is made from a Response that the ``test`` provider accepts untouched
(``test_the_untouched_response_is_accepted``), IdP-initiated unless said otherwise, so
no request id stands in the way of the check under test.
"""

from __future__ import annotations

import http.server
import logging
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.test import Client
from saml2 import saml, samlp
from saml2.s_utils import factory
from saml2.xmldsig import (
    DIGEST_SHA1,
    DIGEST_SHA224,
    DIGEST_SHA256,
    DIGEST_SHA512,
    SIG_RSA_SHA1,
    SIG_RSA_SHA224,
    SIG_RSA_SHA256,
    SIG_RSA_SHA512,
)

from appframework.saml import SamlProvider
from testproject.blog.models import User
from testproject.local_idp.keys import KeyPair
from testproject.local_idp.saml_idp import SigningIdp
from tests.peer_server import PeerServer
from tests.saml import idp_tools

from .conftest import (
    ACS_URL,
    ALICE,
    EVIL,
    ProviderFactory,
    SettingsInstaller,
    assert_problem,
    assert_redirect,
    authn_request_query,
    post_acs,
    respond,
    signed_in_user,
)

pytestmark = pytest.mark.django_db

ELSEWHERE = "http://elsewhere.test"
# The reasons logged (pysaml2's exception and message, or the ACS's own words).
BAD_SIGNATURE = "SignatureError: Failed to verify signature"
NO_RESPONSE_SIGNATURE = "SignatureError: Signature missing for response"
REFERENCE_ELSEWHERE = "Signature failed to meet constraints on xmldsig"
DTD_REFUSED = "unparsable XML (DTDForbidden)"
WEAK_ALGORITHM = "a signature uses an algorithm this provider does not accept"


Refusal = Callable[..., None]


@pytest.fixture
def assert_refused(caplog: pytest.LogCaptureFixture) -> Refusal:
    """``assert_refused(xml, reason, smuggled=None)``: 403 saml_invalid, logged with
    ``reason`` (so the check named is the one that refused it), no session for the
    browser, and no account for ``smuggled`` nor for the genuine user."""
    caplog.set_level(logging.WARNING, logger="appframework.saml")

    def check(xml: str, reason: str, *, smuggled: str | None = None) -> None:
        caplog.clear()
        browser = Client()
        assert_problem(post_acs(browser, xml, relay_state="/posts"), 403, "saml_invalid")
        assert signed_in_user(browser) is None
        if smuggled is not None:
            assert not User.objects.filter(email__iexact=smuggled).exists()
        assert not User.objects.filter(email__iexact=ALICE).exists()
        logged = [r.getMessage() for r in caplog.records if r.name == "appframework.saml"]
        assert len(logged) == 1 and reason in logged[0], logged

    return check


@pytest.fixture
def genuine(idp: SigningIdp) -> str:
    """IdP-initiated; Response and Assertion signed."""
    return respond(idp)


@pytest.fixture
def assertion_signed_only(idp: SigningIdp) -> str:
    return respond(idp, sign_response=False)


def test_the_untouched_response_is_accepted(genuine: str, provider: SamlProvider) -> None:
    browser = Client()
    assert_redirect(post_acs(browser, genuine, relay_state="/posts"), "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


# -- signatures ---------------------------------------------------------------------------------


def test_tampered_name_id(assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider) -> None:
    # No mail attribute: the NameID alone would name the account.
    xml = respond(idp, attributes={"displayName": ["Alice"]})
    assert_refused(idp_tools.tamper_name_id(xml, EVIL), BAD_SIGNATURE, smuggled=EVIL)


def test_tampered_attribute(assert_refused: Refusal, genuine: str, provider: SamlProvider) -> None:
    assert_refused(idp_tools.tamper_attribute(genuine, "mail", EVIL), BAD_SIGNATURE, smuggled=EVIL)


def test_unsigned_response(assert_refused: Refusal, genuine: str, provider: SamlProvider) -> None:
    stripped = idp_tools.strip_signatures(genuine)
    assert idp_tools.signature_reference_uris(stripped) == {}
    assert_refused(stripped, NO_RESPONSE_SIGNATURE)


def test_assertion_signed_but_response_not_is_refused_even_when_assertions_need_no_signature(
    assert_refused: Refusal,
    assertion_signed_only: str,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
) -> None:
    assert {k.split("#")[0] for k in idp_tools.signature_reference_uris(assertion_signed_only)} == {
        "Assertion"
    }
    saml_settings()
    assert_refused(assertion_signed_only, NO_RESPONSE_SIGNATURE)
    saml_settings(make_provider(want_assertions_signed=False))
    assert_refused(assertion_signed_only, NO_RESPONSE_SIGNATURE)


def test_response_signed_but_assertion_not_is_refused_by_default_and_accepted_when_allowed(
    assert_refused: Refusal,
    idp: SigningIdp,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
) -> None:
    xml = respond(idp, sign_assertion=False)
    assert {k.split("#")[0] for k in idp_tools.signature_reference_uris(xml)} == {"Response"}
    saml_settings()
    assert_refused(xml, "SignatureError: Signature missing for assertion")

    saml_settings(make_provider(want_assertions_signed=False))
    browser = Client()
    assert_redirect(post_acs(browser, xml, relay_state="/posts"), "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


def test_signature_by_a_key_not_in_the_idp_metadata(
    assert_refused: Refusal,
    idp: SigningIdp,
    idp_keys: KeyPair,
    attacker_keys: KeyPair,
    provider: SamlProvider,
) -> None:
    forged = respond(idp_tools.impostor_idp(idp, attacker_keys))
    # Same issuer, a signature that verifies with the attacker's certificate (which the
    # document carries in its KeyInfo), and not with the configured one.
    assert f">{idp.entity_id}</ns1:Issuer>" in forged
    assert attacker_keys.cert_b64 in forged and idp_keys.cert_b64 not in forged
    response_id = idp_tools.response_id(forged)
    assert idp_tools.xmlsec_verifies(forged, attacker_keys.cert_path, node_id=response_id)
    assert_refused(forged, BAD_SIGNATURE)


# -- signature wrapping -------------------------------------------------------------------------


def test_xsw_signed_assertion_moved_into_extensions(
    assert_refused: Refusal,
    genuine: str,
    assertion_signed_only: str,
    idp_keys: KeyPair,
    provider: SamlProvider,
) -> None:
    [signed_id] = idp_tools.assertion_ids(assertion_signed_only)
    forged = idp_tools.wrap_signature_extensions(assertion_signed_only, EVIL)
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=signed_id)
    assert idp_tools.name_id_text(forged) == EVIL
    assert_refused(forged, NO_RESPONSE_SIGNATURE, smuggled=EVIL)
    # Signed at both levels: the Response signature no longer matches.
    assert_refused(idp_tools.wrap_signature_extensions(genuine, EVIL), BAD_SIGNATURE, smuggled=EVIL)


def test_xsw_extra_unsigned_sibling_assertion(
    assert_refused: Refusal,
    genuine: str,
    assertion_signed_only: str,
    idp_keys: KeyPair,
    provider: SamlProvider,
) -> None:
    [signed_id] = idp_tools.assertion_ids(assertion_signed_only)
    forged = idp_tools.wrap_sibling_assertion(assertion_signed_only, EVIL)
    assert len(idp_tools.assertion_ids(forged)) == 2
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=signed_id)
    assert_refused(forged, NO_RESPONSE_SIGNATURE, smuggled=EVIL)
    assert_refused(idp_tools.wrap_sibling_assertion(genuine, EVIL), BAD_SIGNATURE, smuggled=EVIL)


def test_xsw_response_signature_referencing_another_id(
    assert_refused: Refusal,
    genuine: str,
    idp_keys: KeyPair,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
) -> None:
    forged = idp_tools.wrap_reference_to_other_id(genuine)
    response_id = idp_tools.response_id(forged)
    [assertion_id] = idp_tools.assertion_ids(forged)
    assert idp_tools.signature_reference_uris(forged) == {
        f"Response#{response_id}": f"#{assertion_id}"
    }
    assert idp_tools.xmlsec_verifies(forged, idp_keys.cert_path, node_id=response_id)
    saml_settings()
    assert_refused(forged, REFERENCE_ELSEWHERE)
    # Where only the Response signature is required, it is the one check left.
    saml_settings(make_provider(want_assertions_signed=False))
    assert_refused(forged, REFERENCE_ELSEWHERE)


# -- time, audience, destination, recipient -----------------------------------------------------


def test_expired_beyond_clock_skew(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    # valid_for_seconds=300: NotOnOrAfter 100 s ago, CLOCK_SKEW is 60.
    assert_refused(respond(idp, issue_instant_offset_seconds=-400), "ResponseLifetimeExceed")


def test_expired_within_clock_skew_is_accepted(idp: SigningIdp, provider: SamlProvider) -> None:
    # NotOnOrAfter 20 s ago: inside the 60 s of CLOCK_SKEW.
    browser = Client()
    xml = respond(idp, issue_instant_offset_seconds=-320)
    assert_redirect(post_acs(browser, xml, relay_state="/posts"), "/posts")


def test_expired_with_clock_skew_zero(
    assert_refused: Refusal, idp: SigningIdp, saml_settings: SettingsInstaller
) -> None:
    saml_settings(CLOCK_SKEW=0)
    assert_refused(respond(idp, issue_instant_offset_seconds=-320), "ResponseLifetimeExceed")


def test_not_yet_valid_beyond_clock_skew(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    assert_refused(respond(idp, issue_instant_offset_seconds=180), "ToEarly")


def test_not_yet_valid_within_clock_skew_is_accepted(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp, issue_instant_offset_seconds=20)
    assert_redirect(post_acs(Client(), xml, relay_state="/posts"), "/posts")


def test_wrong_audience(assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider) -> None:
    xml = respond(idp, audience=f"{ELSEWHERE}/metadata")
    assert f"<ns1:Audience>{ELSEWHERE}/metadata</ns1:Audience>" in xml
    assert_refused(xml, "AudienceRestrictions conditions not satisfied")


def test_wrong_destination(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp, destination=f"{ELSEWHERE}/acs")
    assert f'Destination="{ELSEWHERE}/acs"' in xml
    # pysaml2 answers a Destination mismatch with a response without an assertion.
    assert_refused(xml, "pysaml2 returned no assertion")


def test_wrong_recipient(assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider) -> None:
    xml = respond(idp, recipient=f"{ELSEWHERE}/acs")
    assert f'Recipient="{ELSEWHERE}/acs"' in xml and f'Destination="{ACS_URL}"' in xml
    assert_refused(xml, "VerificationError: No valid recipient")


def test_unknown_in_response_to(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    assert_refused(respond(idp, "_never_issued"), "'_never_issued' is not an outstanding request")


# -- what the Web SSO profile requires beyond pysaml2's checks ------------------------------------
# Each Response below is signed (Response and Assertion) with the missing or extra part
# already in place, so pysaml2's signature checks pass and the refusal is the profile's.


def test_a_signed_response_without_destination(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp_tools.bent_idp(idp, idp_tools.drop_destination))
    assert "Destination=" not in xml
    assert idp_tools.xmlsec_verifies(xml, idp.keypair.cert_path, node_id=idp_tools.response_id(xml))
    # The SAML bindings require Destination on a signed message: without it, a Response
    # meant for another SP trusting the same IdP could be posted here.
    assert_refused(xml, "the Response has no Destination")


def test_an_assertion_without_audience_restriction(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp_tools.bent_idp(idp, idp_tools.drop_audience_restriction))
    assert "AudienceRestriction" not in xml and "NotOnOrAfter" in xml
    # Such an assertion is good at every SP that trusts the IdP.
    assert_refused(xml, "the assertion has no AudienceRestriction")


def test_every_audience_restriction_must_name_this_sp(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    def restrict_to_elsewhere_too(response: samlp.Response, assertion: saml.Assertion) -> None:
        assertion.conditions.audience_restriction.append(
            factory(
                saml.AudienceRestriction,
                audience=[factory(saml.Audience, text=f"{ELSEWHERE}/metadata")],
            )
        )

    xml = respond(idp_tools.bent_idp(idp, restrict_to_elsewhere_too))
    assert xml.count("<ns1:AudienceRestriction>") == 2
    # Two restrictions must both hold (SAML core 2.5.1.4): this one is for elsewhere only.
    assert_refused(xml, "an AudienceRestriction does not name this service provider")


def test_a_bearer_confirmation_without_not_on_or_after(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp_tools.bent_idp(idp, idp_tools.drop_bearer_not_on_or_after))
    confirmation = xml[xml.index("<ns1:SubjectConfirmationData") :]
    assert "NotOnOrAfter" not in confirmation[: confirmation.index(">")]
    assert_refused(xml, "a bearer SubjectConfirmationData has no NotOnOrAfter")


@pytest.mark.parametrize(
    ("signing", "digest"),
    [
        (SIG_RSA_SHA1, DIGEST_SHA1),
        (SIG_RSA_SHA256, DIGEST_SHA1),
        (SIG_RSA_SHA1, DIGEST_SHA256),
        (SIG_RSA_SHA224, DIGEST_SHA224),
    ],
    ids=["rsa-sha1+sha1", "rsa-sha256+sha1", "rsa-sha1+sha256", "rsa-sha224+sha224"],
)
def test_sha1_or_weaker_signatures_are_refused(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider, signing: str, digest: str
) -> None:
    legacy = idp_tools.idp_signing_with(idp, signing_algorithm=signing, digest_algorithm=digest)
    xml = respond(legacy)
    assert idp_tools.signature_algorithms(xml) == {(signing, digest)}
    assert idp_tools.xmlsec_verifies(xml, idp.keypair.cert_path, node_id=idp_tools.response_id(xml))
    assert_refused(xml, WEAK_ALGORITHM)


@pytest.mark.parametrize(
    ("signing", "digest"),
    [(SIG_RSA_SHA1, DIGEST_SHA1), (SIG_RSA_SHA256, DIGEST_SHA1), (SIG_RSA_SHA1, DIGEST_SHA256)],
)
def test_allow_sha1_accepts_sha1_for_a_legacy_idp(
    idp: SigningIdp,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    signing: str,
    digest: str,
) -> None:
    saml_settings(make_provider(allow_sha1=True))
    legacy = idp_tools.idp_signing_with(idp, signing_algorithm=signing, digest_algorithm=digest)
    browser = Client()
    assert_redirect(post_acs(browser, respond(legacy), relay_state="/posts"), "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


def test_allow_sha1_still_refuses_weaker_than_sha1_and_sha224(
    assert_refused: Refusal,
    idp: SigningIdp,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
) -> None:
    saml_settings(make_provider(allow_sha1=True))
    legacy = idp_tools.idp_signing_with(
        idp, signing_algorithm=SIG_RSA_SHA224, digest_algorithm=DIGEST_SHA224
    )
    assert_refused(respond(legacy), WEAK_ALGORITHM)


def test_sha512_is_accepted(idp: SigningIdp, provider: SamlProvider) -> None:
    strong = idp_tools.idp_signing_with(
        idp, signing_algorithm=SIG_RSA_SHA512, digest_algorithm=DIGEST_SHA512
    )
    assert_redirect(post_acs(Client(), respond(strong), relay_state="/posts"), "/posts")


# -- the XML parser -----------------------------------------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    paths: list[str]

    def do_GET(self) -> None:
        type(self).paths.append(self.path)
        body = b"mallory@example.test"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 recording every path it is asked for."""
    handler = type("Recorder", (_Recorder,), {"paths": []})
    server = PeerServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.paths
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_xxe_external_entity_url_is_never_fetched(
    assert_refused: Refusal, genuine: str, provider: SamlProvider, listener: tuple[str, list[str]]
) -> None:
    base, paths = listener
    forged = idp_tools.with_doctype_xxe(genuine, f"{base}/xxe")
    assert f'<!ENTITY xxe SYSTEM "{base}/xxe">' in forged
    assert_refused(forged, DTD_REFUSED, smuggled=EVIL)
    time.sleep(0.2)  # a fetch on another thread would have arrived by now
    assert paths == []
    # The listener does record what reaches it.
    with urllib.request.urlopen(f"{base}/control", timeout=5) as answer:
        assert answer.read() == EVIL.encode()
    assert paths == ["/control"]


def test_xxe_external_entity_file_is_never_read(
    genuine: str, provider: SamlProvider, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("leaked@example.test", encoding="utf-8")
    forged = idp_tools.with_doctype_xxe(genuine, secret)
    assert secret.resolve().as_uri() in forged
    browser = Client()
    response = post_acs(browser, forged)
    assert_problem(response, 403, "saml_invalid")
    assert b"leaked" not in response.content
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


def test_billion_laughs(assert_refused: Refusal, genuine: str, provider: SamlProvider) -> None:
    forged = idp_tools.with_entity_expansion(genuine)
    started = time.monotonic()
    assert_refused(forged, DTD_REFUSED)
    assert time.monotonic() - started < 5


def test_comment_in_name_id_is_read_whole(idp: SigningIdp, provider: SamlProvider) -> None:
    victim = User.objects.create_user(ALICE, None, name="Alice")
    # No email attribute: the (emailAddress) NameID names the account.
    xml = respond(idp, name_id="alice@example.test.evil.test", attributes={})
    forged = idp_tools.inject_comment_in_name_id(xml)
    assert ">alice@example.test<!---->.evil.test</ns1:NameID>" in forged

    browser = Client()
    response = post_acs(browser, forged, relay_state="/posts")

    signed_in = signed_in_user(browser)
    assert signed_in != victim
    if response.status_code == 302:
        assert response["Location"] == "/posts"
        assert signed_in is not None and signed_in.email == "alice@example.test.evil.test"
        assert set(User.objects.values_list("email", flat=True)) == {
            ALICE,
            "alice@example.test.evil.test",
        }
    else:
        assert_problem(response, 403, "saml_invalid")
        assert signed_in is None
        assert list(User.objects.values_list("email", flat=True)) == [ALICE]


@pytest.mark.parametrize("root", ["AuthnRequest", "LogoutResponse"])
def test_a_document_whose_root_is_not_a_response(
    assert_refused: Refusal, idp: SigningIdp, provider: SamlProvider, root: str
) -> None:
    if root == "AuthnRequest":
        # The SP's own AuthnRequest, as the IdP received it.
        login = Client().get("/saml/test/login")
        xml = idp.parse_authn_request_query(authn_request_query(login["Location"])).xml
    else:
        xml = (
            '<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
            'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_lr1" Version="2.0" '
            f'IssueInstant="2026-01-01T00:00:00Z" Destination="{ACS_URL}">'
            f"<saml:Issuer>{idp.entity_id}</saml:Issuer><samlp:Status>"
            '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>'
            "</samlp:Status></samlp:LogoutResponse>"
        )
    assert f":{root} " in xml
    assert_refused(xml, "not a Response")


# -- what the refusal says ----------------------------------------------------------------------


def test_the_answer_does_not_say_which_check_failed_and_the_log_does(
    idp: SigningIdp, genuine: str, provider: SamlProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="appframework.saml")
    bodies = {
        post_acs(Client(), xml).content
        for xml in (
            idp_tools.strip_signatures(genuine),
            respond(idp, audience=f"{ELSEWHERE}/metadata"),
            respond(idp, "_never_issued"),
            idp_tools.with_entity_expansion(genuine),
        )
    }
    assert len(bodies) == 1
    reasons = [r.getMessage() for r in caplog.records if r.name == "appframework.saml"]
    assert all(
        r.levelno == logging.WARNING for r in caplog.records if r.name == "appframework.saml"
    )
    assert len(reasons) == 4
    assert any("_never_issued" in reason for reason in reasons)
    assert any("unparsable XML" in reason for reason in reasons)


def test_a_refusal_is_logged_on_one_line_of_bounded_length(
    idp: SigningIdp, provider: SamlProvider, caplog: pytest.LogCaptureFixture
) -> None:
    """An anonymous POST must not write what it likes into the log: an InResponseTo of
    30 000 characters with a line break is reported in one short line."""
    caplog.set_level(logging.WARNING, logger="appframework.saml")
    forged_line = "\nWARNING appframework.saml: SAML response accepted for admin@example.com"
    huge = "_" + "x" * 30_000 + forged_line.replace("\n", "&#10;")
    xml = (
        '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r1" '
        f'Version="2.0" IssueInstant="2026-01-01T00:00:00Z" InResponseTo="{huge}" '
        f'Destination="{ACS_URL}"/>'
    )
    assert_problem(post_acs(Client(), xml), 403, "saml_invalid")
    [record] = [r for r in caplog.records if r.name == "appframework.saml"]
    line = record.getMessage()
    assert len(line) <= 500, len(line)
    assert "\n" not in line and "\r" not in line
    assert line.startswith("SAML response refused: InResponseTo '_xxx")


@pytest.mark.parametrize("kind", ["tampered", "expired", "unsigned", "wrong_audience"])
def test_pysaml2_writes_no_error_or_traceback_of_its_own_for_a_refusal(
    idp: SigningIdp,
    genuine: str,
    provider: SamlProvider,
    caplog: pytest.LogCaptureFixture,
    kind: str,
) -> None:
    # The suite's conftest silences the "saml2" logger; a project logging at INFO does not.
    caplog.set_level(logging.INFO, logger="saml2")
    caplog.set_level(logging.WARNING, logger="appframework.saml")
    xml = {
        "tampered": lambda: idp_tools.tamper_attribute(genuine, "mail", EVIL),
        "expired": lambda: respond(idp, issue_instant_offset_seconds=-400),
        "unsigned": lambda: idp_tools.strip_signatures(genuine),
        "wrong_audience": lambda: respond(idp, audience=f"{ELSEWHERE}/metadata"),
    }[kind]()
    assert_problem(post_acs(Client(), xml), 403, "saml_invalid")
    theirs = [r for r in caplog.records if r.name.split(".")[0] == "saml2"]
    assert theirs == [], [(r.name, r.levelname, r.getMessage()[:80]) for r in theirs]
    ours = [r for r in caplog.records if r.name == "appframework.saml"]
    assert len(ours) == 1 and ours[0].exc_info is None and "\n" not in ours[0].getMessage()


def test_pysaml2_logs_outside_a_validation_are_left_alone(
    genuine: str, provider: SamlProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="saml2")
    post_acs(Client(), idp_tools.strip_signatures(genuine))
    logging.getLogger("saml2.response").error("not during a validation")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("saml2")] == [
        "not during a validation"
    ]
