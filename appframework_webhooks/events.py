"""Listeners turning application events into webhook events.

Add your own the same way: connect a receiver to your signal and call
``fire_webhook``/``WebhookManager.fire_sync`` with the event name and a JSON object.
"""

from __future__ import annotations

from typing import Any

from .catalogue import WebhookEvent

USER_REGISTERED = "user.registered"
USER_PASSKEY_ADDED = "user.passkey_added"
#: What the endpoint API's "send a test event" sends (to one endpoint, whatever it
#: subscribes to).
WEBHOOK_TEST = "webhook.test"

_ID = {"type": "integer"}

#: The events of this app, in the catalogue through WebhooksServiceProvider.webhook_events.
WEBHOOK_EVENTS = [
    WebhookEvent(
        USER_REGISTERED,
        "A new account was created.",
        {
            "type": "object",
            "properties": {"user_id": _ID},
            "required": ["user_id"],
            "additionalProperties": False,
        },
    ),
    WebhookEvent(
        USER_PASSKEY_ADDED,
        "A user added a passkey to their account.",
        {
            "type": "object",
            "properties": {"user_id": _ID, "passkey_id": _ID},
            "required": ["user_id", "passkey_id"],
            "additionalProperties": False,
        },
    ),
    WebhookEvent(
        WEBHOOK_TEST,
        "A test event, sent on request to one endpoint to check that it receives and "
        "verifies deliveries.",
        {
            "type": "object",
            "properties": {
                "endpoint_id": _ID,
                "sent_at": {"type": "string", "format": "date-time"},
            },
            "required": ["endpoint_id", "sent_at"],
        },
    ),
]


def fire_user_registered(sender: Any, user: Any, request: Any = None, **kwargs: Any) -> None:
    """``user_registered`` → webhook ``user.registered`` with the new user's id (no other
    personal data: add it with your own listener if your receivers need it)."""
    from .manager import fire_webhook

    fire_webhook(request, USER_REGISTERED, {"user_id": user.pk})


def fire_passkey_added(
    sender: Any, user: Any, passkey: Any, request: Any = None, **kwargs: Any
) -> None:
    """``passkey_added`` → webhook ``user.passkey_added`` with the user's and the
    passkey's ids only: the name a user gave a passkey may be personal ("Anna's
    phone"); a receiver that needs it reads it by id."""
    from .manager import fire_webhook

    fire_webhook(request, USER_PASSKEY_ADDED, {"user_id": user.pk, "passkey_id": passkey.pk})
