"""``saml_login``, ``saml_acs``, ``saml_metadata``: the three SAML routes' work."""

from __future__ import annotations

import base64
import binascii
import calendar
import logging
import re
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from defusedxml import ElementTree as SafeTree
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext_lazy as _
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.time_util import str_to_time
from saml2.xmldsig import SIG_RSA_SHA256

from .._sso import named_providers
from ..conf import app_settings, derived_setting
from ..exceptions import BadRequestException, ForbiddenException, NotFoundException
from .config import client_for
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
    "EMAIL_ATTRIBUTES",
    "NAME_ATTRIBUTES",
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

# Names IdPs use for the email and the display name: LDAP names and OIDs (Shibboleth,
# most academic IdPs), and the claim URIs of ADFS / Entra ID.
EMAIL_ATTRIBUTES = (
    "email",
    "mail",
    "emailAddress",
    "Email",
    "urn:oid:0.9.2342.19200300.100.1.3",
    "urn:oid:1.2.840.113549.1.9.1",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
)
NAME_ATTRIBUTES = (
    "displayName",
    "name",
    "cn",
    "urn:oid:2.16.840.1.113730.3.1.241",
    "urn:oid:2.5.4.3",
    "http://schemas.microsoft.com/identity/claims/displayname",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
)
_NAMEID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
_SAMLP = "{urn:oasis:names:tc:SAML:2.0:protocol}"
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


def _refuse(reason: str, code: str = "saml_invalid") -> ForbiddenException:
    logger.warning("SAML response refused: %s", reason)
    return ForbiddenException(_("The SAML response was refused."), code=code)


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


def _in_response_to(document: bytes) -> str | None:
    """The Response's ``InResponseTo``, read before validation only to find the request
    it answers (pysaml2 then checks it against the signed document)."""
    try:
        root = SafeTree.fromstring(document, forbid_dtd=True)
    except Exception as exc:  # defusedxml's refusals and ParseError alike
        raise _refuse(f"unparsable XML ({exc.__class__.__name__})") from None
    if root.tag != f"{_SAMLP}Response":
        raise _refuse(f"the document is a {root.tag}, not a Response")
    value = root.get("InResponseTo")
    return value or None


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


def _first(user_attrs: SamlUser, names: Iterable[str]) -> str | None:
    for name in names:
        value = user_attrs.attribute(name)
        if value:
            return value
    return None


def _not_on_or_after(assertion: Any) -> float | None:
    conditions = assertion.conditions
    if conditions is None or not conditions.not_on_or_after:
        return None
    return float(calendar.timegm(str_to_time(conditions.not_on_or_after)))


def _saml_user(provider: SamlProvider, response: Any) -> SamlUser:
    assertion = response.assertion
    name_id = response.name_id
    if name_id is None or not (name_id.text or "").strip():
        raise _refuse("the assertion has no NameID")
    attributes, friendly = _attributes(assertion)
    authn = assertion.authn_statement[0] if assertion.authn_statement else None
    bare = SamlUser(name_id=name_id.text.strip(), attributes=attributes, friendly_names=friendly)
    email = _first(
        bare, [provider.email_attribute] if provider.email_attribute else EMAIL_ATTRIBUTES
    )
    if email is None and name_id.format == _NAMEID_EMAIL:
        email = bare.name_id
    name = _first(bare, [provider.name_attribute] if provider.name_attribute else NAME_ATTRIBUTES)
    if name is None and not provider.name_attribute:
        parts = [bare.attribute(n) for n in ("givenName", "sn")]
        name = " ".join(p for p in parts if p) or None
    return SamlUser(
        name_id=bare.name_id,
        email=email,
        name=name,
        attributes=attributes,
        session_index=getattr(authn, "session_index", None) or None,
        friendly_names=friendly,
    )


def saml_acs(request: HttpRequest, provider: str | SamlProvider) -> SamlUser:
    """Validate the IdP's POST and return the asserted user.

    This only validates: it cannot tell whether the browser posting is the one that
    started the login (the POST is cross-site, without the session cookie). Never sign
    anyone in from its result at the POST; ``saml_acs_redirect`` and ``saml_acs_resume``
    do the whole ACS with that check.

    No ``SAMLResponse``: ``BadRequestException``. Everything else that is wrong is a
    ``ForbiddenException``: a signature missing, broken or made with another key than
    the IdP's; a time window passed or not begun; another audience or destination; an
    ``InResponseTo`` that is not an outstanding request of this provider (each request
    id is accepted once); an IdP-initiated response when the provider refuses them; an
    assertion id accepted before (kept in the shared cache, so a replay is caught by
    any process); and any response pysaml2 cannot make sense of.
    ``request.saml_next`` holds the ``next`` given to ``saml_login`` (None when
    IdP-initiated; the ``RelayState`` is then the only hint, and must be checked), and
    ``request.saml_in_response_to`` the request id answered (None when IdP-initiated).
    """
    provider = provider_named(provider)
    encoded, document = _decode(request)
    request_id = _in_response_to(document)
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
    try:
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
    user = _saml_user(provider, response)
    if not remember_assertion(
        provider.name, response.assertion.id, _not_on_or_after(response.assertion)
    ):
        raise _refuse(f"assertion {response.assertion.id!r} was used already", "saml_replayed")
    request.saml_next = next_url  # type: ignore[attr-defined]
    request.saml_in_response_to = request_id  # type: ignore[attr-defined]
    return user


def saml_acs_redirect(request: HttpRequest, provider: str | SamlProvider) -> HttpResponseRedirect:
    """The ACS POST: validate (``saml_acs``, which raises what it raises), keep the
    outcome under a one-time key for ``RESUME_TTL`` seconds, and answer 303 See Other to
    this URL with ``?resume=<key>``.

    Nobody is signed in here. The browser's GET that follows is a top-level navigation,
    which carries the ``SameSite=Lax`` session cookie this cross-site POST lacks, so
    ``saml_acs_resume`` can check that this browser started the login.
    """
    provider = provider_named(provider)
    user = saml_acs(request, provider)
    relay_state = request.POST.get("RelayState")
    token = stash_response(
        {
            "p": provider.name,
            "u": {**asdict(user), "attributes": dict(user.attributes)},
            "r": request.saml_in_response_to,  # type: ignore[attr-defined]
            "n": request.saml_next,  # type: ignore[attr-defined]
            "s": relay_state if isinstance(relay_state, str) else None,
        }
    )
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
    when the provider allows IdP-initiated login (``saml_invalid`` otherwise).
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
    return SamlUser(**entry["u"])


asaml_login = sync_to_async(saml_login)
asaml_acs = sync_to_async(saml_acs)
asaml_acs_redirect = sync_to_async(saml_acs_redirect)
asaml_acs_resume = sync_to_async(saml_acs_resume)
