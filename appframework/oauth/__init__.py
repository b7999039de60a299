"""OAuth 2.0 / OpenID Connect login (confidential clients): providers, the one-use
state with its PKCE verifier and nonce, the code exchange, and the default views
(docs/oauth.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports
from .builders import OAuthDiscoveryError, discover, generic_oidc, github, google, microsoft
from .client import OAuthProviderError
from .manager import OAuthCallbackError, OAuthManager
from .types import OAuthProvider, OAuthUser
from .views import aoauth_callback, aoauth_redirect, oauth_callback, oauth_redirect

if TYPE_CHECKING:
    from .apps import OAuthServiceProvider
    from .models import OAuthIdentity

__getattr__ = lazy_exports(__name__, {"OAuthIdentity": ".models", "OAuthServiceProvider": ".apps"})

__all__ = [
    "OAuthCallbackError",
    "OAuthDiscoveryError",
    "OAuthIdentity",
    "OAuthManager",
    "OAuthProvider",
    "OAuthProviderError",
    "OAuthServiceProvider",
    "OAuthUser",
    "aoauth_callback",
    "aoauth_redirect",
    "discover",
    "generic_oidc",
    "github",
    "google",
    "microsoft",
    "oauth_callback",
    "oauth_redirect",
]
