"""Forgetting a trusted browser (the two-factor page lists them)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.generic import View

from ..adapter import get_adapter
from ..trusted_browsers import forget_browser
from .base import SignedInMixin

__all__ = ["ForgetTrustedBrowserView"]


class ForgetTrustedBrowserView(SignedInMixin, View):
    """POST: this browser of the user's asks for the second factor again."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not forget_browser(self.user, kwargs["pk"]):
            raise Http404
        get_adapter(request).add_message(
            request, messages.SUCCESS, _("That browser will ask for the second factor again.")
        )
        return HttpResponseRedirect(reverse("appframework:mfa-setup"))
