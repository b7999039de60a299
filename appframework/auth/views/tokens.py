"""Personal access tokens: the list, making one (its secret shown once) and revoking one.
Making and revoking need a recent proof; looking at the list does not."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.generic import View

from ...errors import response_for_error
from ...exceptions import NotFoundException
from ..access_tokens import access_tokens, create_access_token, revoke_access_token
from ..adapter import get_adapter
from ..forms import AccessTokenForm
from .base import SignedInMixin, SignedInPage

__all__ = ["AccessTokensView", "RevokeAccessTokenView"]


class AccessTokensView(SignedInPage):
    """GET: the tokens and the form for a new one. POST: a new token, whose secret this
    answer shows once (never stored: only its SHA-256 is)."""

    form_name = "access_token"
    form_class = AccessTokenForm
    template_name = "appframework/tokens.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        # Only making a token is a change; the list is not.
        self.reauthenticate = request.method == "POST"
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "tokens": list(access_tokens(self.user))}

    def form_valid(self, form: forms.Form) -> HttpResponse:
        data = form.cleaned_data
        token, secret = create_access_token(
            self.user,
            data["name"],
            expires_in=data.get("expires_in_days"),
            scopes=data.get("scopes") or (),
            request=self.request,
        )
        self.adapter.add_message(
            self.request,
            messages.SUCCESS,
            _("Token “%(name)s” made. Copy it now: it is not shown again.") % {"name": token.name},
        )
        # Rendered, not redirected: the secret lives in this one answer only.
        blank = self.get_form_class()(request=self.request, user=self.user)  # type: ignore[call-arg]
        context = self.get_context_data(form=blank)
        return self.render_to_response(
            {**context, "new_token": token, "secret": secret}, status=201
        )


class RevokeAccessTokenView(SignedInMixin, View):
    """POST: revoke one of the user's tokens (404 for anyone else's)."""

    http_method_names = ["post"]
    reauthenticate = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            token = revoke_access_token(self.user, kwargs["pk"], request=request)
        except NotFoundException as exc:
            return response_for_error(request, exc)
        get_adapter(request).add_message(
            request, messages.SUCCESS, _("Token “%(name)s” revoked.") % {"name": token.name}
        )
        return HttpResponseRedirect(reverse("appframework:tokens"))
