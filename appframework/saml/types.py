"""The two value types of SAML login: a configured identity provider and the user it asserts."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sso_config import validate_provider_fields

__all__ = ["SamlProvider", "SamlUser", "certificate_body", "saml_provider"]

_PEM_ARMOUR = re.compile(r"-----(BEGIN|END) [A-Z0-9 ]+-----")
# What bare base64 may be made of; metadata wraps and indents it.
_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=\s]*")


@dataclass(frozen=True)
class SamlUser:
    """What the identity provider asserted. ``attributes`` maps each attribute ``Name``
    exactly as sent to its values; ``attribute(name)`` also finds an attribute by its
    ``FriendlyName``. ``name_id_format`` is the NameID's ``Format`` as sent (None when
    it named none)."""

    name_id: str
    email: str | None = None
    name: str | None = None
    attributes: Mapping[str, list[str]] = field(default_factory=dict)
    session_index: str | None = None
    friendly_names: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    name_id_format: str | None = None

    def attribute(self, name: str) -> str | None:
        """The first value of attribute ``name`` (its Name or FriendlyName), or None."""
        values = self.attributes.get(name)
        if values is None and name in self.friendly_names:
            values = self.attributes.get(self.friendly_names[name])
        return values[0] if values else None


def certificate_body(value: str) -> str:
    """The base64 body of an X.509 certificate given as PEM or as bare base64 (what SAML
    metadata carries); ``ValueError`` when it is neither."""
    body = re.sub(r"\s+", "", _PEM_ARMOUR.sub("", value or ""))
    try:
        der = base64.b64decode(body, validate=True)
    except ValueError:
        raise ValueError("not a PEM or base64 X.509 certificate") from None
    from cryptography import x509

    try:
        x509.load_der_x509_certificate(der)
    except ValueError as exc:
        raise ValueError(f"not an X.509 certificate ({exc})") from None
    return body


def _pem_text(value: str | None, what: str, *, base64_body: bool = False) -> str | None:
    """``value`` when it is PEM text (or, with ``base64_body``, a certificate's bare base64
    body, as metadata carries it), else the text of the file it names.

    An existing file wins over the base64 reading: a path such as ``/run/secrets/idp``
    is made of base64 characters too."""
    if value is None or "-----BEGIN" in value:
        return value
    if base64_body and _BASE64_TEXT.fullmatch(value) and not os.path.isfile(value):
        return value
    try:
        return Path(value).read_text()
    except (OSError, ValueError):  # missing, a directory, unreadable, not UTF-8, a NUL
        raise ValueError(f"SamlProvider.{what} is neither PEM text nor a readable file.") from None


@dataclass(frozen=True)
class SamlProvider:
    """One identity provider, and this site as its service provider.

    ``acs_url`` must equal the assertion consumer service URL registered at the IdP: it
    is configured, never derived from the request. ``idp_x509_cert`` (PEM, base64 or a
    file path) is the only key a response may be signed with. With ``sp_x509_cert`` and
    ``sp_private_key`` (PEM text or file paths) AuthnRequests are signed.
    ``email_attribute`` / ``name_attribute`` name the attributes carrying the email and
    the display name when the common names are not used.

    Beyond those: ``allow_idp_initiated`` (off by default: accept responses no
    AuthnRequest asked for; they are validated the same way, but nothing binds them to
    the browser that posts them: login CSRF, hence ``appframework_saml.W004`` when on) and ``want_assertions_signed``
    (the assertion must carry its own signature too, besides the response's, which is
    always required).

    ``trust_email``: the default user handler may sign an identity it has never seen into
    the existing account with the asserted email (and link them). Only for an IdP that
    vouches for its users' addresses and that you trust with every account here, such
    as your own organisation's; otherwise such an identity is refused
    (``saml_email_not_trusted``) and only new addresses get accounts.

    ``allow_sha1``: accept RSA-SHA1 signatures and SHA-1 digests, for a legacy IdP that
    cannot sign otherwise. Off, only SHA-256 and stronger verify.
    """

    name: str
    idp_entity_id: str
    idp_sso_url: str
    idp_x509_cert: str = field(repr=False)
    sp_entity_id: str
    acs_url: str
    sp_x509_cert: str | None = field(default=None, repr=False)
    sp_private_key: str | None = field(default=None, repr=False)
    email_attribute: str | None = None
    name_attribute: str | None = None
    allow_idp_initiated: bool = False
    want_assertions_signed: bool = True
    trust_email: bool = False
    allow_sha1: bool = False

    def __post_init__(self) -> None:
        validate_provider_fields(self, ("idp_sso_url", "acs_url"))
        for name in ("idp_entity_id", "sp_entity_id"):
            if not getattr(self, name):
                raise ValueError(f"SamlProvider {self.name!r} has no {name}.")
        idp_cert = _pem_text(self.idp_x509_cert, "idp_x509_cert", base64_body=True)
        try:
            object.__setattr__(self, "idp_x509_cert", certificate_body(idp_cert or ""))
        except ValueError as exc:
            raise ValueError(f"SamlProvider {self.name!r}: idp_x509_cert is {exc}.") from None
        if (self.sp_x509_cert is None) != (self.sp_private_key is None):
            raise ValueError(
                f"SamlProvider {self.name!r}: set both sp_x509_cert and sp_private_key "
                "(to sign AuthnRequests) or neither."
            )
        object.__setattr__(self, "sp_x509_cert", _pem_text(self.sp_x509_cert, "sp_x509_cert"))
        object.__setattr__(self, "sp_private_key", _pem_text(self.sp_private_key, "sp_private_key"))
        if self.sp_x509_cert is not None:
            try:
                certificate_body(self.sp_x509_cert)
            except ValueError as exc:
                raise ValueError(f"SamlProvider {self.name!r}: sp_x509_cert is {exc}.") from None

    @property
    def signs_requests(self) -> bool:
        return self.sp_x509_cert is not None


def saml_provider(**kwargs: Any) -> SamlProvider:
    """``SamlProvider(**kwargs)``: the same keyword arguments, checked."""
    return SamlProvider(**kwargs)
