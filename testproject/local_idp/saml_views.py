"""The local provider's SAML 2.0 identity provider (pysaml2), for the demo.

Service providers are listed in ``LOCAL_IDP_SAML_SPS`` ("ENTITY_ID=ACS_URL", space-separated;
``--saml-sp`` of ``python -m testproject.local_idp``). The signing key pair is made once in
the data directory (``saml-idp.key.pem`` / ``saml-idp.crt.pem``); point the service provider's
``idp_x509_cert`` at the certificate.
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.views.decorators.http import require_GET

from testproject.local_idp.keys import KeyPair, make_keypair
from testproject.local_idp.saml_idp import SigningIdp, SpInfo

SPS_ENV = "LOCAL_IDP_SAML_SPS"
KEY_NAME = "saml-idp"
_lock = threading.Lock()


def service_providers() -> list[SpInfo]:
    pairs = (item.split("=", 1) for item in os.environ.get(SPS_ENV, "").split() if "=" in item)
    return [SpInfo(entity_id=entity, acs_url=acs) for entity, acs in pairs]


def keypair_in(data_dir: Path) -> KeyPair:
    return make_keypair(data_dir, KEY_NAME, common_name="appframework local IdP")


@functools.cache
def _idp(base_url: str) -> SigningIdp:
    # The entity id and SSO URL follow the address the provider is reached at, like the
    # OIDC issuer, so one process serves 127.0.0.1 and localhost alike.
    with _lock:
        return SigningIdp(
            entity_id=f"{base_url}/saml/metadata",
            sso_url=f"{base_url}/saml/sso",
            keypair=keypair_in(Path(settings.DATA_DIR)),
            service_providers=service_providers(),
        )


def _base(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


@require_GET
def metadata(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        _idp(_base(request)).metadata_xml(), content_type="application/samlmetadata+xml"
    )


def _identity(request: HttpRequest) -> tuple[str, dict[str, list[str]]]:
    user = request.user
    email = getattr(user, "email", "") or f"{user.get_username()}@local-idp.invalid"
    name = user.get_full_name() if hasattr(user, "get_full_name") else ""
    return email, {"mail": [email], "displayName": [name or user.get_username()]}


@require_GET
@login_required
def sso(request: HttpRequest) -> HttpResponse:
    """SP-initiated: answers the AuthnRequest with a signed Response posted to the ACS."""
    idp = _idp(_base(request))
    try:
        parsed = idp.parse_authn_request_query(request.GET)
    except Exception as exc:  # an unknown SP or a malformed request
        return HttpResponseBadRequest(f"Refused SAML request: {exc}", content_type="text/plain")
    email, attributes = _identity(request)
    xml = idp.create_response(
        sp_entity_id=parsed.sp_entity_id,
        acs_url=parsed.acs_url,
        in_response_to=parsed.id,
        name_id=email,
        attributes=attributes,
    )
    return HttpResponse(idp.post_form(xml, parsed.acs_url, request.GET.get("RelayState")))


@require_GET
@login_required
def idp_initiated(request: HttpRequest) -> HttpResponse:
    """IdP-initiated: a signed Response nobody asked for, to the first (or ``?sp=``) SP."""
    idp = _idp(_base(request))
    wanted = request.GET.get("sp")
    sps = [sp for sp in idp.service_providers if wanted in (None, sp.entity_id)]
    if not sps:
        return HttpResponseBadRequest("No such service provider.", content_type="text/plain")
    email, attributes = _identity(request)
    xml = idp.create_response(
        sp_entity_id=sps[0].entity_id, acs_url=sps[0].acs_url, name_id=email, attributes=attributes
    )
    return HttpResponse(idp.post_form(xml, sps[0].acs_url, request.GET.get("RelayState", "/")))
