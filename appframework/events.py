"""Application events the suite dispatches; listeners connect with ``.connect``.

``user_registered`` (``UserRegistered``) is sent by the application when an account is
created, with ``user`` and ``request`` (or None): ``user_registered.send(sender=User,
user=user, request=request)``. The webhooks provider listens and fires the webhook
event ``user.registered``.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["UserRegistered", "user_registered"]

user_registered = Signal()
UserRegistered = user_registered
