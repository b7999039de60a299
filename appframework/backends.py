"""Finding the suite's classes in Django's ``AUTHENTICATION_BACKENDS``."""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from .conf import derived_setting

__all__ = ["backend_path", "is_active"]


def is_active(user: object) -> bool:
    """Django's rule: a user without ``is_active`` counts as active; a falsy one does not."""
    return bool(getattr(user, "is_active", True))


@derived_setting
def backend_path(cls: type) -> str | None:
    """The first ``AUTHENTICATION_BACKENDS`` entry naming ``cls`` or a subclass, or None."""
    for path in settings.AUTHENTICATION_BACKENDS:
        try:
            backend = import_string(path)
        except ImportError:
            continue
        if isinstance(backend, type) and issubclass(backend, cls):
            return str(path)
    return None
