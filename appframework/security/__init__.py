"""CSRF protection and security response headers."""

from __future__ import annotations

from .csrf import CsrfMiddleware, csrf_protect_login, csrf_token
from .headers import SecurityHeadersMiddleware
from .page_csp import apply_page_csp, page_csp

__all__ = [
    "CsrfMiddleware",
    "SecurityHeadersMiddleware",
    "apply_page_csp",
    "csrf_protect_login",
    "csrf_token",
    "page_csp",
]
