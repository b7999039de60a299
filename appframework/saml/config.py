"""pysaml2 configuration, built once per provider and reused by every request.

The settings pysaml2 would leave lenient are set explicitly: the response signature is
always required (and the assertion's by default), only the certificate configured for
the IdP verifies signatures, and attributes with names in none of pysaml2's maps are
kept instead of silently dropped.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.saml import NAMEID_FORMAT_UNSPECIFIED
from saml2.sigver import get_xmlsec_binary
from saml2.xmldsig import (
    DIGEST_SHA1,
    DIGEST_SHA256,
    DIGEST_SHA384,
    DIGEST_SHA512,
    SIG_ECDSA_SHA256,
    SIG_ECDSA_SHA384,
    SIG_ECDSA_SHA512,
    SIG_RSA_SHA1,
    SIG_RSA_SHA256,
    SIG_RSA_SHA384,
    SIG_RSA_SHA512,
)

from .types import SamlProvider

__all__ = [
    "STRONG_DIGEST_METHODS",
    "STRONG_SIGNATURE_METHODS",
    "accepted_algorithms",
    "client_for",
    "idp_metadata_xml",
    "key_files",
    "sp_config_dict",
]

# SHA-256 and stronger, RSA or ECDSA: what responses may be signed with, and all the SP
# metadata advertises. Anything else (MD5, SHA-1, SHA-224, RIPEMD-160, DSA, and HMAC,
# whose key would be the IdP's public certificate) is refused before xmlsec1 runs.
STRONG_SIGNATURE_METHODS = frozenset(
    {
        SIG_RSA_SHA256,
        SIG_RSA_SHA384,
        SIG_RSA_SHA512,
        SIG_ECDSA_SHA256,
        SIG_ECDSA_SHA384,
        SIG_ECDSA_SHA512,
    }
)
STRONG_DIGEST_METHODS = frozenset({DIGEST_SHA256, DIGEST_SHA384, DIGEST_SHA512})


def accepted_algorithms(provider: SamlProvider) -> tuple[frozenset[str], frozenset[str]]:
    """(SignatureMethod, DigestMethod) URIs a response of ``provider`` may use: RSA-SHA1
    and SHA-1 join the strong ones only with ``allow_sha1``."""
    if provider.allow_sha1:
        return STRONG_SIGNATURE_METHODS | {SIG_RSA_SHA1}, STRONG_DIGEST_METHODS | {DIGEST_SHA1}
    return STRONG_SIGNATURE_METHODS, STRONG_DIGEST_METHODS


_lock = threading.Lock()
_key_dir: Path | None = None


def _private_dir() -> Path:
    """A directory only this process's user can read, for the SP key pysaml2 wants as a file."""
    global _key_dir
    with _lock:
        if _key_dir is None:
            _key_dir = Path(tempfile.mkdtemp(prefix="appframework-saml-"))
            os.chmod(_key_dir, 0o700)
            atexit.register(shutil.rmtree, _key_dir, True)
        return _key_dir


def key_files(provider: SamlProvider) -> tuple[str, str] | None:
    """(key file, cert file) of the SP's signing pair, written once; None without one."""
    if provider.sp_private_key is None or provider.sp_x509_cert is None:
        return None
    directory = _private_dir() / provider.name
    directory.mkdir(mode=0o700, exist_ok=True)
    key, cert = directory / "sp.key", directory / "sp.crt"
    for path, text in ((key, provider.sp_private_key), (cert, provider.sp_x509_cert)):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
    return str(key), str(cert)


def idp_metadata_xml(provider: SamlProvider) -> str:
    """The IdP's metadata as pysaml2 needs it, made from the provider's fields."""
    return (
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
        'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" '
        f"entityID={quoteattr(provider.idp_entity_id)}>"
        '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
        '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
        f"{provider.idp_x509_cert}"
        "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        f'<md:SingleSignOnService Binding="{BINDING_HTTP_REDIRECT}" '
        f"Location={quoteattr(provider.idp_sso_url)}/>"
        "</md:IDPSSODescriptor></md:EntityDescriptor>"
    )


def sp_config_dict(provider: SamlProvider, clock_skew: int) -> dict[str, Any]:
    config: dict[str, Any] = {
        "entityid": provider.sp_entity_id,
        "xmlsec_binary": get_xmlsec_binary(),
        "metadata": {"inline": [idp_metadata_xml(provider)]},
        "allow_unknown_attributes": True,
        "accepted_time_diff": int(clock_skew),
        "service": {
            "sp": {
                "endpoints": {
                    "assertion_consumer_service": [(provider.acs_url, BINDING_HTTP_POST)],
                },
                "allow_unsolicited": provider.allow_idp_initiated,
                "want_response_signed": True,
                "want_assertions_signed": provider.want_assertions_signed,
                "authn_requests_signed": provider.signs_requests,
                "name_id_format": [NAMEID_FORMAT_UNSPECIFIED],
                "name_id_format_allow_create": True,
                # pysaml2 signs with RSA-SHA1 unless told otherwise.
                "signing_algorithm": SIG_RSA_SHA256,
                "digest_algorithm": DIGEST_SHA256,
            }
        },
    }
    files = key_files(provider)
    if files is not None:
        config["key_file"], config["cert_file"] = files
    return config


@functools.lru_cache(maxsize=64)
def client_for(provider: SamlProvider, clock_skew: int) -> Saml2Client:
    """The pysaml2 client of ``provider``, built on first use (``clock_skew``, seconds
    of tolerance on the assertion's time window, is part of the cache key)."""
    config = SPConfig()
    config.load(sp_config_dict(provider, clock_skew))
    return Saml2Client(config=config)
