"""The TOTP pages: the two-factor overview, turning TOTP on and off, new recovery codes.

Each is a page of its own (no ``action`` switch); the three that change the account ask
for a recent proof first (``appframework.auth.reauth``), and turning TOTP off or making
new recovery codes also takes a current code, counted on the user's guessing bound: a
stolen session, or a stolen session and the password, cannot take the second factor away.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.generic import TemplateView

from ..auth.factors import has_passkeys
from ..auth.forms import CodeForm, TOTPCodeForm
from ..auth.trusted_browsers import trusted_browsers
from ..auth.views.base import ELEMENT_DEFAULTS, SignedInMixin, SignedInPage
from ..exceptions import ValidationException
from .flows import (
    account_name,
    confirm,
    default_issuer,
    disable,
    enroll,
    regenerate_recovery_codes,
    require_current_code,
)

__all__ = [
    "ActivateTOTPView",
    "DeactivateTOTPView",
    "RecoveryCodesView",
    "TwoFactorView",
    "qr_code_svg",
]


def qr_code_svg(uri: str) -> str:
    """The otpauth URI as an inline SVG QR code: no image URL, so the secret never
    reaches a server log or a cache."""
    import segno

    svg: str = segno.make(uri, error="m").svg_inline(scale=4, dark="#000", light="#fff")
    return svg


def _url(name: str) -> str | None:
    try:
        return reverse(name)
    except NoReverseMatch:
        return None


@method_decorator(never_cache, name="dispatch")
class TwoFactorView(SignedInMixin, TemplateView):
    """What protects the account: TOTP on or off, recovery codes left, passkeys."""

    template_name = "appframework/two_factor.html"
    http_method_names = ["get", "head"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        user = self.user
        return {
            **ELEMENT_DEFAULTS,
            **super().get_context_data(**kwargs),
            "me": user,
            "totp": bool(getattr(user, "mfa_enabled", False)),
            "recovery_codes_left": len(getattr(user, "mfa_recovery_codes", None) or ()),
            "passkeys": has_passkeys(user),
            "passkeys_url": _url("appframework:passkeys"),
            "trusted_browsers": trusted_browsers(user),
        }


@method_decorator(sensitive_post_parameters(), name="dispatch")
class ActivateTOTPView(SignedInPage):
    """Turn TOTP on: the QR code and the secret of a pending enrollment (made on the
    first visit, kept until confirmed), then a code from the app confirms it and the
    recovery codes are shown, once."""

    form_name = "totp_activate"
    form_class = TOTPCodeForm
    template_name = "appframework/totp_activate.html"
    reauthenticate = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        from .totp import provisioning_uri

        context = super().get_context_data(**kwargs)
        user = self.user
        if getattr(user, "mfa_enabled", False):
            context["already_on"] = True
            return context
        if not getattr(user, "mfa_secret", None):
            enroll(user)
        uri = provisioning_uri(user.mfa_secret, account_name(user), default_issuer())
        context.update(secret=user.mfa_secret, qr_svg=qr_code_svg(uri), already_on=False)
        return context

    def form_valid(self, form: forms.Form) -> HttpResponse:
        codes = confirm(self.user, form.cleaned_data["code"], self.request)
        return self.render_to_response({**ELEMENT_DEFAULTS, "recovery_codes": codes})


@method_decorator(sensitive_post_parameters(), name="dispatch")
class DeactivateTOTPView(SignedInPage):
    """Turn TOTP off: with a recent proof and a current code."""

    form_name = "totp_deactivate"
    form_class = CodeForm
    template_name = "appframework/totp_deactivate.html"
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        if not getattr(self.user, "mfa_enabled", False):
            raise ValidationException(
                _("Two-factor authentication is off for this user."), code="mfa_not_enabled"
            )
        require_current_code(self.request, self.user, form.cleaned_data["code"])
        disable(self.user, self.request)
        return self.done(reverse("appframework:mfa-setup"), _("Two-factor authentication is off."))


@method_decorator(sensitive_post_parameters(), name="dispatch")
class RecoveryCodesView(SignedInPage):
    """New recovery codes in place of the old ones: with a recent proof and a current
    code; shown once."""

    form_name = "recovery_codes"
    form_class = CodeForm
    template_name = "appframework/recovery_codes.html"
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        require_current_code(self.request, self.user, form.cleaned_data["code"])
        codes = regenerate_recovery_codes(self.user, self.request)
        return self.render_to_response({**ELEMENT_DEFAULTS, "recovery_codes": codes})
