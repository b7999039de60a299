"""Django REST framework with the suite (install the ``[drf]`` extra)::

    REST_FRAMEWORK = {
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "appframework.contrib.drf.BearerTokenAuthentication",
            "appframework.contrib.drf.SessionAuthentication",
        ],
        "DEFAULT_PERMISSION_CLASSES": ["appframework.contrib.drf.GatePermission"],
        "DEFAULT_PARSER_CLASSES": ["appframework.contrib.drf.JSONParser", ...],
        "EXCEPTION_HANDLER": "appframework.contrib.drf.exception_handler",
    }

docs/drf.md describes each class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .authentication import BearerTokenAuthentication, InsufficientScope, SessionAuthentication
    from .exceptions import exception_handler
    from .parsers import JSONParser
    from .permissions import GatePermission, TokenHasScope

_EXPORTS = {
    "BearerTokenAuthentication": ".authentication",
    "InsufficientScope": ".authentication",
    "SessionAuthentication": ".authentication",
    "GatePermission": ".permissions",
    "TokenHasScope": ".permissions",
    "exception_handler": ".exceptions",
    "JSONParser": ".parsers",
}

__all__ = [
    "BearerTokenAuthentication",
    "GatePermission",
    "InsufficientScope",
    "JSONParser",
    "SessionAuthentication",
    "TokenHasScope",
    "exception_handler",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
