"""Finding the suite's classes in Django's ``AUTHENTICATION_BACKENDS``."""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

__all__ = ["backend_path"]


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
