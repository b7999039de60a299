"""The admin's sign-in forms (``appframework.admin.AdminSite``).

Django's ``AdminAuthenticationForm`` asks ``authenticate()``, which refuses every user
with TOTP on (a password alone never signs them in): such a user would read "Please
enter the correct username and password" after typing the right one. These forms check
the password through the suite's throttled ``AuthManager`` instead, so the view can send
that user on to the code form.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..container import container
from .forms import username_field
from .manager import AuthManager

__all__ = ["AdminCodeForm", "AdminLoginForm"]


class AdminLoginForm(forms.Form):
    """The admin's username and password; ``user`` once valid. ``is_valid()`` raises
    ``TooManyRequestsException`` past the login throttle (the view answers 429)."""

    username = forms.CharField(
        max_length=254,
        widget=forms.TextInput(
            attrs={"autofocus": True, "autocapitalize": "none", "autocomplete": "username"}
        ),
    )
    password = forms.CharField(
        label=_("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.user: Any = None
        self._username_label = username_field()[1]
        self.fields["username"].label = self._username_label

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        username, password = cleaned.get("username"), cleaned.get("password")
        if username is None or password is None:
            return cleaned
        user = container.resolve(AuthManager).attempt_sync(username, password, request=self.request)
        # Django's own wording and rule: the admin is for active staff only; a right
        # password for anyone else reads the same as a wrong one.
        if user is None or not getattr(user, "is_active", True) or not user.is_staff:
            from django.contrib.admin.forms import AdminAuthenticationForm

            raise forms.ValidationError(
                AdminAuthenticationForm.error_messages["invalid_login"],
                code="invalid_login",
                params={"username": self._username_label},
            )
        self.user = user
        return cleaned


class AdminCodeForm(forms.Form):
    """The second step on the admin: an authenticator code or a recovery code."""

    code = forms.CharField(
        label=_("Code"),
        max_length=64,
        widget=forms.TextInput(
            # No numeric keypad: a recovery code has letters.
            attrs={"autofocus": True, "autocomplete": "one-time-code"}
        ),
    )
