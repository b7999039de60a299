"""Linked single sign-on accounts: the list, and unlinking one (after a recent proof)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.generic import TemplateView, View

from ...errors import response_for_error
from ...exceptions import AppFrameworkError
from ...http import asks_for_json
from ..adapter import get_adapter
from ..linked_accounts import linked_accounts, unlink_account
from .base import ELEMENT_DEFAULTS, SignedInMixin

__all__ = ["LinkedAccountsView", "UnlinkAccountView"]


@method_decorator(never_cache, name="dispatch")
class LinkedAccountsView(SignedInMixin, TemplateView):
    template_name = "appframework/linked_accounts.html"
    http_method_names = ["get", "head"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {
            **ELEMENT_DEFAULTS,
            **super().get_context_data(**kwargs),
            "accounts": linked_accounts(self.user),
        }


class UnlinkAccountView(SignedInMixin, View):
    """POST: unlink one identity; refused when it is the account's last way in."""

    http_method_names = ["post"]
    reauthenticate = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        adapter = get_adapter(request)
        try:
            unlink_account(request, self.user, kwargs["kind"], kwargs["pk"])
        except AppFrameworkError as exc:
            if asks_for_json(request) or exc.status_code == 404:
                return response_for_error(request, exc)
            adapter.add_message(request, messages.ERROR, exc.detail)
        else:
            adapter.add_message(request, messages.SUCCESS, _("The account is unlinked."))
        return HttpResponseRedirect(reverse("appframework:linked-accounts"))
