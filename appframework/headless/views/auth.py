"""Signing in, out and up, as JSON: the same flows as the pages, the same throttles and
rules; every answer is the session's status (:mod:`appframework.headless.status`)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext_lazy as _

from ...auth.adapter import get_adapter
from ...auth.forms import (
    CodeForm,
    EmailForm,
    LoginForm,
    NewPasswordForm,
    ReauthenticateForm,
    form_class,
)
from ...auth.login_code import request_login_code, user_for_login_code
from ...auth.password_flows import request_password_reset, reset_link_user, reset_password
from ...auth.reauth import reauthenticate
from ...auth.sessions import logout
from ...auth.signin import sign_in, sign_in_after_confirmation
from ...auth.signup import sign_up
from ...auth.verification import (
    confirm_address,
    confirm_code,
    email_verified,
    key_address,
    send_confirmation,
    user_email,
)
from ...conf import app_settings
from ...exceptions import (
    ForbiddenException,
    NotFoundException,
    UnauthorizedException,
    ValidationException,
)
from ..base import HeadlessView

__all__ = [
    "ConfigView",
    "LoginCodeConfirmView",
    "LoginCodeRequestView",
    "LoginView",
    "PasskeyLoginView",
    "PasskeyOptionsView",
    "PasswordResetConfirmView",
    "PasswordResetView",
    "ReauthenticateView",
    "ResendEmailView",
    "SecondFactorView",
    "SessionView",
    "SignupView",
    "VerifyEmailView",
]


def _mfa_installed() -> bool:
    try:
        import pyotp  # noqa: F401
    except ImportError:
        return False
    return True


class ConfigView(HeadlessView):
    """GET: which flows and factors this site has."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        auth = app_settings.AUTH
        return {
            "signup": get_adapter(request).is_open_for_signup(request),
            "email_verification": str(auth.EMAIL_VERIFICATION),
            "email_verification_by_code": bool(auth.EMAIL_VERIFICATION_BY_CODE),
            "login_by_code": bool(auth.LOGIN_BY_CODE),
            "login_field": _login_field(),
            "totp": _mfa_installed(),
            "passkeys": apps.is_installed("appframework.passkeys"),
            "trust_browser": bool(app_settings.MFA.TRUST_BROWSER),
            "reauthentication_timeout": int(auth.REAUTHENTICATION_TIMEOUT),
        }


def _login_field() -> str:
    from ...auth.forms import username_field

    return username_field()[0]


class SessionView(HeadlessView):
    """GET: the status. DELETE: log out (``{"everywhere": true}``: every session, API
    token and trusted browser of the account)."""

    http_method_names = ["get", "delete"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        return self.status()

    def delete(self, request: HttpRequest) -> dict[str, Any]:
        everywhere = self.body().get("everywhere") is True
        logout(request, everywhere=everywhere)
        return self.status()


class LoginView(HeadlessView):
    """POST the login field (``config.login_field``) and ``password``: signed in, or the
    second factor is pending, or (mandatory verification) the address must be confirmed
    first. A wrong password is 401 ``invalid_credentials``; the throttle's 429 as on the
    page."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        form = self.form(form_class("login", LoginForm), status=401, code="invalid_credentials")
        sign_in(request, form.user, "password")
        return self.status()


class SecondFactorView(HeadlessView):
    """POST ``code`` (TOTP or a recovery code) or ``credential`` (a passkey's answer to
    ``challenge`` options); with ``trust`` (browser client, ``MFA["TRUST_BROWSER"]``)
    this browser skips the step next time. A wrong code is 401 ``mfa_invalid_code`` and
    the sign-in stays pending."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Any:
        from ...auth.challenge import pending_user_id
        from ...auth.trusted_browsers import trust_browser
        from ...mfa.flows import complete_challenge

        data = self.body()
        if pending_user_id(request) is None:
            raise ForbiddenException(
                _("No sign-in is waiting for its second factor; sign in again."),
                code="mfa_not_pending",
            )
        code, credential = data.get("code"), data.get("credential")
        if not isinstance(code, str) and credential is None:
            raise ValidationException(_("Send a code or a passkey answer."), code="required")
        user = complete_challenge(
            request, code if isinstance(code, str) else None, passkey=credential
        )
        if user is None:
            raise UnauthorizedException(_("That code is not valid."), code="mfa_invalid_code")
        response = JsonResponse(self.status())
        if (
            data.get("trust") is True
            and self.client == "browser"
            and app_settings.MFA.TRUST_BROWSER
        ):
            trust_browser(request, response, user)
        return response


class PasskeyOptionsView(HeadlessView):
    """POST ``kind`` (``login``, ``challenge``, ``register``, ``reauthenticate``,
    ``confirm``): ``{"publicKey": options}`` for ``navigator.credentials``; the challenge
    is kept in this session."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...passkeys.views import ceremony_options

        _passkeys_installed()
        return {"publicKey": ceremony_options(request, str(self.body().get("kind", "")))}


def _passkeys_installed() -> None:
    if not apps.is_installed("appframework.passkeys"):
        raise NotFoundException(_("Passkeys are not enabled here."), code="passkeys_disabled")


class PasskeyLoginView(HeadlessView):
    """POST ``credential``: the answer to this session's ``login`` options signs its
    owner in (passwordless: both factors)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...auth.challenge import METHOD_ATTR
        from ...passkeys.flows import sign_in_with_passkey

        _passkeys_installed()
        setattr(request, METHOD_ATTR, "passkey")
        sign_in_with_passkey(request, self.body().get("credential"))
        return self.status()


class ReauthenticateView(HeadlessView):
    """POST ``password``, ``code`` or ``credential`` (an answer to ``reauthenticate``
    options): this session has proven a factor now (``recently_authenticated``)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        form = self.form(form_class("reauthenticate", ReauthenticateForm), user=user)
        method = form.cleaned_data["method"]
        reauthenticate(request, user, **{method: form.cleaned_data[method]})
        return self.status()


class SignupView(HeadlessView):
    """POST the sign-up form's fields (``email``, ``password``, the login field when the
    model's is not the email): signed in, or ``verification_required``. Under mandatory
    verification a taken address answers exactly like a new one."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...auth.forms import SignupForm

        if not get_adapter(request).is_open_for_signup(request):
            raise ForbiddenException(_("Sign-up is closed."), code="signup_closed")
        form = self.form(form_class("signup", SignupForm))
        result = sign_up(request, form.cleaned_data)
        if result.sign_in:
            sign_in(request, result.user, "password")
        return self.status()


class VerifyEmailView(HeadlessView):
    """POST ``key`` (from a confirmation link) or ``code`` (typed in the session that
    asked): the address is confirmed; the session that signed up is signed in."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        data = self.body()
        key, code = data.get("key"), data.get("code")
        if isinstance(key, str) and key:
            user, email = key_address(key)
            confirm_address(request, user, email, key=key)
        elif isinstance(code, str) and code:
            form = self.form(form_class("confirm_email_code", CodeForm))
            user, email = confirm_code(request, form.cleaned_data["code"])
            confirm_address(request, user, email)
        else:
            raise ValidationException(_("Send the link's key or the code."), code="required")
        sign_in_after_confirmation(request, user)
        return self.status()


class ResendEmailView(HeadlessView):
    """POST: a new confirmation for the signed-in user's unconfirmed address."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        if not email_verified(user):
            send_confirmation(request, user, user_email(user))
        return self.status()


class PasswordResetView(HeadlessView):
    """POST ``email``: a reset link is mailed when it has an account; the answer is the
    same when it has none."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        form = self.form(form_class("password_reset", EmailForm))
        request_password_reset(request, form.cleaned_data["email"])
        return {"sent": True}


class PasswordResetConfirmView(HeadlessView):
    """POST ``uid`` and ``token`` (the link's two parts) and ``new_password1``,
    ``new_password2``: the password is set, every session of the account ends."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        data = self.body()
        user = reset_link_user(str(data.get("uid", "")), str(data.get("token", "")))
        if user is None:
            raise ValidationException(
                _("This link is not valid any more: it was used, or it expired."),
                code="reset_link_invalid",
            )
        form = self.form(form_class("password_reset_key", NewPasswordForm), user=user)
        reset_password(request, user, form.cleaned_data["new_password1"])
        return self.status()


class LoginCodeRequestView(HeadlessView):
    """POST ``email`` (``AUTH["LOGIN_BY_CODE"]``): a code is mailed when it has an
    account; this session waits for a code either way."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        _login_by_code()
        form = self.form(form_class("login_code", EmailForm))
        request_login_code(request, form.cleaned_data["email"])
        return {"sent": True}


class LoginCodeConfirmView(HeadlessView):
    """POST ``code``: signed in, or on to the second factor. A wrong code is 401
    ``login_code_invalid`` (three tries)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        _login_by_code()
        form = self.form(form_class("login_code_confirm", CodeForm))
        try:
            user = user_for_login_code(request, form.cleaned_data["code"])
        except ValidationException as exc:
            raise UnauthorizedException(exc.detail, code="login_code_invalid") from None
        sign_in(request, user, "email_code")
        return self.status()


def _login_by_code() -> None:
    if not app_settings.AUTH.LOGIN_BY_CODE:
        raise NotFoundException(_("Sign-in by code is off here."), code="login_by_code_disabled")
