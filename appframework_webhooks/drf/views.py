"""``WebhookEndpointViewSet``: a tenant's customers manage their own endpoints."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from appframework.auth.scopes import WEBHOOKS
from appframework.authorization.guard import bound_gate
from appframework.contrib.drf.permissions import TokenHasScope
from appframework_tenancy.context import current_tenant_id
from appframework_tenancy.exceptions import TenantRequired

from ..models import WebhookDelivery, WebhookEndpoint
from ..probe import send_test_event
from ..recovery import recover_deliveries
from ..rotation import rotate_secret
from ..signing import new_secret, whsec
from .serializers import DeliverySerializer, EndpointSerializer, RecoverSerializer, RotateSerializer

__all__ = ["MANAGE", "VIEW", "WebhookEndpointViewSet"]

#: The Gate abilities the API asks for (define both: an undefined ability is an error).
VIEW = "view-webhooks"
MANAGE = "manage-webhooks"


class WebhookEndpointViewSet(viewsets.ModelViewSet[WebhookEndpoint]):
    """The current tenant's webhook endpoints: list, create, read, update (``active:
    false`` disables, ``true`` enables and clears the failure count), delete; plus
    ``rotate-secret``, ``secret``, ``recover``, ``test`` and ``deliveries``. Another
    tenant's endpoint, and the operator's, are not found; with no tenant selected every
    route is a 404 ``tenant_required``."""

    serializer_class = EndpointSerializer
    queryset = WebhookEndpoint.objects.all()
    #: A personal access token limited to scopes needs ``webhooks`` for every route,
    #: reads included: they hand out signing secrets and receivers' addresses.
    required_scopes: ClassVar[tuple[str, ...]] = (WEBHOOKS,)
    abilities: ClassVar[dict[str, str | None]] = {
        "list": VIEW,
        "retrieve": VIEW,
        "deliveries": VIEW,
        "create": MANAGE,
        "update": MANAGE,
        "partial_update": MANAGE,
        "destroy": MANAGE,
        "rotate_secret": MANAGE,
        "secret": MANAGE,
        "recover": MANAGE,
        "test": MANAGE,
    }

    def get_permissions(self) -> list[Any]:
        # The project's permission classes, and the scope check whatever its
        # authentication classes are.
        return [*super().get_permissions(), TokenHasScope()]

    def get_queryset(self) -> QuerySet[WebhookEndpoint]:
        tenant = current_tenant_id()
        if tenant is None:
            raise TenantRequired(code="tenant_required")
        return WebhookEndpoint.objects.filter(tenant_id=tenant).order_by("id")

    def perform_create(self, serializer: Any) -> None:
        tenant = current_tenant_id()
        if tenant is None:
            raise TenantRequired(code="tenant_required")
        user = self.request.user
        serializer.save(
            tenant_id=tenant,
            owner=user if getattr(user, "is_authenticated", False) else None,
            secret=serializer.validated_data.get("secret") or new_secret(),
        )

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.perform_create(serializer)
        data = dict(serializer.data)
        # Shown here and on GET .../secret/ only, in the form the receiver's library takes.
        data["secret"] = whsec(serializer.instance.secret or "")
        return Response(data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: Any = None) -> Response:
        endpoint = self.get_object()
        given = RotateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        secret = rotate_secret(
            endpoint,
            secret=given.validated_data.get("secret"),
            overlap=given.validated_data.get("overlap"),
        )
        return Response(
            {
                "secret": whsec(secret),
                "previous_secret_expires_at": endpoint.previous_secret_expires_at,
            }
        )

    @action(detail=True, methods=["get"])
    def secret(self, request: Request, pk: Any = None) -> Response:
        endpoint = self.get_object()
        return Response({"secret": whsec(endpoint.secret) if endpoint.secret else None})

    @action(detail=True, methods=["post"])
    def recover(self, request: Request, pk: Any = None) -> Response:
        endpoint = self.get_object()
        given = RecoverSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        since = given.validated_data["since"]
        queued = recover_deliveries(endpoint, since)
        return Response({"queued": queued, "since": since}, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: Any = None) -> Response:
        endpoint = self.get_object()
        return Response({"delivery_id": send_test_event(endpoint)}, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, pk: Any = None) -> Response:
        """The endpoint's delivery log, newest first; ``?failed=true`` keeps the failed
        attempts only."""
        endpoint = self.get_object()
        rows = WebhookDelivery.objects.filter(endpoint=endpoint).order_by("-created_at", "-id")
        if request.query_params.get("failed") in ("true", "1"):
            rows = rows.filter(success=False)
        context = {"show_response": bound_gate().allows_sync(request.user, MANAGE, endpoint)}
        page = self.paginate_queryset(rows)
        if page is not None:
            return self.get_paginated_response(
                DeliverySerializer(page, many=True, context=context).data
            )
        return Response(DeliverySerializer(rows[:100], many=True, context=context).data)
