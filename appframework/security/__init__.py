"""CSRF protection and security response headers."""

from __future__ import annotations

from .csrf import CsrfMiddleware, csrf_protect_login, csrf_token
from .headers import SecurityHeadersMiddleware

__all__ = ["CsrfMiddleware", "SecurityHeadersMiddleware", "csrf_protect_login", "csrf_token"]
