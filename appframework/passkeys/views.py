"""The passkey pages and endpoints, mounted with the account pages
(``appframework.auth.urls``; docs/passkeys.md).

The browser side is ``appframework/passkeys.js`` (static, no CDN): it asks
``passkey-options`` for a ceremony's options, runs ``navigator.credentials``, and posts
the answer as the form field ``credential`` with the form's CSRF token. Adding and
removing a passkey ask for a recent proof first (``appframework.auth.reauth``); removing
the last second factor also asks for one of its passkeys' answers.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django.views.generic import TemplateView

from ..auth.challenge import METHOD_ATTR, pending_user_id
from ..auth.forms import RequestForm
from ..auth.reauth import recently_authenticated
from ..auth.sessions import current_user_sync
from ..auth.views.base import AccountPage, SignedInMixin, SignedInPage
from ..errors import response_for_error
from ..exceptions import (
    AppFrameworkError,
    ForbiddenException,
    UnauthorizedException,
    ValidationException,
)
from ..security.csrf import csrf_protect_login
from .ceremonies import (
    CHALLENGE,
    CONFIRM,
    LOGIN,
    NAME_MAX_LENGTH,
    REAUTHENTICATE,
    REGISTER,
    authentication_options,
    register,
    registration_options,
)
from .flows import is_last_factor, remove_passkey, rename_passkey, sign_in_with_passkey

__all__ = [
    "AddPasskeyForm",
    "AddPasskeyView",
    "PasskeyLoginView",
    "PasskeysView",
    "RemovePasskeyForm",
    "RemovePasskeyView",
    "RenamePasskeyForm",
    "RenamePasskeyView",
    "ceremony_options",
    "passkey_options_view",
]

_CREDENTIAL = forms.CharField(required=False, widget=forms.HiddenInput, max_length=65536)


def _name_field(required: bool) -> forms.CharField:
    # Built when the module loads: a lazy label, or it stays in that moment's language.
    return forms.CharField(
        label=gettext_lazy("Name"),
        max_length=NAME_MAX_LENGTH,
        required=required,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )


class AddPasskeyForm(RequestForm):
    """The authenticator's answer to ``register`` options, and a name for it."""

    credential = _CREDENTIAL
    name = _name_field(required=False)


class RenamePasskeyForm(RequestForm):
    # Checked by rename_passkey (passkey_name_invalid), the one rule for a name.
    name = _name_field(required=False)


class RemovePasskeyForm(RequestForm):
    """For the last second factor: an answer of one of the user's passkeys to
    ``confirm`` options (``credential``)."""

    credential = _CREDENTIAL


def _pending_user(request: HttpRequest) -> Any:
    user_id = pending_user_id(request)
    if user_id is None:
        raise ForbiddenException(
            _("No sign-in is waiting for its second factor; sign in again."),
            code="mfa_not_pending",
        )
    return get_user_model()._base_manager.filter(pk=user_id).first()


def _signed_in(request: HttpRequest) -> Any:
    user = current_user_sync(request)
    if user is None:
        raise UnauthorizedException()
    return user


@csrf_protect_login
@login_not_required
@never_cache
@require_POST
def passkey_options_view(request: HttpRequest) -> HttpResponse:
    """``{"publicKey": options}`` for the ceremony ``kind`` (POST field): ``login``
    (anyone: passwordless), ``challenge`` (the user whose second factor is awaited),
    ``register``, ``confirm`` and ``reauthenticate`` (the signed-in user). The challenge
    is kept in this session; checked for CSRF like the login form, since it writes an
    anonymous session."""
    try:
        options = ceremony_options(request, request.POST.get("kind", ""))
    except AppFrameworkError as exc:
        return response_for_error(request, exc)
    return JsonResponse({"publicKey": options})


def ceremony_options(request: HttpRequest, kind: str) -> dict[str, Any]:
    """The options of the ceremony ``kind`` for this session (the page endpoint above
    and the JSON API share it): ``login`` (anyone), ``challenge`` (the user whose second
    factor is awaited), ``register``, ``confirm``, ``reauthenticate`` (the signed-in
    user). ``ValidationException`` (``invalid_action``) for any other kind."""
    if kind == LOGIN:
        return authentication_options(request, LOGIN)
    if kind == CHALLENGE:
        return authentication_options(request, CHALLENGE, _pending_user(request))
    if kind in (CONFIRM, REAUTHENTICATE):
        return authentication_options(request, kind, _signed_in(request))
    if kind == REGISTER:
        return registration_options(request, _signed_in(request))
    raise ValidationException(_("Unknown passkey ceremony."), code="invalid_action")


@method_decorator([csrf_protect_login, login_not_required], name="dispatch")
class PasskeyLoginView(AccountPage):
    """Passwordless sign-in: the answer to this session's ``login`` options (form field
    ``credential``) signs its owner in, then a same-site ``next`` (else the adapter's
    login redirect). Refusals in the suite's error format."""

    form_name = "passkey_login"
    form_class = RemovePasskeyForm  # one field: credential
    http_method_names = ["post"]

    def form_valid(self, form: forms.Form) -> HttpResponse:
        setattr(self.request, METHOD_ATTR, "passkey")
        sign_in_with_passkey(self.request, form.cleaned_data["credential"])
        return HttpResponseRedirect(
            self.next_url(self.adapter.get_login_redirect_url(self.request))
        )

    def refused(self, form: forms.Form, error: AppFrameworkError) -> HttpResponse:
        return response_for_error(self.request, error)

    def form_invalid(self, form: forms.Form) -> HttpResponse:
        return response_for_error(self.request, ValidationException(code="passkey_malformed"))


def passkeys_context(request: HttpRequest, user: Any) -> dict[str, Any]:
    """What the passkeys page shows: the user's passkeys, whether removing one would
    take the last second factor, the options endpoint."""
    from .models import Passkey

    return {
        "me": user,
        "passkeys": list(Passkey.objects.filter(user_id=user.pk)),
        "last_factor": is_last_factor(user),
        "options_url": reverse("appframework:passkey-options"),
        "recent": recently_authenticated(request),
    }


@method_decorator(never_cache, name="dispatch")
class PasskeysView(SignedInMixin, TemplateView):
    """The signed-in user's passkeys, with when each was created and last used."""

    template_name = "appframework/passkeys.html"
    http_method_names = ["get", "head"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), **passkeys_context(self.request, self.user)}


class _PasskeyChange(SignedInPage):
    """A change posted from the passkeys page; its errors show on that page."""

    template_name = "appframework/passkeys.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return HttpResponseRedirect(reverse("appframework:passkeys"))

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), **passkeys_context(self.request, self.user)}

    def finished(self, message: str) -> HttpResponse:
        return self.done(reverse("appframework:passkeys"), message)


class AddPasskeyView(_PasskeyChange):
    """The answer of ``navigator.credentials.create()`` to ``register`` options: stored,
    named (or "Passkey N")."""

    form_name = "passkey_add"
    form_class = AddPasskeyForm
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        data = form.cleaned_data
        passkey = register(self.request, self.user, data["credential"], data.get("name") or "")
        return self.finished(_("Passkey “%(name)s” added.") % {"name": passkey.name})


class RenamePasskeyView(_PasskeyChange):
    form_name = "passkey_rename"
    form_class = RenamePasskeyForm

    def form_valid(self, form: forms.Form) -> HttpResponse:
        rename_passkey(self.user, self.kwargs["pk"], form.cleaned_data["name"])
        return self.finished(_("Passkey renamed."))


class RemovePasskeyView(_PasskeyChange):
    """Remove one passkey; the last second factor also needs ``credential`` (an answer to
    ``confirm`` options)."""

    form_name = "passkey_remove"
    form_class = RemovePasskeyForm
    reauthenticate = True

    def form_valid(self, form: forms.Form) -> HttpResponse:
        credential = form.cleaned_data.get("credential") or None
        remove_passkey(self.request, self.user, self.kwargs["pk"], credential)
        return self.finished(_("Passkey removed."))
