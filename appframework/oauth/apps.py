from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class OAuthServiceProvider(AppConfig):
    """OAuth 2.0 / OIDC login. Parameters live in ``APPFRAMEWORK["OAUTH"]``: ``PROVIDERS``
    (the providers, or the import string of a function returning them) and ``TIMEOUT``
    (seconds per call to a provider), plus the state cache, MFA and user-handler keys
    (docs/oauth.md). Needs the session machinery (``appframework_oauth.E001``)."""

    name = "appframework.oauth"
    label = "appframework_oauth"
    verbose_name = "appframework: OAuth login"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..container import container
        from . import checks as oauth_checks
        from .manager import OAuthManager

        checks.register(oauth_checks.check_sessions)
        checks.register(oauth_checks.check_settings)
        container.bind(OAuthManager, OAuthManager())
