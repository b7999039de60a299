"""Signing in and out, the second step, and proving it's you again.

Every view that signs in or out is ``csrf_protect_login``: another site must not be able
to sign the visitor in to its own account (login CSRF) or out of theirs.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.debug import sensitive_post_parameters

from ...conf import app_settings
from ...security.csrf import csrf_protect_login
from ..challenge import NEXT_SESSION_KEY, pending_user_id
from ..factors import has_passkeys
from ..forms import CodeForm, LoginForm, LogoutForm, ReauthenticateForm, username_field
from ..reauth import reauthenticate
from ..sessions import logout
from ..signin import SIGNED_IN, VERIFY_EMAIL, sign_in
from ..trusted_browsers import trust_browser
from .base import AccountPage, SignedInPage, login_page_url

__all__ = [
    "CHALLENGE_TEMPLATE",
    "LOGIN_TEMPLATE",
    "NEXT_SESSION_KEY",
    "ChallengeForm",
    "ChallengeView",
    "LoginView",
    "LogoutView",
    "ReauthenticateView",
    "challenge_factors",
    "passkey_urls",
    "signed_in_response",
]

LOGIN_TEMPLATE = "appframework/login.html"
CHALLENGE_TEMPLATE = "appframework/mfa_challenge.html"


def passkey_urls() -> dict[str, str] | None:
    """The passkey endpoints the pages' script calls (``options``, ``login``), or None
    when ``appframework.passkeys`` is not installed or its URLs not mounted."""
    if not apps.is_installed("appframework.passkeys"):
        return None
    try:
        return {
            "options": reverse("appframework:passkey-options"),
            "login": reverse("appframework:passkey-login"),
        }
    except NoReverseMatch:
        return None


def _url(name: str) -> str | None:
    try:
        return reverse(name)
    except NoReverseMatch:
        return None


public_page = [csrf_protect_login, login_not_required, sensitive_post_parameters()]


@method_decorator(public_page, name="dispatch")
class LoginView(AccountPage):
    """The password form; users with a second factor continue to the code form.

    Wrong passwords are throttled per account and client address; past the limit the
    answer is a 429 with ``Retry-After``, even for the right password. Only a same-site
    ``next`` is followed, after the code form too."""

    form_name = "login"
    form_class = LoginForm
    template_name = LOGIN_TEMPLATE
    invalid_status = 401

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request = self.request
        after = self.next_url(self.adapter.get_login_redirect_url(request))
        return signed_in_response(request, sign_in(request, form.user, "password"), after)  # type: ignore[attr-defined]

    def get_form(self, form_class: type[forms.Form] | None = None) -> forms.Form:
        form = super().get_form(form_class)
        field = form.fields.get(username_field()[0])
        if field is not None and passkey_urls() is not None:
            # Browsers with passkey autofill list this site's passkeys under the field.
            field.widget.attrs["autocomplete"] = "username webauthn"
        return form

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        name, label, kind = username_field()
        context.update(
            username_field=name,
            username_label=label,
            username_type=kind,
            passkey=passkey_urls(),
            signup_url=_url("appframework:signup")
            if self.adapter.is_open_for_signup(self.request)
            else None,
            password_reset_url=_url("appframework:password-reset"),
            login_code_url=_url("appframework:login-code"),
        )
        return context


def signed_in_response(request: HttpRequest, outcome: str, after: str) -> HttpResponse:
    """The page after a first factor: ``after`` when signed in, else the code form (the
    target kept for it) or "check your inbox"."""
    if outcome == SIGNED_IN:
        return HttpResponseRedirect(after)
    if outcome == VERIFY_EMAIL:
        return HttpResponseRedirect(reverse("appframework:verification-sent"))
    # After start_challenge: it cycles the session key, the value stays.
    request.session[NEXT_SESSION_KEY] = after
    return HttpResponseRedirect(reverse("appframework:mfa-challenge"))


def challenge_factors(user_id: Any) -> dict[str, Any]:
    """What the challenge page offers the pending user: ``passkey`` (the endpoints, when
    they have a passkey) and ``totp`` (TOTP on: the code form; recovery codes too)."""
    user = get_user_model()._base_manager.filter(pk=user_id).first()
    urls = passkey_urls() if has_passkeys(user) else None
    return {"passkey": urls, "totp": bool(getattr(user, "mfa_enabled", False))}


class ChallengeForm(CodeForm):
    """The second step: a TOTP or recovery ``code``, or a passkey's answer
    (``credential``); checking it is the view's (``complete_challenge``). With
    ``MFA["TRUST_BROWSER"]``, ``trust``: skip this step here for ``MFA["TRUST_DAYS"]``."""

    credential = forms.CharField(required=False, widget=forms.HiddenInput, max_length=65536)
    trust = forms.BooleanField(required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["code"].required = False
        if app_settings.MFA.TRUST_BROWSER:
            days = int(app_settings.MFA.TRUST_DAYS)
            self.fields["trust"].label = ngettext(
                "Trust this browser for %(days)d day", "Trust this browser for %(days)d days", days
            ) % {"days": days}
        else:
            del self.fields["trust"]

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if not cleaned.get("code") and not cleaned.get("credential"):
            raise forms.ValidationError(_("Enter a code, or use your passkey."), code="required")
        return cleaned


@method_decorator(public_page, name="dispatch")
class ChallengeView(AccountPage):
    """Step two of signing in: a passkey (offered first, when the user has one), the
    authenticator code or a recovery code. A wrong code keeps the pending sign-in for a
    retry (401), as does a refused passkey (its status and code); past the guessing
    bound, 429 (docs/mfa.md)."""

    form_name = "mfa_challenge"
    form_class = ChallengeForm
    template_name = CHALLENGE_TEMPLATE
    invalid_status = 401

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        self.pending = pending_user_id(request)
        if self.pending is None:
            return HttpResponseRedirect(login_page_url())
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: forms.Form) -> HttpResponse:
        from ...mfa.flows import complete_challenge

        request = self.request
        # Read before complete_challenge: signing in cycles the session.
        after = request.session.get(NEXT_SESSION_KEY)
        data = form.cleaned_data
        user = complete_challenge(request, data.get("code"), passkey=data.get("credential") or None)
        if user is None:
            form.add_error(None, _("That code is not valid."))
            return self.form_invalid(form)
        request.session.pop(NEXT_SESSION_KEY, None)
        default = self.adapter.get_login_redirect_url(request)
        response = HttpResponseRedirect(self.next_url(default, given=after or ""))
        if data.get("trust"):
            trust_browser(request, response, user)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(challenge_factors(self.pending))
        return context


@method_decorator([csrf_protect_login, login_not_required], name="dispatch")
class LogoutView(AccountPage):
    """GET: a page asking to confirm (a link or a prefetch must not log anyone out);
    POST: log out (``everywhere``: every session and API token of the account), then
    ``next`` or the adapter's ``get_logout_redirect_url``."""

    form_name = "logout"
    form_class = LogoutForm
    template_name = "appframework/logout.html"

    def form_valid(self, form: forms.Form) -> HttpResponse:
        logout(self.request, everywhere=bool(form.cleaned_data.get("everywhere")))
        return HttpResponseRedirect(
            self.next_url(self.adapter.get_logout_redirect_url(self.request))
        )


@method_decorator([csrf_protect_login, sensitive_post_parameters()], name="dispatch")
class ReauthenticateView(SignedInPage):
    """ "Confirm it's you": the factors the user has — password, TOTP or recovery code, a
    passkey with user verification — each bounded as at sign-in. Then back to ``next``
    (the page that asked)."""

    form_name = "reauthenticate"
    form_class = ReauthenticateForm
    template_name = "appframework/reauthenticate.html"
    invalid_status = 401

    def form_valid(self, form: forms.Form) -> HttpResponse:
        data = form.cleaned_data
        method = data["method"]
        reauthenticate(self.request, self.user, **{method: data[method]})
        return self.done(self.adapter.get_login_redirect_url(self.request))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        user = self.user
        context.update(
            password=user.has_usable_password(),
            totp=bool(getattr(user, "mfa_enabled", False)),
            passkey=passkey_urls() if has_passkeys(user) else None,
        )
        return context
