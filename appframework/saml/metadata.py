"""This site's service-provider metadata, checked against the SAML 2.0 metadata schema."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from saml2.metadata import entity_descriptor

from .types import SamlProvider

__all__ = ["metadata_schema", "metadata_xml"]

_ALGSUPPORT = "urn:oasis:names:tc:SAML:metadata:algsupport"
_SCHEMA_FILES = {
    "http://www.w3.org/XML/1998/namespace": "xml.xsd",
    "http://www.w3.org/2001/04/xmlenc#": "xenc-schema.xsd",
    "http://www.w3.org/2000/09/xmldsig#": "xmldsig-core-schema.xsd",
    "urn:oasis:names:tc:SAML:2.0:assertion": "saml-schema-assertion-2.0.xsd",
    "urn:oasis:names:tc:SAML:2.0:metadata": "saml-schema-metadata-2.0.xsd",
}


@functools.cache
def metadata_schema() -> Any:
    """The SAML 2.0 metadata XML schema (the files ship with pysaml2), loaded once and
    never from the network."""
    import xmlschema

    folder = resources.files("saml2.data.schemas")
    locations = {ns: str(folder.joinpath(name)) for ns, name in _SCHEMA_FILES.items()}
    source = locations["urn:oasis:names:tc:SAML:2.0:metadata"]
    return xmlschema.XMLSchema(
        source, locations=locations, base_url=source, allow="sandbox", use_fallback=False
    )


def _advertise_strong_algorithms_only(descriptor: Any) -> None:
    """pysaml2 lists every algorithm the xmlsec1 binary knows (MD5, SHA-1, RIPEMD-160,
    DSA-SHA1...) as DigestMethod / SigningMethod: an IdP reading them may pick one.
    Only SHA-256 and stronger stay, even with ``allow_sha1`` (which tolerates a legacy
    IdP, and must not invite others)."""
    from .config import STRONG_DIGEST_METHODS, STRONG_SIGNATURE_METHODS

    extensions = getattr(descriptor, "extensions", None)
    if extensions is None:
        return
    strong = {"DigestMethod": STRONG_DIGEST_METHODS, "SigningMethod": STRONG_SIGNATURE_METHODS}
    extensions.extension_elements = [
        element
        for element in extensions.extension_elements
        if element.namespace != _ALGSUPPORT
        or element.attributes.get("Algorithm") in strong.get(element.tag, ())
    ]
    # The schema wants at least one element in an Extensions.
    if not extensions.extension_elements and not extensions.extension_attributes:
        descriptor.extensions = None


@functools.lru_cache(maxsize=64)
def metadata_xml(provider: SamlProvider) -> str:
    """The SP metadata for ``provider`` (entity id, ACS, signing certificate when set,
    the SHA-256 and stronger algorithms accepted); ``RuntimeError`` when the generated
    document does not validate against the schema."""
    from ..conf import app_settings
    from .config import client_for

    config = client_for(provider, int(app_settings.SAML.CLOCK_SKEW)).config
    descriptor = entity_descriptor(config)
    _advertise_strong_algorithms_only(descriptor)
    xml = str(descriptor)
    try:
        metadata_schema().validate(xml)
    except Exception as exc:
        raise RuntimeError(
            f"The SAML metadata generated for provider {provider.name!r} is invalid: {exc}"
        ) from exc
    return xml
