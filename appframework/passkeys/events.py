"""``passkey_added`` → the webhook event ``user.passkey_added``, when
``appframework_webhooks`` is installed (connected in the app's ``ready()``)."""

from __future__ import annotations

from typing import Any

__all__ = ["USER_PASSKEY_ADDED", "fire_passkey_added"]

USER_PASSKEY_ADDED = "user.passkey_added"


def fire_passkey_added(
    sender: Any, user: Any, passkey: Any, request: Any = None, **kwargs: Any
) -> None:
    """The user's and the passkey's ids only: the name a user gave a passkey may be
    personal ("Anna's phone"); a receiver that needs it reads it by id."""
    from appframework_webhooks import fire_webhook

    fire_webhook(request, USER_PASSKEY_ADDED, {"user_id": user.pk, "passkey_id": passkey.pk})
