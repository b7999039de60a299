"""The account flows as a JSON API for single-page and mobile apps (docs/headless.md):
a ``browser`` client on the session cookie and CSRF, an ``app`` client on a session
token in ``X-Session-Token``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .app_sessions import SESSION_TOKEN_HEADER, AppSessionStore
    from .middleware import SessionMiddleware

__getattr__ = lazy_exports(
    __name__,
    {
        "SESSION_TOKEN_HEADER": ".app_sessions",
        "AppSessionStore": ".app_sessions",
        "SessionMiddleware": ".middleware",
    },
)

__all__ = ["SESSION_TOKEN_HEADER", "AppSessionStore", "SessionMiddleware"]
