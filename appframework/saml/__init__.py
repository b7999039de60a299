"""SAML 2.0 single sign-on as a service provider, on pysaml2 and xmlsec1: strict
validation, a replay cache, SP metadata, and the default views (docs/saml.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports
from .flows import (
    asaml_acs,
    asaml_acs_redirect,
    asaml_acs_resume,
    asaml_login,
    is_saml_acs_request,
    saml_acs,
    saml_acs_redirect,
    saml_acs_resume,
    saml_login,
    saml_metadata,
)
from .metadata import metadata_xml
from .types import SamlProvider, SamlUser, saml_provider

if TYPE_CHECKING:
    from .apps import SamlServiceProvider

__getattr__ = lazy_exports(__name__, {"SamlServiceProvider": ".apps"})

__all__ = [
    "SamlProvider",
    "SamlServiceProvider",
    "SamlUser",
    "asaml_acs",
    "asaml_acs_redirect",
    "asaml_acs_resume",
    "asaml_login",
    "is_saml_acs_request",
    "metadata_xml",
    "saml_acs",
    "saml_acs_redirect",
    "saml_acs_resume",
    "saml_login",
    "saml_metadata",
    "saml_provider",
]
