"""Listeners turning application events into webhook events.

Add your own the same way: connect a receiver to your signal and call
``fire_webhook``/``WebhookManager.fire_sync`` with the event name and a JSON object.
"""

from __future__ import annotations

from typing import Any

USER_REGISTERED = "user.registered"
USER_PASSKEY_ADDED = "user.passkey_added"


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
