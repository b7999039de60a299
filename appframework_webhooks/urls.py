"""``path("", include("appframework_webhooks.urls"))``: the event catalogue at
``/webhooks/events``."""

from __future__ import annotations

from django.urls import path

from .views import event_catalogue_view

app_name = "appframework_webhooks"

urlpatterns = [path("webhooks/events", event_catalogue_view, name="event-catalogue")]
