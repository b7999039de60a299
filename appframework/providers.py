"""Every ``...ServiceProvider`` of the core (each an ``AppConfig``)."""

from __future__ import annotations

from .auth.apps import AuthServiceProvider
from .authorization.apps import AuthorizationServiceProvider
from .oauth.apps import OAuthServiceProvider

__all__ = ["AuthServiceProvider", "AuthorizationServiceProvider", "OAuthServiceProvider"]
