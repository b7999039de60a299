"""Sign-up and confirming an address (docs/accounts.md)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.generic import View

from ...errors import response_for_error
from ...exceptions import AppFrameworkError, ForbiddenException, ValidationException
from ..forms import CodeForm, SignupForm
from ..sessions import current_user_sync
from ..signin import sign_in, sign_in_after_confirmation
from ..signup import sign_up
from ..verification import (
    CONFIRM_CODE_SESSION_KEY,
    confirm_address,
    confirm_code,
    email_verified,
    key_address,
    send_confirmation,
    user_email,
)
from .base import AccountPage, SignedInMixin
from .login import public_page, signed_in_response

__all__ = [
    "ConfirmEmailCodeView",
    "ConfirmEmailView",
    "ResendConfirmationView",
    "SignupView",
    "VerificationSentView",
]


@method_decorator(public_page, name="dispatch")
class SignupView(AccountPage):
    """A new account. Then, by ``AUTH["EMAIL_VERIFICATION"]``: signed in (``none``,
    ``optional``: a confirmation is on its way) or the "check your inbox" page
    (``mandatory``, also for an address that has an account already)."""

    form_name = "signup"
    form_class = SignupForm
    template_name = "appframework/signup.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not self.adapter.is_open_for_signup(request):
            return self.render_closed()
        return super().dispatch(request, *args, **kwargs)

    def render_closed(self) -> HttpResponse:
        if self.request.method == "POST":
            return response_for_error(
                self.request, ForbiddenException(_("Sign-up is closed."), code="signup_closed")
            )
        return self.response_class(
            request=self.request,
            template=["appframework/signup_closed.html"],
            context={},
            status=403,
        )

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request = self.request
        try:
            result = sign_up(request, form.cleaned_data)
        except ValidationException as exc:
            if exc.code != "email_taken":
                raise
            # Outside mandatory verification: said next to the address, as any error
            # of the form's own fields.
            form.add_error("email", forms.ValidationError(str(exc.detail), code=exc.code))
            return self.form_invalid(form)
        if not result.sign_in:
            return HttpResponseRedirect(reverse("appframework:verification-sent"))
        outcome = sign_in(request, result.user, "password")
        if result.confirmation is not None:
            self.adapter.add_message(
                request, messages.INFO, _("We sent you a message to confirm your address.")
            )
        after = self.next_url(self.adapter.get_signup_redirect_url(request))
        return signed_in_response(request, outcome, after)


@method_decorator(public_page, name="dispatch")
class VerificationSentView(AccountPage):
    """ "Check your inbox": with codes, the form for the code; with links, a form to
    send the link again to a signed-in user's address."""

    form_name = "confirm_email_code"
    form_class = CodeForm
    template_name = "appframework/verification_sent.html"

    def by_code(self) -> bool:
        return CONFIRM_CODE_SESSION_KEY in self.request.session

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["by_code"] = self.by_code()
        return context

    def form_valid(self, form: forms.Form) -> HttpResponse:
        user, email = confirm_code(self.request, form.cleaned_data["code"])
        confirm_address(self.request, user, email)
        return _confirmed(self, user)


def _confirmed(page: AccountPage, user: Any) -> HttpResponse:
    request = page.request
    page.adapter.add_message(request, messages.SUCCESS, _("Your address is confirmed."))
    outcome = sign_in_after_confirmation(request, user)
    if outcome is None:
        if current_user_sync(request) is not None:
            return HttpResponseRedirect(page.adapter.get_login_redirect_url(request))
        return HttpResponseRedirect(reverse("appframework:login"))
    return signed_in_response(request, outcome, page.adapter.get_login_redirect_url(request))


ConfirmEmailCodeView = VerificationSentView


@method_decorator(public_page, name="dispatch")
class ConfirmEmailView(AccountPage):
    """The page a confirmation link opens: GET shows the address and a button (mail
    scanners open links; only the button's POST confirms), POST confirms it once."""

    form_name = "confirm_email"
    form_class = forms.Form
    template_name = "appframework/confirm_email.html"

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs.pop("request", None)
        kwargs.pop("user", None)
        return kwargs

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        # The template asks for both either way (a missing name is logged with the context).
        kwargs.setdefault("invalid", "")
        kwargs.setdefault("email", "")
        return super().get_context_data(**kwargs)

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            _user, email = key_address(kwargs["key"])
        except AppFrameworkError as exc:
            return self.render_to_response(
                self.get_context_data(invalid=str(exc.detail)), status=exc.status_code
            )
        return self.render_to_response(self.get_context_data(email=email))

    def form_valid(self, form: forms.Form) -> HttpResponse:
        user, email = key_address(self.kwargs["key"])
        confirm_address(self.request, user, email, key=self.kwargs["key"])
        return _confirmed(self, user)

    def refused(self, form: forms.Form, error: Any) -> HttpResponse:
        if isinstance(error, ForbiddenException):
            return super().refused(form, error)
        return self.render_to_response(
            self.get_context_data(invalid=str(error.detail)), status=error.status_code
        )


class ResendConfirmationView(SignedInMixin, View):
    """POST: send the signed-in user's unconfirmed address a new link or code."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if email_verified(self.user):
            return HttpResponseRedirect(reverse("appframework:email"))
        try:
            send_confirmation(request, self.user, user_email(self.user))
        except AppFrameworkError as exc:
            return response_for_error(request, exc)
        return HttpResponseRedirect(reverse("appframework:verification-sent"))
