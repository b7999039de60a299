"""The event names the tests fire, declared the way a project declares its own: on an
AppConfig's ``webhook_events`` (tests/settings.py installs this app). Firing any other
name raises in the tests, as under DEBUG."""

from __future__ import annotations

from django.apps import AppConfig

from appframework_webhooks import WebhookEvent

ORDER = {
    "type": "object",
    "properties": {"id": {"type": "integer"}},
}

TEST_EVENTS = [
    WebhookEvent("order.paid", "An order was paid.", ORDER),
    WebhookEvent("order.shipped", "An order left the warehouse.", ORDER),
    WebhookEvent("order.refunded", "An order was refunded.", ORDER),
    WebhookEvent("invoice.paid", "An invoice was paid."),
    WebhookEvent("e", "A short name for tests about anything but the name."),
    WebhookEvent("hold", "Held by the tests' receiver."),
    WebhookEvent("ssrf.probe", "Sent at addresses the guard refuses."),
    WebhookEvent("blocked.event", "Sent at a blocked address."),
    WebhookEvent("refused.event", "Sent at a refused address."),
    WebhookEvent("nobody.listens", "No endpoint subscribes to it."),
    WebhookEvent("x" * 255, "The longest name there may be."),
    WebhookEvent("chaos.tick", "The chaos run's events."),
    WebhookEvent("chaos.fanout", "The chaos run's fan-out event."),
    WebhookEvent("chaos.dead", "The chaos run's event to an endpoint that always fails."),
]


class TestEventsConfig(AppConfig):
    name = "tests.webhooks.events_app"
    label = "webhook_test_events"
    webhook_events = TEST_EVENTS
