"""The account's address: whether it is confirmed, and changing it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.generic import TemplateView

from ...conf import app_settings
from ..forms import EmailForm
from ..verification import email_verified, request_email_change, user_email
from .base import ELEMENT_DEFAULTS, SignedInMixin, SignedInPage

__all__ = ["EmailChangeView", "EmailView"]


@method_decorator(never_cache, name="dispatch")
class EmailView(SignedInMixin, TemplateView):
    """The address, confirmed or not (then a button sends the confirmation again)."""

    template_name = "appframework/email.html"
    http_method_names = ["get", "head"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        from ..models import EmailAddress

        pending = EmailAddress.objects.filter(user=self.user, primary=False, verified=False).first()
        return {
            **ELEMENT_DEFAULTS,
            **super().get_context_data(**kwargs),
            "email": user_email(self.user),
            "verified": email_verified(self.user),
            "pending": pending.email if pending is not None else None,
        }


class EmailChangeView(SignedInPage):
    """A new address: confirmed by a link or code sent to it before it replaces the old
    one, which is then told."""

    form_name = "email_change"
    form_class = EmailForm
    template_name = "appframework/email_change.html"
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request_email_change(self.request, self.user, form.cleaned_data["email"])
        self.adapter.add_message(
            self.request,
            messages.INFO,
            _("We sent a message to %(email)s: confirm the address there to use it.")
            % {"email": form.cleaned_data["email"]},
        )
        if app_settings.AUTH.EMAIL_VERIFICATION_BY_CODE:
            # The code is typed in this browser, on the page that asks for it.
            return HttpResponseRedirect(reverse("appframework:verification-sent"))
        return HttpResponseRedirect(reverse("appframework:email"))
