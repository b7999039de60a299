"""Signals of the authorization app.

``gate_evaluated`` is sent after every Gate evaluation (``allows``, ``inspect``, the
backend's ``has_perm`` for abilities the Gate owns). Keyword arguments:

- ``user``: the user asked about (may be None or AnonymousUser);
- ``ability``: the ability name;
- ``arguments``: the tuple of further arguments;
- ``allowed``: the boolean answer;
- ``source``: what decided, e.g. ``"before:myapp.gates.superuser"``,
  ``"define:delete-post"``, ``"policy:PostPolicy.delete_post"``.

Sent with ``sender`` = the Gate instance. With no receivers it costs almost nothing.
"""

from django.dispatch import Signal

__all__ = ["gate_evaluated"]

gate_evaluated = Signal()
