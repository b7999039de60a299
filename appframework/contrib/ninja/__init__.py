"""django-ninja with the suite (install the ``[ninja]`` extra)::

    from appframework.contrib.ninja import BearerAuth, SessionAuth, install_exception_handlers

    api = install_exception_handlers(
        NinjaAPI(auth=[BearerAuth(), SessionAuth()], parser=BoundedParser())
    )

docs/ninja.md describes each piece.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .errors import install_exception_handlers
    from .gate import gate
    from .parser import BoundedParser
    from .security import BearerAuth, SessionAuth

_EXPORTS = {
    "BearerAuth": ".security",
    "BoundedParser": ".parser",
    "SessionAuth": ".security",
    "gate": ".gate",
    "install_exception_handlers": ".errors",
}

__all__ = ["BearerAuth", "BoundedParser", "SessionAuth", "gate", "install_exception_handlers"]

__getattr__ = lazy_exports(__name__, _EXPORTS)
