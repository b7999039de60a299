"""The tenant's own webhook endpoints as a Django REST framework API (the ``[drf]``
extra): register :class:`WebhookEndpointViewSet` on your router. Every action asks the
Gate for ``view-webhooks`` or ``manage-webhooks``; another tenant's endpoint is a 404.
docs/webhooks.md, "The endpoint API"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from appframework.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .serializers import DeliverySerializer, EndpointSerializer
    from .views import WebhookEndpointViewSet

_EXPORTS = {
    "DeliverySerializer": ".serializers",
    "EndpointSerializer": ".serializers",
    "WebhookEndpointViewSet": ".views",
}

__all__ = ["DeliverySerializer", "EndpointSerializer", "WebhookEndpointViewSet"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
