"""Sessions, passwords and bearer API tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .decorators import api_auth_required, auth_required
    from .manager import AuthManager
    from .mixins import Authenticatable
    from .passwords import (
        MAX_PASSWORD_BYTES,
        hash_password,
        verify_installed_password,
        verify_password,
    )
    from .sessions import (
        alogin,
        alogout,
        current_user,
        current_user_sync,
        login,
        logout,
        require_auth,
        require_auth_sync,
    )
    from .tokens import (
        TokenManager,
        current_api_user,
        current_api_user_sync,
        require_api_auth,
        require_api_auth_sync,
    )

_EXPORTS = {
    "AuthManager": ".manager",
    "Authenticatable": ".mixins",
    "MAX_PASSWORD_BYTES": ".passwords",
    "hash_password": ".passwords",
    "verify_password": ".passwords",
    "verify_installed_password": ".passwords",
    "login": ".sessions",
    "alogin": ".sessions",
    "logout": ".sessions",
    "alogout": ".sessions",
    "current_user": ".sessions",
    "current_user_sync": ".sessions",
    "require_auth": ".sessions",
    "require_auth_sync": ".sessions",
    "TokenManager": ".tokens",
    "current_api_user": ".tokens",
    "current_api_user_sync": ".tokens",
    "require_api_auth": ".tokens",
    "require_api_auth_sync": ".tokens",
    "auth_required": ".decorators",
    "api_auth_required": ".decorators",
}

__all__ = [
    "MAX_PASSWORD_BYTES",
    "AuthManager",
    "Authenticatable",
    "TokenManager",
    "alogin",
    "alogout",
    "api_auth_required",
    "auth_required",
    "current_api_user",
    "current_api_user_sync",
    "current_user",
    "current_user_sync",
    "hash_password",
    "login",
    "logout",
    "require_api_auth",
    "require_api_auth_sync",
    "require_auth",
    "require_auth_sync",
    "verify_installed_password",
    "verify_password",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
