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
        from django.contrib.auth.signals import user_logged_in, user_logged_out

        from .. import checks as core_checks  # noqa: F401 - registers the core checks
        from .. import events
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
        # After the nonce is renewed: the session's row is keyed by the new one.
        user_logged_in.connect(_record_session, dispatch_uid="appframework.user_sessions.in")
        user_logged_out.connect(_unrecord_session, dispatch_uid="appframework.user_sessions.out")
        events.password_changed.connect(
            _forget_other_sessions, dispatch_uid="appframework.user_sessions.password"
        )
        events.password_reset.connect(
            _forget_sessions, dispatch_uid="appframework.user_sessions.reset"
        )
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


def _record_session(sender: object, request: object, user: object, **kwargs: object) -> None:
    from .user_sessions import record_session

    if request is not None:
        record_session(request, user)  # type: ignore[arg-type]


def _unrecord_session(sender: object, request: object, **kwargs: object) -> None:
    from .user_sessions import unrecord_session

    if request is not None:
        unrecord_session(request)  # type: ignore[arg-type]


def _forget_other_sessions(sender: object, user: object, request: object, **kw: object) -> None:
    # The change itself ended the other sessions (the session hash); their rows go too.
    from .user_sessions import forget_other_sessions, forget_sessions

    if request is not None:
        forget_other_sessions(request, user)  # type: ignore[arg-type]
    else:
        forget_sessions(user)


def _forget_sessions(sender: object, user: object, **kwargs: object) -> None:
    from .user_sessions import forget_sessions

    forget_sessions(user)
