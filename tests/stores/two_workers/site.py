"""The minimal project's URLs, its SAML providers and the header naming the worker that
answered (the test counts the requests that changed process)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path

IDP_ENTITY_ID = "http://idp.test/metadata"
IDP_SSO_URL = "http://idp.test/sso"
#: Two providers: ``test`` as the defaults make it (SP-initiated only), and
#: ``unsolicited`` accepting IdP-initiated responses, whose replay only the record of
#: accepted assertion ids refuses.
PROVIDERS = {"test": False, "unsolicited": True}
WORKER_HEADER = "X-Worker"


def sp_urls(base_url: str, name: str) -> tuple[str, str]:
    """(entity id, ACS URL) of provider ``name`` on the server at ``base_url``."""
    return f"{base_url}/saml/{name}/metadata", f"{base_url}/saml/{name}/acs"


def saml_providers() -> list[Any]:
    from appframework.saml import saml_provider

    base_url = os.environ["TWO_WORKERS_BASE_URL"]
    certificate = Path(os.environ["TWO_WORKERS_IDP_CERT"]).read_text(encoding="ascii")
    providers = []
    for name, idp_initiated in PROVIDERS.items():
        entity_id, acs_url = sp_urls(base_url, name)
        providers.append(
            saml_provider(
                name=name,
                idp_entity_id=IDP_ENTITY_ID,
                idp_sso_url=IDP_SSO_URL,
                idp_x509_cert=certificate,
                sp_entity_id=entity_id,
                acs_url=acs_url,
                allow_idp_initiated=idp_initiated,
            )
        )
    return providers


class WorkerHeaderMiddleware:
    """Every answer says which process gave it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[WORKER_HEADER] = str(os.getpid())
        return response


def whoami(request: HttpRequest) -> JsonResponse:
    from appframework.auth import current_user_sync

    user = current_user_sync(request)
    return JsonResponse({"user": user.get_username() if user is not None else None})


urlpatterns = [
    path("", include("appframework.saml.urls")),
    path("accounts/", include("appframework.auth.urls")),
    path("whoami", whoami),
]
