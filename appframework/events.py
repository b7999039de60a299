"""Application events the suite dispatches; listeners connect with ``.connect``.

``user_registered`` (``UserRegistered``) is sent by the application when an account is
created, with ``user`` and ``request`` (or None): ``user_registered.send(sender=User,
user=user, request=request)``. The webhooks provider listens and fires the webhook
event ``user.registered``.

``passkey_added`` (``PasskeyAdded``) is sent by ``appframework.passkeys`` once a new
passkey is committed, with ``user``, ``passkey`` and ``request``; with
``appframework_webhooks`` installed it fires the webhook event ``user.passkey_added``.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = [
    "PasskeyAdded",
    "UserRegistered",
    "passkey_added",
    "second_factor_guessed",
    "user_registered",
]

user_registered = Signal()
UserRegistered = user_registered
passkey_added = Signal()
PasskeyAdded = passkey_added

#: The free tries of a user's second factor were used up with wrong answers: someone who
#: knows the password may be guessing (``user``, ``request``, ``failures``).
second_factor_guessed = Signal()
