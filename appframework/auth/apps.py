from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class AuthServiceProvider(AppConfig):
    """Sessions, the AuthManager backend, API tokens and CSRF wiring.

    Parameters live in ``APPFRAMEWORK["AUTH"]`` (docs/settings.md): ``USERNAME_FIELD``
    (``AUTO``: the user model's own ``USERNAME_FIELD``), ``PASSWORD_FIELD`` (``AUTO``:
    ``password_hash`` when the model has that column, else Django's ``password``),
    ``CSRF_EXEMPT`` (import string of a predicate), ``TOKEN_MANAGER`` (import string of
    the token manager class) ...; the user model is Django's ``AUTH_USER_MODEL``.
    """

    name = "appframework.auth"
    label = "appframework_auth"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "appframework: authentication"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        _add_the_package_translations()
        from .. import checks as core_checks  # noqa: F401 - registers the core checks
        from ..conf import app_settings
        from ..container import container
        from ..ratelimit import RateLimiter
        from . import checks as auth_checks
        from .manager import AuthManager
        from .notifications import connect_notifications
        from .tokens import TokenManager

        checks.register(auth_checks.check_backend)
        checks.register(auth_checks.check_backend_order)
        checks.register(auth_checks.check_user_model)
        checks.register(auth_checks.check_session_engine)
        user_logged_in.connect(_renew_session_nonce, dispatch_uid="appframework.csrf.rotate")
        user_logged_in.connect(_record_sign_in, dispatch_uid="appframework.reauth.sign_in")
        connect_notifications()
        container.bind(AuthManager, AuthManager())
        # The rate limiter the two-factor challenge (and applications) use. Sliding
        # windows: "5 per 60 s" must not allow 10 tries around a minute boundary.
        container.bind(RateLimiter, RateLimiter(algorithm="sliding"))
        try:
            from ..mfa.checks import check_hidden_fields
        except ImportError:  # pyotp (the "mfa" extra) is not installed
            pass
        else:
            checks.register(check_hidden_fields)
        # The key stays TokenManager whatever class the project swaps in, so callers
        # never need to know which one it is.
        container.bind(TokenManager, app_settings.AUTH.TOKEN_MANAGER())


def _renew_session_nonce(sender: object, request: object, user: object, **kwargs: object) -> None:
    from .revocation import renew_nonce

    if request is not None:
        renew_nonce(request)  # type: ignore[arg-type]


def _record_sign_in(sender: object, request: object, user: object, **kwargs: object) -> None:
    # Signing in proves a factor: the account changes right after need no second proof.
    from .challenge import authentication_method
    from .reauth import record_authentication

    if request is not None:
        record_authentication(request, authentication_method(request))  # type: ignore[arg-type]


def _add_the_package_translations() -> None:
    """The package's catalogues (appframework/locale: German, French, Spanish) cover
    every app of the package, but Django only reads ``<app path>/locale`` of installed
    apps, and the package folder itself is no app: its folder goes last on
    ``LOCALE_PATHS`` (the project's own folders come first, so they override it). Runs
    before any catalogue is loaded (Django loads none until every app is ready)."""
    from pathlib import Path

    from django.conf import settings

    locale = str(Path(__file__).resolve().parent.parent / "locale")
    if locale not in [str(p) for p in settings.LOCALE_PATHS]:
        settings.LOCALE_PATHS = [*settings.LOCALE_PATHS, locale]
