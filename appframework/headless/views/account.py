"""The signed-in user's account as JSON: the address, the password, TOTP and recovery
codes, passkeys, linked accounts, trusted browsers. Changes need a recent
authentication (401 ``reauthentication_required``: prove a factor at
``auth/reauthenticate``, then repeat), exactly as on the pages."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ...auth.forms import CodeForm, EmailForm, NewPasswordForm, form_class
from ...auth.linked_accounts import linked_accounts, unlink_account
from ...auth.password_flows import change_password
from ...auth.reauth import require_recent_authentication
from ...auth.trusted_browsers import forget_browser, trusted_browsers
from ...auth.verification import request_email_change
from ...exceptions import NotFoundException, ValidationException
from ..base import HeadlessView
from ..status import user_payload

__all__ = [
    "AccountView",
    "EmailChangeView",
    "LinkedAccountView",
    "LinkedAccountsView",
    "PasskeyView",
    "PasskeysView",
    "PasswordChangeView",
    "RecoveryCodesView",
    "TOTPView",
    "TrustedBrowserView",
    "TrustedBrowsersView",
]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


class _Changing(HeadlessView):
    """An account change: the signed-in user, with a recent proof."""

    def changing_user(self) -> Any:
        user = self.signed_in_user()
        require_recent_authentication(self.request)
        return user


class AccountView(HeadlessView):
    """GET: the user, their address and factors."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        return {"user": user_payload(self.signed_in_user())}


class EmailChangeView(_Changing):
    """POST ``email``: a confirmation goes to the new address; it replaces the old one
    once confirmed (the old one is told). The answer is the same for a taken address."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        user = self.changing_user()
        form = self.form(form_class("email_change", EmailForm), user=user)
        request_email_change(request, user, form.cleaned_data["email"])
        return {"sent": True}


class PasswordChangeView(_Changing):
    """POST ``new_password1``, ``new_password2``: every other session and token ends."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        user = self.changing_user()
        form = self.form(form_class("password_change", NewPasswordForm), user=user)
        change_password(request, user, form.cleaned_data["new_password1"])
        return self.status()


class TOTPView(_Changing):
    """GET: on or off. POST without ``code``: a pending secret (``secret``,
    ``otpauth_uri``; made once, kept until confirmed); POST ``code``: TOTP on, the
    recovery codes (shown this once). DELETE ``code`` (a current code or a recovery
    code): TOTP off."""

    http_method_names = ["get", "post", "delete"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        return {"enabled": bool(getattr(user, "mfa_enabled", False))}

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...mfa.flows import account_name, confirm, default_issuer, enroll
        from ...mfa.totp import provisioning_uri

        user = self.changing_user()
        if getattr(user, "mfa_enabled", False):
            raise ValidationException(
                _("Two-factor authentication is already on."), code="mfa_already_enabled"
            )
        if "code" not in self.body():
            if not getattr(user, "mfa_secret", None):
                enroll(user)
            uri = provisioning_uri(user.mfa_secret, account_name(user), default_issuer())
            return {"secret": user.mfa_secret, "otpauth_uri": uri}
        form = self.form(form_class("totp_activate", CodeForm), user=user)
        return {"recovery_codes": confirm(user, form.cleaned_data["code"], request)}

    def delete(self, request: HttpRequest) -> dict[str, Any]:
        from ...mfa.flows import disable, require_current_code

        user = self.changing_user()
        if not getattr(user, "mfa_enabled", False):
            raise ValidationException(
                _("Two-factor authentication is off for this user."), code="mfa_not_enabled"
            )
        form = self.form(form_class("totp_deactivate", CodeForm), user=user)
        require_current_code(request, user, form.cleaned_data["code"])
        disable(user, request)
        return {"enabled": False}


class RecoveryCodesView(_Changing):
    """GET: how many are left. POST ``code`` (a current one): ten new codes, shown
    this once; the old ones stop working."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        return {"left": len(getattr(user, "mfa_recovery_codes", None) or ())}

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...mfa.flows import regenerate_recovery_codes, require_current_code

        user = self.changing_user()
        form = self.form(form_class("recovery_codes", CodeForm), user=user)
        require_current_code(request, user, form.cleaned_data["code"])
        return {"recovery_codes": regenerate_recovery_codes(user, request)}


def _passkey_payload(passkey: Any) -> dict[str, Any]:
    return {
        "id": passkey.pk,
        "name": passkey.name,
        "created_at": _iso(passkey.created_at),
        "last_used_at": _iso(passkey.last_used_at),
    }


def _passkeys() -> Any:
    if not apps.is_installed("appframework.passkeys"):
        raise NotFoundException(_("Passkeys are not enabled here."), code="passkeys_disabled")
    from ...passkeys.models import Passkey

    return Passkey


class PasskeysView(_Changing):
    """GET: the passkeys. POST ``credential`` (the answer to ``register`` options) and
    ``name``: a new passkey."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        rows = _passkeys().objects.filter(user_id=user.pk).order_by("created_at")
        return {"passkeys": [_passkey_payload(p) for p in rows]}

    def post(self, request: HttpRequest) -> dict[str, Any]:
        from ...passkeys.ceremonies import register

        _passkeys()
        user = self.changing_user()
        data = self.body()
        passkey = register(request, user, data.get("credential"), str(data.get("name") or ""))
        return {"passkey": _passkey_payload(passkey)}


class PasskeyView(_Changing):
    """PATCH ``name``: rename. DELETE (``credential``: an answer to ``confirm`` options,
    for the last second factor): remove."""

    http_method_names = ["patch", "delete"]

    def patch(self, request: HttpRequest, pk: int) -> dict[str, Any]:
        from ...passkeys.flows import rename_passkey

        _passkeys()
        user = self.signed_in_user()
        return {"passkey": _passkey_payload(rename_passkey(user, pk, self.body().get("name")))}

    def delete(self, request: HttpRequest, pk: int) -> dict[str, Any]:
        from ...passkeys.flows import remove_passkey

        _passkeys()
        user = self.changing_user()
        remove_passkey(request, user, pk, self.body().get("credential"))
        return {"removed": True}


class LinkedAccountsView(HeadlessView):
    """GET: the OAuth and SAML identities linked to the account."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        return {
            "linked_accounts": [
                {
                    "kind": a.kind,
                    "id": a.pk,
                    "provider": a.provider,
                    "email": a.email,
                    "created_at": _iso(a.created_at),
                    "last_login_at": _iso(a.last_login_at),
                }
                for a in linked_accounts(user)
            ]
        }


class LinkedAccountView(_Changing):
    """DELETE: unlink (refused for the account's last way in)."""

    http_method_names = ["delete"]

    def delete(self, request: HttpRequest, kind: str, pk: int) -> dict[str, Any]:
        unlink_account(request, self.changing_user(), kind, pk)
        return {"removed": True}


class TrustedBrowsersView(HeadlessView):
    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        return {
            "trusted_browsers": [
                {
                    "id": b.pk,
                    "user_agent": b.user_agent,
                    "created_at": _iso(b.created_at),
                    "last_used_at": _iso(b.last_used_at),
                    "expires_at": _iso(b.expires_at),
                }
                for b in trusted_browsers(user)
            ]
        }


class TrustedBrowserView(HeadlessView):
    """DELETE: that browser asks for the second factor again."""

    http_method_names = ["delete"]

    def delete(self, request: HttpRequest, pk: int) -> dict[str, Any]:
        if not forget_browser(self.signed_in_user(), pk):
            raise NotFoundException(_("No such trusted browser."), code="not_found")
        return {"removed": True}
