"""A small signing SAML 2.0 identity provider built on pysaml2, with no web framework.

The tests drive it in-process to produce Responses that ``xmlsec1`` really signed, and
the demo's local IdP puts it behind an HTTP view. It trusts a fixed list of service
providers, learnt from metadata generated out of :class:`SpInfo`, and can bend every
field a service provider must check (audience, recipient, destination, validity window,
which parts are signed) while keeping those fields inside the signed content, so a test
of a rejection exercises the check it names rather than a broken signature.
"""

from __future__ import annotations

import base64
import datetime
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

from saml2 import (
    BINDING_HTTP_POST,
    BINDING_HTTP_REDIRECT,
    SAMLError,
    class_name,
    saml,
    samlp,
)
from saml2.authn_context import PASSWORDPROTECTEDTRANSPORT
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.s_utils import factory
from saml2.saml import NAMEID_FORMAT_EMAILADDRESS
from saml2.server import Server
from saml2.sigver import (
    get_xmlsec_binary,
    pre_signature_part,
    signed_instance_factory,
    verify_redirect_signature,
)
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from testproject.local_idp.keys import KeyPair

__all__ = [
    "DEFAULT_ATTRIBUTES",
    "NAMEID_FORMAT_EMAILADDRESS",
    "ParsedRequest",
    "RawAttribute",
    "SigningIdp",
    "SpInfo",
    "sp_metadata_xml",
]

DEFAULT_ATTRIBUTES: Final[Mapping[str, Sequence[str]]] = {
    "mail": ["alice@example.test"],
    "displayName": ["Alice Example"],
    "eduPersonAffiliation": ["member", "staff"],
}

_BINDINGS: Final[Mapping[str, str]] = {
    "redirect": BINDING_HTTP_REDIRECT,
    "post": BINDING_HTTP_POST,
    BINDING_HTTP_REDIRECT: BINDING_HTTP_REDIRECT,
    BINDING_HTTP_POST: BINDING_HTTP_POST,
}

_TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class SpInfo:
    """A service provider the IdP trusts: its entity id, its one HTTP-POST ACS, and the
    base64 (unarmoured) certificate it signs AuthnRequests with, if it does."""

    entity_id: str
    acs_url: str
    cert_b64: str | None = None


@dataclass(frozen=True)
class ParsedRequest:
    id: str
    sp_entity_id: str
    # The ACS the Response must go to: the request's AssertionConsumerServiceURL when
    # the SP's metadata lists it (an unlisted one is refused), else the metadata default.
    acs_url: str
    # True only when a signature was present and verified against the SP's metadata
    # certificate; an unsigned request and one whose signature does not verify are
    # both False (pysaml2 itself ignores redirect signatures unless told to demand them).
    signed: bool
    relay_state: str | None = None
    xml: str = ""


@dataclass(frozen=True)
class RawAttribute:
    """An attribute put into the AttributeStatement exactly as given, bypassing pysaml2's
    attribute maps: for names no map knows, or a known name in an unusual NameFormat."""

    name: str
    values: Sequence[str]
    name_format: str | None = None
    friendly_name: str | None = None


class SigningIdp:
    """A SAML IdP whose Responses are signed by ``xmlsec1``: the Response, its Assertion
    or both (both by default), chosen per call.

    All pysaml2 state (configuration, metadata store, security context) is built once
    here; the methods only create and parse messages.
    """

    def __init__(
        self,
        *,
        entity_id: str,
        sso_url: str,
        keypair: KeyPair,
        service_providers: Sequence[SpInfo],
    ) -> None:
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.keypair = keypair
        self.service_providers: tuple[SpInfo, ...] = tuple(service_providers)
        self._xmlsec_binary: str = get_xmlsec_binary()
        config = IdPConfig()
        config.load(self._config_dict())
        self._server = Server(config=config)
        self._metadata_xml: str = _as_text(create_metadata_string(None, config=config))

    def _config_dict(self) -> dict[str, Any]:
        return {
            "entityid": self.entity_id,
            "xmlsec_binary": self._xmlsec_binary,
            "key_file": str(self.keypair.key_path),
            "cert_file": str(self.keypair.cert_path),
            "metadata": {"inline": [sp_metadata_xml(sp) for sp in self.service_providers]},
            "service": {
                "idp": {
                    "endpoints": {
                        "single_sign_on_service": [(self.sso_url, BINDING_HTTP_REDIRECT)],
                    },
                    "name_id_format": [NAMEID_FORMAT_EMAILADDRESS],
                    # pysaml2 7.5 still defaults to RSA-SHA1 with a SHA-1 digest. These
                    # two are read per service: at the top level they are ignored.
                    "signing_algorithm": SIG_RSA_SHA256,
                    "digest_algorithm": DIGEST_SHA256,
                    # Signatures on requests are reported (ParsedRequest.signed), not
                    # demanded: whether an unsigned request is acceptable is the caller's
                    # policy, and the tests need to see both kinds.
                    "want_authn_requests_signed": False,
                    "policy": {"default": {"name_form": saml.NAME_FORMAT_URI}},
                },
            },
        }

    # -- metadata -------------------------------------------------------------------

    def metadata_xml(self) -> str:
        """The IdP's EntityDescriptor: SSO over HTTP-Redirect and the signing certificate."""
        return self._metadata_xml

    # -- requests -------------------------------------------------------------------

    def parse_authn_request(
        self,
        saml_request: str,
        binding: str = "redirect",
        relay_state: str | None = None,
        *,
        sig_alg: str | None = None,
        signature: str | None = None,
    ) -> ParsedRequest:
        """Parse the ``SAMLRequest`` value as it arrived (deflated+base64 for redirect,
        base64 for POST).

        A redirect request's signature lives in the ``SigAlg``/``Signature`` query
        parameters; pass them here, or use :meth:`parse_authn_request_query` with the
        whole query. An AuthnRequest from an SP that is not configured, or naming an ACS
        its metadata does not list, raises :class:`saml2.SAMLError`; a POST request whose
        embedded signature does not verify raises pysaml2's ``IncorrectlySigned``.
        """
        binding_uri = _BINDINGS[binding]
        request = self._server.parse_authn_request(saml_request, binding_uri)
        if request is None:
            raise SAMLError("unparseable AuthnRequest")
        message = request.message
        sp_entity_id = (message.issuer.text or "").strip() if message.issuer else ""
        if sp_entity_id not in {sp.entity_id for sp in self.service_providers}:
            raise SAMLError(f"AuthnRequest from an unknown service provider: {sp_entity_id!r}")
        args = self._server.response_args(message, [BINDING_HTTP_POST])

        if binding_uri == BINDING_HTTP_REDIRECT:
            signed = self._redirect_signature_ok(
                sp_entity_id, saml_request, relay_state, sig_alg, signature
            )
        else:
            # pysaml2 verifies an embedded signature while parsing and raises if it is
            # wrong, so one that is still present here verified.
            signed = message.signature is not None

        return ParsedRequest(
            id=message.id,
            sp_entity_id=sp_entity_id,
            acs_url=args["destination"],
            signed=signed,
            relay_state=relay_state,
            xml=_as_text(request.xmlstr),
        )

    def parse_authn_request_query(self, query: Mapping[str, str | Sequence[str]]) -> ParsedRequest:
        """Parse an HTTP-Redirect request from its decoded query parameters (a plain dict,
        or the lists ``urllib.parse.parse_qs`` gives), checking ``Signature``/``SigAlg``."""

        def one(key: str) -> str | None:
            value = query.get(key)
            if value is None or isinstance(value, str):
                return value
            return value[0] if value else None

        saml_request = one("SAMLRequest")
        if not saml_request:
            raise SAMLError("no SAMLRequest in the query")
        return self.parse_authn_request(
            saml_request,
            "redirect",
            one("RelayState"),
            sig_alg=one("SigAlg"),
            signature=one("Signature"),
        )

    def _redirect_signature_ok(
        self,
        sp_entity_id: str,
        saml_request: str,
        relay_state: str | None,
        sig_alg: str | None,
        signature: str | None,
    ) -> bool:
        if not sig_alg or not signature:
            return False
        # pysaml2 rebuilds the signed octets by re-encoding the decoded parameters with
        # urllib, so an SP that percent-encodes differently (lowercase hex, say) fails
        # here although its signature is fine; pysaml2 SPs encode the same way.
        message = {"SAMLRequest": saml_request, "SigAlg": sig_alg, "Signature": signature}
        if relay_state is not None:
            message["RelayState"] = relay_state
        certs = self._server.metadata.certs(sp_entity_id, "spsso", "signing")
        for _name, cert in certs:
            try:
                if verify_redirect_signature(message, self._server.sec.sec_backend, cert):
                    return True
            except Exception:
                # A signature that is not even decodable (bad base64, unknown SigAlg)
                # is simply not a valid one.
                continue
        return False

    # -- responses ------------------------------------------------------------------

    def create_response(
        self,
        *,
        sp_entity_id: str,
        acs_url: str,
        in_response_to: str | None = None,
        name_id: str = "alice@example.test",
        name_id_format: str = NAMEID_FORMAT_EMAILADDRESS,
        attributes: Mapping[str, Sequence[str]] | None = None,
        raw_attributes: Sequence[RawAttribute] | Mapping[str, Sequence[str]] | None = None,
        sign_response: bool = True,
        sign_assertion: bool = True,
        session_index: str | None = None,
        valid_for_seconds: int = 300,
        issue_instant_offset_seconds: int = 0,
        audience: str | None = None,
        destination: str | None = None,
        recipient: str | None = None,
    ) -> str:
        """The XML text of a successful Response carrying one Assertion.

        ``attributes`` go through pysaml2's attribute maps (``mail`` is sent as
        ``urn:oid:0.9.2342.19200300.100.1.3`` with FriendlyName ``mail``; a name no map
        knows is sent as given, without NameFormat). ``raw_attributes`` are appended
        verbatim (a plain mapping means Name only, no NameFormat).

        All times (IssueInstants, AuthnInstant, NotBefore, NotOnOrAfter) are set from
        now + ``issue_instant_offset_seconds`` before signing: a negative offset larger
        than ``valid_for_seconds`` makes an expired assertion, a positive one a
        not-yet-valid one. ``audience``, ``destination`` and ``recipient`` replace the
        Audience, the Response's Destination and SubjectConfirmationData's Recipient
        (which otherwise are ``sp_entity_id``, ``acs_url`` and ``acs_url``).
        ``in_response_to=None`` makes an IdP-initiated (unsolicited) Response.
        """
        identity = {
            k: list(v)
            for k, v in (DEFAULT_ATTRIBUTES if attributes is None else attributes).items()
        }
        # Signing is left to the end so the fields below are edited on the unsigned
        # object and end up covered by the signatures.
        response = self._server.create_authn_response(
            identity=identity,
            in_response_to=in_response_to,
            destination=acs_url,
            sp_entity_id=sp_entity_id,
            name_id=saml.NameID(format=name_id_format, text=name_id),
            authn={"class_ref": PASSWORDPROTECTEDTRANSPORT},
            sign_response=False,
            sign_assertion=False,
        )
        if not isinstance(response, samlp.Response) or response.assertion is None:
            raise SAMLError(f"pysaml2 did not build an assertion: {response!r}")
        assertion = response.assertion
        # pysaml2 may give one Assertion or a list; it is one here, but stay exact.
        assertion = assertion[0] if isinstance(assertion, list) else assertion

        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        start = now + datetime.timedelta(seconds=issue_instant_offset_seconds)
        end = start + datetime.timedelta(seconds=valid_for_seconds)
        start_s, end_s = start.strftime(_TIME_FORMAT), end.strftime(_TIME_FORMAT)

        response.issue_instant = start_s
        assertion.issue_instant = start_s
        assertion.conditions.not_before = start_s
        assertion.conditions.not_on_or_after = end_s
        for statement in assertion.authn_statement:
            statement.authn_instant = start_s
            if session_index is not None:
                statement.session_index = session_index
        for confirmation in assertion.subject.subject_confirmation:
            data = confirmation.subject_confirmation_data
            data.not_on_or_after = end_s
            if recipient is not None:
                data.recipient = recipient
        if audience is not None:
            assertion.conditions.audience_restriction = [
                factory(saml.AudienceRestriction, audience=[factory(saml.Audience, text=audience)])
            ]
        if destination is not None:
            response.destination = destination
        if raw_attributes:
            self._add_raw_attributes(assertion, raw_attributes)

        return self._sign(
            response, assertion, sign_response=sign_response, sign_assertion=sign_assertion
        )

    @staticmethod
    def _add_raw_attributes(
        assertion: saml.Assertion,
        raw_attributes: Sequence[RawAttribute] | Mapping[str, Sequence[str]],
    ) -> None:
        if isinstance(raw_attributes, Mapping):
            items = [RawAttribute(name, values) for name, values in raw_attributes.items()]
        else:
            items = list(raw_attributes)
        built = [
            saml.Attribute(
                name=item.name,
                name_format=item.name_format,
                friendly_name=item.friendly_name,
                attribute_value=[saml.AttributeValue(text=value) for value in item.values],
            )
            for item in items
        ]
        # xsi:type="xs:string" on each value, as pysaml2 writes for mapped attributes, so
        # raw ones differ from them only where the caller asked.
        for attribute in built:
            for value in attribute.attribute_value:
                value.set_type("xs:string")
        if assertion.attribute_statement:
            assertion.attribute_statement[0].attribute.extend(built)
        else:
            assertion.attribute_statement = [saml.AttributeStatement(attribute=built)]

    def _sign(
        self,
        response: samlp.Response,
        assertion: saml.Assertion,
        *,
        sign_response: bool,
        sign_assertion: bool,
    ) -> str:
        sec = self._server.sec
        sign_alg = self._server.signing_algorithm
        digest_alg = self._server.digest_algorithm
        to_sign: list[tuple[str, str]] = []
        # The assertion first: the Response's digest then covers the assertion's
        # finished signature, as a verifier of both expects.
        if sign_assertion:
            assertion.signature = pre_signature_part(
                assertion.id, sec.my_cert, 2, sign_alg=sign_alg, digest_alg=digest_alg
            )
            to_sign.append((class_name(assertion), assertion.id))
        if sign_response:
            response.signature = pre_signature_part(
                response.id, sec.my_cert, 1, sign_alg=sign_alg, digest_alg=digest_alg
            )
            to_sign.append((class_name(response), response.id))
        if not to_sign:
            return _as_text(response.to_string())
        return _as_text(signed_instance_factory(response, sec, to_sign))

    # -- transport ------------------------------------------------------------------

    @staticmethod
    def encode(xml: str) -> str:
        """Base64 of the UTF-8 bytes: the value of the HTTP-POST ``SAMLResponse`` field."""
        return base64.b64encode(xml.encode("utf-8")).decode("ascii")

    def post_form(
        self,
        response_xml: str,
        acs_url: str,
        relay_state: str | None,
        *,
        script_nonce: str | None = None,
    ) -> str:
        """An HTML page that POSTs the Response to the ACS by itself.

        The Continue button stays visible: under a Content-Security-Policy that refuses
        inline scripts (pass the policy's ``script_nonce`` to be allowed) the page still
        works with one click.
        """
        fields = [("SAMLResponse", self.encode(response_xml))]
        if relay_state is not None:
            fields.append(("RelayState", relay_state))
        inputs = "\n".join(
            f'    <input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
            for name, value in fields
        )
        nonce = f' nonce="{html.escape(script_nonce)}"' if script_nonce else ""
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head><meta charset="utf-8"><title>Signing in</title></head>\n'
            "<body>\n"
            f'  <form method="post" action="{html.escape(acs_url)}">\n'
            f"{inputs}\n"
            '    <button type="submit">Continue</button>\n'
            "  </form>\n"
            f"  <script{nonce}>document.forms[0].submit();</script>\n"
            "</body>\n</html>\n"
        )


def sp_metadata_xml(sp: SpInfo) -> str:
    """A minimal SP EntityDescriptor: one HTTP-POST ACS and, if given, a signing cert."""
    key_descriptor = ""
    if sp.cert_b64:
        key_descriptor = (
            '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
            f"{escape(sp.cert_b64)}"
            "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        )
    return (
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
        f'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID={quoteattr(sp.entity_id)}>'
        '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" '
        f'AuthnRequestsSigned="{"true" if sp.cert_b64 else "false"}" WantAssertionsSigned="true">'
        f"{key_descriptor}"
        f"<md:NameIDFormat>{NAMEID_FORMAT_EMAILADDRESS}</md:NameIDFormat>"
        f'<md:AssertionConsumerService Binding="{BINDING_HTTP_POST}" '
        f'Location={quoteattr(sp.acs_url)} index="0" isDefault="true"/>'
        "</md:SPSSODescriptor></md:EntityDescriptor>"
    )


def _as_text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
