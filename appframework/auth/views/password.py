"""Changing the password, and resetting it through a mailed link."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_post_parameters

from ..forms import EmailForm, NewPasswordForm, RequestForm
from ..password_flows import (
    change_password,
    request_password_reset,
    reset_link_user,
    reset_password,
)
from .base import AccountPage, SignedInPage
from .login import public_page

__all__ = [
    "PasswordChangeView",
    "PasswordResetKeyView",
    "PasswordResetSentView",
    "PasswordResetView",
]

#: The reset token, moved from the link's URL into the session before the form is shown
#: (as Django's PasswordResetConfirmView does): the page's address then holds no token a
#: Referer header or an analytics script could carry away.
RESET_SESSION_KEY = "_appframework_reset_token"
SET_PASSWORD = "set-password"


@method_decorator(sensitive_post_parameters(), name="dispatch")
class PasswordChangeView(SignedInPage):
    """A new password, after a recent proof; other sessions and tokens end."""

    form_name = "password_change"
    form_class = NewPasswordForm
    template_name = "appframework/password_change.html"
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        change_password(self.request, self.user, form.cleaned_data["new_password1"])
        return self.done(
            self.adapter.get_login_redirect_url(self.request),
            _("Your password is changed; every other session has ended."),
        )


@method_decorator(public_page, name="dispatch")
class PasswordResetView(AccountPage):
    """An address; a link is mailed when it has an account, and the answer is the same
    when it has none."""

    form_name = "password_reset"
    form_class = EmailForm
    template_name = "appframework/password_reset.html"

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request_password_reset(self.request, form.cleaned_data["email"])
        return HttpResponseRedirect(reverse("appframework:password-reset-sent"))


@method_decorator(public_page, name="dispatch")
class PasswordResetSentView(AccountPage):
    # No form on the page; AccountPage builds one with the request all the same.
    form_class = RequestForm
    template_name = "appframework/password_reset_sent.html"
    http_method_names = ["get", "head"]


@method_decorator(public_page, name="dispatch")
class PasswordResetKeyView(AccountPage):
    """The link's page: the token moves into the session, then the new password form."""

    form_name = "password_reset_key"
    form_class = NewPasswordForm
    template_name = "appframework/password_reset_key.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        token = kwargs["token"]
        if token != SET_PASSWORD:
            request.session[RESET_SESSION_KEY] = token
            # The last segment only: the token may also occur earlier in the path.
            head, _token, tail = request.path.rpartition(token)
            return HttpResponseRedirect(head + SET_PASSWORD + tail)
        self.reset_user = reset_link_user(
            kwargs["uidb64"], request.session.get(RESET_SESSION_KEY, "")
        )
        if self.reset_user is None:
            return self.render_to_response({"invalid": True, **self.get_context_data()}, status=400)
        return super().dispatch(request, *args, **kwargs)

    def page_user(self) -> Any:
        return self.reset_user

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        if getattr(self, "reset_user", None) is None:
            from .base import ELEMENT_DEFAULTS

            return {**ELEMENT_DEFAULTS, "invalid": True}
        # The template asks for it either way (a missing name is logged with the context).
        return {"invalid": False, **super().get_context_data(**kwargs)}

    def form_valid(self, form: forms.Form) -> HttpResponse:
        reset_password(self.request, self.reset_user, form.cleaned_data["new_password1"])
        self.request.session.pop(RESET_SESSION_KEY, None)
        self.adapter.add_message(
            self.request,
            messages.SUCCESS,
            _("Your password is set; every session has ended. Sign in with it."),
        )
        return HttpResponseRedirect(reverse("appframework:login"))
