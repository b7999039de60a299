"""Signing in with a mailed code (``AUTH["LOGIN_BY_CODE"]``; 404 while it is off)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator

from ...conf import app_settings
from ...exceptions import ValidationException
from ..forms import CodeForm, EmailForm
from ..login_code import code_pending, request_login_code, user_for_login_code
from ..signin import sign_in
from .base import AccountPage
from .login import NEXT_SESSION_KEY, public_page, signed_in_response

__all__ = ["LoginCodeConfirmView", "LoginCodeView"]


class _LoginCodePage(AccountPage):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not app_settings.AUTH.LOGIN_BY_CODE:
            raise Http404
        return super().dispatch(request, *args, **kwargs)


@method_decorator(public_page, name="dispatch")
class LoginCodeView(_LoginCodePage):
    """An address; the next page asks for the code mailed to it."""

    form_name = "login_code"
    form_class = EmailForm
    template_name = "appframework/login_code.html"

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request_login_code(self.request, form.cleaned_data["email"])
        self.request.session[NEXT_SESSION_KEY] = self.next_url(
            self.adapter.get_login_redirect_url(self.request)
        )
        return HttpResponseRedirect(reverse("appframework:login-code-confirm"))


@method_decorator(public_page, name="dispatch")
class LoginCodeConfirmView(_LoginCodePage):
    """The code: signs in (or on to the second factor); wrong three times, ask again."""

    form_name = "login_code_confirm"
    form_class = CodeForm
    template_name = "appframework/login_code_confirm.html"
    invalid_status = 401

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if app_settings.AUTH.LOGIN_BY_CODE and not code_pending(request):
            return HttpResponseRedirect(reverse("appframework:login-code"))
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: forms.Form) -> HttpResponse:
        request = self.request
        try:
            user = user_for_login_code(request, form.cleaned_data["code"])
        except ValidationException as exc:
            form.add_error(None, str(exc.detail))
            return self.form_invalid(form)
        after = request.session.pop(NEXT_SESSION_KEY, None)
        after = self.next_url(self.adapter.get_login_redirect_url(request), given=after or "")
        return signed_in_response(request, sign_in(request, user, "email_code"), after)
