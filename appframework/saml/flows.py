"""``saml_login``, ``saml_acs``, ``saml_metadata``: the three SAML routes' work."""

from __future__ import annotations

import base64
import binascii
import calendar
import contextlib
import logging
import re
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from defusedxml import ElementTree as SafeTree
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext_lazy as _
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.saml import SCM_BEARER
from saml2.samlp import STATUS_SUCCESS
from saml2.time_util import str_to_time
from saml2.xmldsig import SIG_RSA_SHA256

from ..conf import app_settings, derived_setting
from ..exceptions import BadRequestException, ForbiddenException, NotFoundException
from ..sso_config import named_providers
from .config import accepted_algorithms, client_for
from .metadata import metadata_xml
from .store import (
    pop_request,
    remember_assertion,
    remember_request,
    stash_response,
    take_response,
)
from .types import SamlProvider, SamlUser

__all__ = [
    "DISPLAY_NAME_ATTRIBUTES",
    "EMAIL_ATTRIBUTES",
    "FAMILY_NAME_ATTRIBUTES",
    "GIVEN_NAME_ATTRIBUTES",
    "MAX_LOGGED_REASON",
    "MAX_NAME_ID",
    "MAX_STATUS_MESSAGE",
    "NAME_ATTRIBUTES",
    "PLAIN_NAME_ATTRIBUTES",
    "asaml_acs",
    "asaml_acs_redirect",
    "asaml_acs_resume",
    "asaml_login",
    "configured_providers",
    "is_saml_acs_request",
    "provider_named",
    "saml_acs",
    "saml_acs_redirect",
    "saml_acs_resume",
    "saml_login",
    "saml_metadata",
]

logger = logging.getLogger("appframework.saml")

# The attribute names IdPs send the email and the name under (docs/saml.md has the table
# by IdP): LDAP names and their OIDs (Shibboleth, Keycloak's X500 mappers, academic
# IdPs), the claim URIs of ADFS and Entra ID, and the camelCase names of Okta, Google
# Workspace and the npm saml-idp. Looked up by Name and by FriendlyName.
EMAIL_ATTRIBUTES = (
    "email",
    "mail",
    "emailAddress",
    "Email",
    "urn:oid:0.9.2342.19200300.100.1.3",
    "urn:oid:1.2.840.113549.1.9.1",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
)
# A whole name: the display names first, then the plain names, which some IdPs fill
# with an address (Entra ID's .../claims/name is the UPN), so given and family names
# are tried between the two.
DISPLAY_NAME_ATTRIBUTES = (
    "displayName",
    "urn:oid:2.16.840.1.113730.3.1.241",
    "http://schemas.microsoft.com/identity/claims/displayname",
)
PLAIN_NAME_ATTRIBUTES = (
    "name",
    "cn",
    "urn:oid:2.5.4.3",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
    "http://schemas.xmlsoap.org/claims/CommonName",
)
NAME_ATTRIBUTES = DISPLAY_NAME_ATTRIBUTES + PLAIN_NAME_ATTRIBUTES
GIVEN_NAME_ATTRIBUTES = (
    "givenName",
    "firstName",
    "urn:oid:2.5.4.42",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
)
FAMILY_NAME_ATTRIBUTES = (
    "sn",
    "surname",
    "lastName",
    "urn:oid:2.5.4.4",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
)
_NAMEID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
_SAMLP = "{urn:oasis:names:tc:SAML:2.0:protocol}"
_DS = "{http://www.w3.org/2000/09/xmldsig#}"
# Characters of a refusal's reason in the log: the reason quotes the posted document
# (an InResponseTo, pysaml2's message), which anyone may make 500 kB long.
MAX_LOGGED_REASON = 300
# Persistent NameIDs are at most 256 characters (SAML core 8.3.7); twice that leaves
# room for the other formats, and bounds what is stored for a sign-in (SamlIdentity).
MAX_NAME_ID = 512
# Characters of an IdP's StatusMessage shown to the user (a refusal page, not a log).
MAX_STATUS_MESSAGE = 200
# A status code's last segment as shown: an identifier ("AuthnFailed"), nothing else.
_STATUS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")
# A SAMLResponse is a few kilobytes; this bounds the work an anonymous POST can cause.
MAX_RESPONSE_BYTES = 512_000
_ACS_PATH = re.compile(r"/saml/[A-Za-z0-9_-]+/acs/?")
# The session key listing the AuthnRequests this browser started, as [provider, id]
# pairs. Capped: a few tabs of logins in flight is normal, hundreds is not.
SESSION_REQUESTS_KEY = "appframework_saml_requests"
SESSION_REQUESTS_KEPT = 10


@derived_setting
def configured_providers() -> dict[str, SamlProvider]:
    """``SAML["PROVIDERS"]`` by name, built once."""
    return named_providers("SAML", SamlProvider)


def provider_named(provider: str | SamlProvider) -> SamlProvider:
    """A provider object, or the configured one by name (``NotFoundException`` otherwise)."""
    if isinstance(provider, SamlProvider):
        return provider
    found = configured_providers().get(provider)
    if found is None:
        raise NotFoundException(
            _("There is no SAML identity provider named %(name)s.") % {"name": str(provider)[:50]},
            code="saml_unknown_provider",
        )
    return found


def _client(provider: SamlProvider) -> Any:
    return client_for(provider, int(app_settings.SAML.CLOCK_SKEW))


def is_saml_acs_request(request: HttpRequest) -> bool:
    """True only for a POST to ``/saml/<provider>/acs``: the predicate to name in
    ``AUTH["CSRF_EXEMPT"]`` (the IdP's form POST carries no CSRF token)."""
    return request.method == "POST" and bool(_ACS_PATH.fullmatch(request.path_info))


def saml_login(
    request: HttpRequest, provider: str | SamlProvider, *, next: str | None = None
) -> HttpResponseRedirect:
    """A redirect to the IdP carrying an AuthnRequest (signed when the provider has an SP
    key pair). The request id is kept server-side until the response comes back, and in
    this browser's session, so that only this browser can complete the login
    (``saml_acs_resume``)."""
    provider = provider_named(provider)
    session = getattr(request, "session", None)
    if session is None:
        # Without a session the login could never be resumed: fail here, not at the ACS.
        raise ImproperlyConfigured("saml_login needs request.session (SessionMiddleware).")
    if next is None:
        next = request.GET.get("next")
    request_id, info = _client(provider).prepare_for_authenticate(
        entityid=provider.idp_entity_id,
        relay_state="",
        binding=BINDING_HTTP_REDIRECT,
        sign=provider.signs_requests,
        sigalg=SIG_RSA_SHA256 if provider.signs_requests else None,
    )
    remember_request(request_id, provider.name, next if isinstance(next, str) else None)
    started = [pair for pair in session.get(SESSION_REQUESTS_KEY, []) if isinstance(pair, list)]
    started.append([provider.name, request_id])
    session[SESSION_REQUESTS_KEY] = started[-SESSION_REQUESTS_KEPT:]
    location = dict(info["headers"])["Location"]
    return HttpResponseRedirect(location)


def saml_metadata(request: HttpRequest, provider: str | SamlProvider) -> HttpResponse:
    """This service provider's metadata XML for ``provider``'s IdP."""
    return HttpResponse(
        metadata_xml(provider_named(provider)), content_type="application/samlmetadata+xml"
    )


def _one_line(text: str, limit: int = MAX_LOGGED_REASON) -> str:
    """``text`` as one log line of at most ``limit`` characters: line breaks, other
    control and format characters (bidi overrides) become spaces, so a posted value can
    neither forge a log line nor flood the log."""
    text = "".join(c if c.isprintable() else " " for c in text[: limit * 2])
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refuse(reason: str, code: str = "saml_invalid") -> ForbiddenException:
    logger.warning("SAML response refused: %s", _one_line(reason))
    return ForbiddenException(_("The SAML response was refused."), code=code)


# True while this thread or task has pysaml2 validate a posted response.
_validating: ContextVar[bool] = ContextVar("appframework_saml_validating", default=False)


class _QuietDuringValidation(logging.Filter):
    """Drops pysaml2's own records of INFO and above while a response is validated in
    this context. It logs each refusal at ERROR, some with a traceback and some with the
    whole assertion, so anonymous POSTs could flood the logs; ``_refuse`` logs the one
    line that matters. DEBUG stays, for whoever turns it on to study an IdP."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.INFO or not _validating.get()


_QUIET = _QuietDuringValidation()


@contextlib.contextmanager
def _pysaml2_quiet() -> Iterator[None]:
    # A filter on the "saml2" logger would not see its children's records (propagation
    # skips ancestors' filters), so each saml2.* logger gets it; addFilter adds it once.
    for name in list(logging.Logger.manager.loggerDict):
        if name == "saml2" or name.startswith("saml2."):
            logging.getLogger(name).addFilter(_QUIET)
    token = _validating.set(True)
    try:
        yield
    finally:
        _validating.reset(token)


def _decode(request: HttpRequest) -> tuple[str, bytes]:
    encoded = request.POST.get("SAMLResponse")
    if not encoded:
        raise BadRequestException(
            _("The request carries no SAMLResponse."), code="saml_response_missing"
        )
    if len(encoded) > MAX_RESPONSE_BYTES * 4 // 3 + 4:
        raise BadRequestException(
            _("The SAMLResponse is too large."), code="saml_response_malformed"
        )
    try:
        # Strict: IdPs may wrap the base64 in lines, but anything else is not a response.
        document = base64.b64decode(re.sub(r"\s+", "", encoded), validate=True)
    except (binascii.Error, ValueError):
        raise BadRequestException(
            _("The SAMLResponse is not base64."), code="saml_response_malformed"
        ) from None
    return encoded, document


@dataclass(frozen=True)
class _IdpStatus:
    """The status of a Response that is not Success: the IdP refused the sign-in."""

    # The second-level StatusCode's last segment ("AuthnFailed"), else the top-level's
    # ("Requester"): an identifier, or "unknown".
    name: str
    # The StatusMessage as one line of at most MAX_STATUS_MESSAGE characters, or None.
    message: str | None
    # Both codes and the message, for the log (which bounds the line).
    logged: str


def _last_segment(uri: str | None) -> str | None:
    segment = re.split(r"[:/#]", (uri or "").strip())[-1]
    return segment if _STATUS_NAME.fullmatch(segment) else None


def _idp_status(root: Any) -> _IdpStatus | None:
    """The Response's status when its top-level StatusCode is not Success; None for
    Success, and for a Response without Status, which pysaml2 then refuses or accepts
    as it does any other."""
    top = root.find(f"{_SAMLP}Status/{_SAMLP}StatusCode")
    if top is None or top.get("Value") == STATUS_SUCCESS:
        return None
    second = top.find(f"{_SAMLP}StatusCode")
    second_value = second.get("Value") if second is not None else None
    message_element = root.find(f"{_SAMLP}Status/{_SAMLP}StatusMessage")
    message = "".join(message_element.itertext()) if message_element is not None else ""
    message = _one_line(message, MAX_STATUS_MESSAGE) if message.strip() else ""
    return _IdpStatus(
        name=_last_segment(second_value) or _last_segment(top.get("Value")) or "unknown",
        message=message or None,
        logged=f"{top.get('Value')} / {second_value}: {message or '(no message)'}",
    )


def _read_before_validation(
    provider: SamlProvider, document: bytes
) -> tuple[str | None, _IdpStatus | None]:
    """The Response's ``InResponseTo`` and, when it is not Success, its status, read
    before validation: the id only to find the request it answers (pysaml2 then checks
    it against the signed document), the status because a refusal is reported without
    pysaml2 (``saml_acs``).

    A signature made with an algorithm ``provider`` does not accept is refused here,
    before xmlsec1 runs: xmlsec1 verifies with whatever algorithm the document names,
    SHA-1 included. Every SignedInfo in the document is looked at, so whichever one
    xmlsec1 is made to verify was checked."""
    try:
        root = SafeTree.fromstring(document, forbid_dtd=True)
    except Exception as exc:  # defusedxml's refusals and ParseError alike
        raise _refuse(f"unparsable XML ({exc.__class__.__name__})") from None
    if root.tag != f"{_SAMLP}Response":
        raise _refuse(f"the document is a {root.tag}, not a Response")
    signing, digests = accepted_algorithms(provider)
    for signed_info in root.iter(f"{_DS}SignedInfo"):
        used = [(e.get("Algorithm"), signing) for e in signed_info.iter(f"{_DS}SignatureMethod")]
        used += [(e.get("Algorithm"), digests) for e in signed_info.iter(f"{_DS}DigestMethod")]
        for algorithm, accepted in used:
            if algorithm not in accepted:
                raise _refuse(
                    f"a signature uses an algorithm this provider does not accept: {algorithm}"
                )
    return root.get("InResponseTo") or None, _idp_status(root)


def _idp_refused(status: _IdpStatus, *, with_message: bool) -> ForbiddenException:
    """403 ``saml_idp_refused``. The StatusMessage is free text, and an unsigned or
    IdP-initiated refusal may come from anyone: it is shown only once the refusal is
    known to answer a request this browser started (``saml_acs_resume``)."""
    if with_message and status.message:
        detail = _("The identity provider refused the sign-in (%(status)s: %(message)s).") % {
            "status": status.name,
            "message": status.message,
        }
    else:
        detail = _("The identity provider refused the sign-in (%(status)s).") % {
            "status": status.name
        }
    return ForbiddenException(detail, code="saml_idp_refused")


def _values(attribute: Any) -> list[str]:
    return [(value.text or "").strip() for value in attribute.attribute_value or ()]


def _attributes(assertion: Any) -> tuple[dict[str, list[str]], dict[str, str]]:
    values: dict[str, list[str]] = {}
    friendly: dict[str, str] = {}
    for statement in assertion.attribute_statement or ():
        for attribute in statement.attribute or ():
            if not attribute.name:
                continue
            values.setdefault(attribute.name, []).extend(_values(attribute))
            if attribute.friendly_name:
                friendly.setdefault(attribute.friendly_name, attribute.name)
    return values, friendly


def _first(user_attrs: SamlUser, names: Iterable[str], *, address: bool = True) -> str | None:
    """The first non-empty value of ``names``; without ``address``, values that look
    like an email or a UPN are passed over (they are no one's name)."""
    for name in names:
        value = user_attrs.attribute(name)
        if value and (address or "@" not in value):
            return value
    return None


def _display_name(user_attrs: SamlUser) -> str | None:
    """A display name, else the given and family names joined, else a plain name: with
    Entra ID's default claims the plain ``.../claims/name`` is the UPN, and must not
    win over the given name and surname sent beside it."""
    name = _first(user_attrs, DISPLAY_NAME_ATTRIBUTES, address=False)
    if name is None:
        parts = [
            _first(user_attrs, GIVEN_NAME_ATTRIBUTES, address=False),
            _first(user_attrs, FAMILY_NAME_ATTRIBUTES, address=False),
        ]
        name = " ".join(p for p in parts if p) or None
    return name or _first(user_attrs, PLAIN_NAME_ATTRIBUTES, address=False)


def _check_profile(provider: SamlProvider, response: Any) -> None:
    """What the Web Browser SSO profile requires and pysaml2 lets pass (it checks these
    fields when they are present)."""
    # The bindings require Destination on a signed message: without it, a Response an
    # IdP signed for another of its SPs could be posted here.
    if not response.response.destination:
        raise _refuse("the Response has no Destination")
    assertion = response.assertion
    conditions = assertion.conditions
    restrictions = (conditions.audience_restriction if conditions is not None else None) or []
    if not restrictions:
        raise _refuse("the assertion has no AudienceRestriction")
    # Each restriction must hold (SAML core 2.5.1.4); pysaml2 is content with any one.
    for restriction in restrictions:
        audiences = {(audience.text or "").strip() for audience in restriction.audience or ()}
        if provider.sp_entity_id not in audiences:
            raise _refuse("an AudienceRestriction does not name this service provider")
    # pysaml2 has left only the confirmations it accepted in the subject.
    bearers = [
        confirmation
        for confirmation in assertion.subject.subject_confirmation or ()
        if confirmation.method == SCM_BEARER
    ]
    if not bearers:
        raise _refuse("the assertion has no bearer SubjectConfirmation")
    # Without NotOnOrAfter a bearer assertion is good forever, and would be accepted
    # again the moment its replay record expires.
    if any(
        c.subject_confirmation_data is None or not c.subject_confirmation_data.not_on_or_after
        for c in bearers
    ):
        raise _refuse("a bearer SubjectConfirmationData has no NotOnOrAfter")


def _latest_expiry(assertion: Any) -> float | None:
    """The latest NotOnOrAfter of the assertion (its Conditions' and its subject
    confirmations'): past it, plus the clock skew, pysaml2 refuses it whatever the
    replay cache says."""
    values = [getattr(assertion.conditions, "not_on_or_after", None)]
    for confirmation in assertion.subject.subject_confirmation or ():
        values.append(getattr(confirmation.subject_confirmation_data, "not_on_or_after", None))
    times = [float(calendar.timegm(str_to_time(value))) for value in values if value]
    return max(times) if times else None


def _saml_user(provider: SamlProvider, response: Any) -> SamlUser:
    assertion = response.assertion
    name_id = response.name_id
    if name_id is None or not (name_id.text or "").strip():
        raise _refuse("the assertion has no NameID")
    if len(name_id.text.strip()) > MAX_NAME_ID:
        raise _refuse(f"the NameID is longer than {MAX_NAME_ID} characters")
    attributes, friendly = _attributes(assertion)
    authn = assertion.authn_statement[0] if assertion.authn_statement else None
    bare = SamlUser(
        name_id=name_id.text.strip(),
        attributes=attributes,
        friendly_names=friendly,
        name_id_format=name_id.format or None,
    )
    email = _first(
        bare, [provider.email_attribute] if provider.email_attribute else EMAIL_ATTRIBUTES
    )
    if email is None and name_id.format == _NAMEID_EMAIL:
        email = bare.name_id
    if provider.name_attribute:
        name = _first(bare, [provider.name_attribute])
    else:
        name = _display_name(bare)
    return SamlUser(
        name_id=bare.name_id,
        email=email,
        name=name,
        attributes=attributes,
        session_index=getattr(authn, "session_index", None) or None,
        friendly_names=friendly,
        name_id_format=bare.name_id_format,
    )


def saml_acs(request: HttpRequest, provider: str | SamlProvider) -> SamlUser:
    """Validate the IdP's POST and return the asserted user.

    This only validates: it cannot tell whether the browser posting is the one that
    started the login (the POST is cross-site, without the session cookie). Never sign
    anyone in from its result at the POST; ``saml_acs_redirect`` and ``saml_acs_resume``
    do the whole ACS with that check.

    No ``SAMLResponse``: ``BadRequestException``. Everything else that is wrong is a
    ``ForbiddenException``: a signature missing, broken, made with another key than
    the IdP's, or with SHA-1 or weaker (unless ``allow_sha1``); a time window passed or
    not begun; another audience or destination, or none (the Response must name its
    Destination, and every AudienceRestriction this SP); a bearer confirmation without
    NotOnOrAfter; an ``InResponseTo`` that is not an outstanding request of this
    provider (each request id is accepted once); an IdP-initiated response when the
    provider refuses them; an assertion id accepted before (kept in ``REPLAY_CACHE``
    until the assertion's last NotOnOrAfter has passed, so a replay is caught by every
    process that shares that cache); and any response pysaml2 cannot make sense of. Each refusal is logged as
    one line of bounded length; pysaml2's own error records for it are not.
    ``request.saml_next`` holds the ``next`` given to ``saml_login`` (None when
    IdP-initiated; the ``RelayState`` is then the only hint, and must be checked), and
    ``request.saml_in_response_to`` the request id answered (None when IdP-initiated).

    A Response whose status is not Success (the IdP refused the sign-in: AuthnFailed,
    RequestDenied, the user cancelled) is ``ForbiddenException`` ``saml_idp_refused``,
    naming the status. It carries no identity, so it is reported signed or not, once
    the checks above that do not need a signature pass (the algorithms, the
    ``InResponseTo``, which it spends, or IdP-initiated login allowed). The IdP's
    StatusMessage is logged, not shown: ``saml_acs_resume`` shows it, once the refusal
    is known to answer this browser's request.
    """
    result = _validate(request, provider_named(provider))
    if isinstance(result, _IdpStatus):
        raise _idp_refused(result, with_message=False)
    return result


def _validate(request: HttpRequest, provider: SamlProvider) -> SamlUser | _IdpStatus:
    """``saml_acs``'s work: the asserted user, or the status of an IdP's refusal."""
    encoded, document = _decode(request)
    request_id, refusal = _read_before_validation(provider, document)
    outstanding: dict[str, Any] = {}
    next_url: Any = None
    if request_id is not None:
        entry = pop_request(request_id)
        if entry is None or entry.get("p") != provider.name:
            raise _refuse(f"InResponseTo {request_id!r} is not an outstanding request")
        outstanding = {request_id: entry.get("n") or "/"}
        next_url = entry.get("n")
    elif not provider.allow_idp_initiated:
        raise _refuse("an IdP-initiated response, and this provider accepts none")
    if refusal is not None:
        # Not handed to pysaml2, which would want the signature first: nothing in a
        # refusal can sign anyone in, and IdPs do not all sign them.
        logger.warning("SAML sign-in refused by the IdP: %s", _one_line(refusal.logged))
        _note_answered(request, next_url, request_id)
        return refusal
    try:
        with _pysaml2_quiet():
            response = _client(provider).parse_authn_request_response(
                encoded,
                BINDING_HTTP_POST,
                outstanding=outstanding,
                # Any non-empty conv_info makes pysaml2 check the subject confirmation's
                # Recipient against the ACS URLs; without it every Recipient passes.
                conv_info={"acs_url": provider.acs_url},
            )
    except Exception as exc:  # pysaml2 raises from many modules, some bare Exception
        raise _refuse(f"{exc.__class__.__name__}: {exc}") from None
    # A failed Destination check, for one, comes back as a response with no assertion.
    if response is None or getattr(response, "assertion", None) is None:
        raise _refuse("pysaml2 returned no assertion")
    if request_id is None and response.in_response_to:
        raise _refuse("InResponseTo differs from the one read before validation")
    _check_profile(provider, response)
    user = _saml_user(provider, response)
    if not remember_assertion(
        provider.name, response.assertion.id, _latest_expiry(response.assertion)
    ):
        raise _refuse(f"assertion {response.assertion.id!r} was used already", "saml_replayed")
    _note_answered(request, next_url, request_id)
    return user


def _note_answered(request: HttpRequest, next_url: Any, request_id: str | None) -> None:
    # Only on success or an IdP's refusal: a rejected response leaves the request bare.
    request.saml_next = next_url  # type: ignore[attr-defined]
    request.saml_in_response_to = request_id  # type: ignore[attr-defined]


def saml_acs_redirect(request: HttpRequest, provider: str | SamlProvider) -> HttpResponseRedirect:
    """The ACS POST: validate (``saml_acs``, which raises what it raises, but an IdP's
    refusal), keep the outcome under a one-time key for ``RESUME_TTL`` seconds, and
    answer 303 See Other to this URL with ``?resume=<key>``. An IdP's refusal is such an
    outcome: ``saml_acs_resume`` reports it.

    Nobody is signed in here. The browser's GET that follows is a top-level navigation,
    which carries the ``SameSite=Lax`` session cookie this cross-site POST lacks, so
    ``saml_acs_resume`` can check that this browser started the login.
    """
    provider = provider_named(provider)
    result = _validate(request, provider)
    relay_state = request.POST.get("RelayState")
    entry: dict[str, Any] = {
        "p": provider.name,
        "r": request.saml_in_response_to,  # type: ignore[attr-defined]
        "n": request.saml_next,  # type: ignore[attr-defined]
        "s": relay_state if isinstance(relay_state, str) else None,
    }
    if isinstance(result, _IdpStatus):
        # Reported at the resume GET, after the browser check: only then may the
        # IdP's own words be shown.
        entry["e"] = [result.name, result.message, result.logged]
    else:
        entry["u"] = {**asdict(result), "attributes": dict(result.attributes)}
    token = stash_response(entry)
    response = HttpResponseRedirect(f"{request.path}?{urlencode({'resume': token})}")
    # 303: the browser must GET the resume URL, never repeat the POST.
    response.status_code = 303
    return response


def _started_here(request: HttpRequest, provider_name: str, request_id: str) -> bool:
    """Whether this browser's session started ``request_id``; removes it when so."""
    session = getattr(request, "session", None)
    if session is None:
        return False
    started = session.get(SESSION_REQUESTS_KEY, [])
    pair = [provider_name, request_id]
    if not isinstance(started, list) or pair not in started:
        return False
    session[SESSION_REQUESTS_KEY] = [p for p in started if p != pair]
    return True


def saml_acs_resume(request: HttpRequest, provider: str | SamlProvider) -> SamlUser:
    """The ACS GET ``?resume=<key>`` that follows ``saml_acs_redirect``: the validated
    user, once this browser is known to be the one that started the login.

    The key is spent on first use. Refused with ``ForbiddenException``: a key unknown,
    expired or already used, or made for another provider (``saml_resume_invalid``); a
    response to an AuthnRequest this browser's session did not start
    (``saml_request_not_started_here``), which is the login-CSRF case of a response
    captured by someone else and posted from the victim's browser. An IdP-initiated
    response answers no request, so it cannot be bound to a browser; it is accepted
    when the provider allows IdP-initiated login (``saml_invalid`` otherwise). Then an
    IdP's refusal posted to the ACS is ``saml_idp_refused``, with its StatusMessage when
    it answered this browser's request (an IdP-initiated one may come from anyone).
    Sets ``request.saml_next`` (as ``saml_acs`` does) and ``request.saml_relay_state``
    (the ``RelayState`` the IdP posted).
    """
    provider = provider_named(provider)
    token = request.GET.get("resume")
    if not token:
        raise BadRequestException(
            _("The request carries no resume key."), code="saml_resume_missing"
        )
    entry = take_response(token)
    if entry is None or entry.get("p") != provider.name:
        raise _refuse("the resume key is unknown, expired or used", "saml_resume_invalid")
    request_id = entry.get("r")
    if request_id is None:
        # Settings may have changed since the POST; the provider decides now.
        if not provider.allow_idp_initiated:
            raise _refuse("an IdP-initiated response, and this provider accepts none")
    elif not _started_here(request, provider.name, request_id):
        raise _refuse(
            f"request {request_id!r} was not started by this browser",
            "saml_request_not_started_here",
        )
    request.saml_next = entry.get("n")  # type: ignore[attr-defined]
    request.saml_relay_state = entry.get("s")  # type: ignore[attr-defined]
    refusal = entry.get("e")
    if refusal is not None:
        # An IdP-initiated refusal is bound to no browser: anyone may have posted it.
        raise _idp_refused(_IdpStatus(*refusal), with_message=request_id is not None)
    return SamlUser(**entry["u"])


asaml_login = sync_to_async(saml_login)
asaml_acs = sync_to_async(saml_acs)
asaml_acs_redirect = sync_to_async(saml_acs_redirect)
asaml_acs_resume = sync_to_async(saml_acs_resume)
