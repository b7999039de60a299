"""The resolver tests' stack: the lab's views, a switch that stores the session's choice
with ``select_tenant``, and resolvers made by ``tenant_resolver`` over the lab's
Organisation/Membership models."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.http import require_POST

from appframework_tenancy import current_tenant_id
from appframework_tenancy.resolvers import select_tenant, tenant_resolver

from .stream_urls import urlpatterns as lab_urlpatterns

PUBLIC = 10  # the lab's public tenant: anonymous requests and users with no membership

resolve_tenant = tenant_resolver(
    member_tenant_ids="tenancy_lab.Membership",
    header="X-Tenant",
    session_key="tenant_id",
    subdomain="example.com",
    public_tenant=PUBLIC,
)


def tenant(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"tenant": current_tenant_id()})


@require_POST
def select(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"selected": select_tenant(request, request.POST.get("tenant"))})


# The demo's: a resolver's 403, raised before any view, is answered in the problem format.
handler403 = "appframework.views.permission_denied"

urlpatterns = [
    *lab_urlpatterns,
    path("lab/tenant", tenant),
    path("lab/select", select),
]
