"""What every account page shares: a ``FormView`` whose form class a project may swap
(``AUTH["FORMS"]``), whose refusals are the suite's errors, and which knows who is signed
in; plus the mixins for pages that need a user, or a recent proof of one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from ...errors import form_errors, problem_json_response, response_for_error
from ...exceptions import (
    AppFrameworkError,
    TooManyRequestsException,
    UnauthorizedException,
    ValidationException,
)
from ...http import asks_for_json, safe_redirect_url, wants_json
from ...security.page_csp import apply_page_csp
from ..adapter import AccountAdapter, get_adapter
from ..forms import form_class
from ..reauth import ReauthenticationRequiredMixin, recently_authenticated
from ..reauth import refusal as reauth_refusal
from ..sessions import current_user_sync

__all__ = [
    "ELEMENT_DEFAULTS",
    "AccountPage",
    "ExtraContext",
    "ReauthenticationRequiredMixin",
    "SignedInMixin",
    "SignedInPage",
    "extra_context_of",
    "login_page_url",
]

ExtraContext = Mapping[str, Any] | Callable[[HttpRequest], Mapping[str, Any]] | None

#: Every optional parameter of the element templates, present (empty) in each page's
#: context: a missing variable would make Django's template engine log the whole context
#: at DEBUG — with a TOTP secret or recovery codes in it.
ELEMENT_DEFAULTS: Mapping[str, Any] = {
    "action": "",
    "attrs": "",
    "autofocus": False,
    "kind": "",
    "level": "",
    "name": "",
    "recovery_codes": None,
    "type": "",
    "value": "",
}


def extra_context_of(request: HttpRequest, extra_context: ExtraContext) -> Mapping[str, Any]:
    """``extra_context`` (``as_view(extra_context=...)``): a dict, or a function of the
    request giving one (the demo's login page adds its single sign-on buttons so)."""
    if extra_context is None:
        return {}
    return extra_context(request) if callable(extra_context) else extra_context


def login_page_url() -> str:
    return reverse("appframework:login")


@method_decorator(never_cache, name="dispatch")
class AccountPage(FormView):
    """A page with one form. ``form_name`` is its key in ``AUTH["FORMS"]``;
    ``invalid_status`` the status of a form that does not validate. A refusal the flows
    raise (a suite error) is shown on the page with its status, or answered as
    problem+json to an API client; a throttle's 429 is always the error answer."""

    form_name = ""
    form_class: type[forms.Form] = forms.Form
    invalid_status = 422
    # FormView would take PUT as a POST: a form page answers GET and POST only.
    http_method_names = ["get", "head", "post"]
    extra_context: ExtraContext = None  # type: ignore[assignment]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return apply_page_csp(super().dispatch(request, *args, **kwargs))

    @property
    def adapter(self) -> AccountAdapter:
        return get_adapter(self.request)

    def get_form_class(self) -> type[forms.Form]:
        return form_class(self.form_name, self.form_class)

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = super().get_form_kwargs()
        kwargs.update(request=self.request, user=self.page_user())
        return kwargs

    def page_user(self) -> Any:
        """The user the page is about: the signed-in one (None for public pages)."""
        return current_user_sync(self.request)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = {
            **ELEMENT_DEFAULTS,
            **extra_context_of(self.request, self.extra_context),
            "next": self.next_url_given(),
        }
        # ContextMixin would merge extra_context itself, callable or not: done above.
        extra, self.extra_context = self.extra_context, None
        try:
            context.update(super().get_context_data(**kwargs))
        finally:
            self.extra_context = extra
        return context

    def next_url_given(self) -> str:
        request = self.request
        return str(request.POST.get("next") or request.GET.get("next") or "")

    def next_url(self, default: str, given: Any = None) -> str:
        """``given`` (else the ``next`` the page was given) when it stays on this site,
        else ``default``."""
        url = self.next_url_given() if given is None else given
        return safe_redirect_url(self.request, url, default)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        form = self.get_form()
        try:
            if form.is_valid():
                return self.form_valid(form)
        except AppFrameworkError as exc:
            return self.refused(form, exc)
        return self.form_invalid(form)

    def refused(self, form: forms.Form, error: AppFrameworkError) -> HttpResponse:
        """A flow said no: the page again with the reason, or the error answer."""
        if isinstance(error, TooManyRequestsException) or asks_for_json(self.request):
            return response_for_error(self.request, error)
        form.add_error(None, str(error.detail))
        return self.render_to_response(self.get_context_data(form=form), status=error.status_code)

    def invalid_error(self, form: forms.Form) -> AppFrameworkError:
        """The error of a form that does not validate, for a client asking for JSON:
        422 ``invalid`` (a page whose ``invalid_status`` is 401 says ``unauthorized``)."""
        if self.invalid_status == 401:
            first = next(iter(form.non_field_errors()), None)
            return UnauthorizedException(first, code="unauthorized")
        return ValidationException(code="invalid")

    def form_invalid(self, form: forms.Form) -> HttpResponse:
        if asks_for_json(self.request):
            return problem_json_response(self.invalid_error(form), form_errors(form))
        return self.render_to_response(self.get_context_data(form=form), status=self.invalid_status)

    def done(self, default: str, message: Any = None) -> HttpResponse:
        """Redirect to ``next`` (same site) or ``default``, with a success message."""
        if message is not None:
            from django.contrib import messages

            self.adapter.add_message(self.request, messages.SUCCESS, message)
        return HttpResponseRedirect(self.next_url(default))


class SignedInMixin:
    """For the views of the signed-in user: a browser without a session goes to the
    login page and back; an API client gets 401. With ``reauthenticate`` (account
    changes), the session must also have proven a factor lately
    (:mod:`appframework.auth.reauth`). ``self.user`` is the user."""

    reauthenticate = False
    user: Any = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        self.user = current_user_sync(request)
        if self.user is None:
            if wants_json(request):
                return response_for_error(request, UnauthorizedException())
            return redirect_to_login(request.get_full_path(), login_page_url())
        if self.reauthenticate and not recently_authenticated(request):
            return reauth_refusal(request)
        # The signed-in pages that are no AccountPage (passkeys, two-factor) get it here.
        return apply_page_csp(super().dispatch(request, *args, **kwargs))  # type: ignore[misc]


@method_decorator(never_cache, name="dispatch")
class SignedInPage(SignedInMixin, AccountPage):
    """An account page with one form, of the signed-in user."""

    def page_user(self) -> Any:
        return self.user
