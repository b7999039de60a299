"""The forms of the account pages (docs/accounts.md).

Each is a plain Django form; a page takes its form class from
``APPFRAMEWORK["AUTH"]["FORMS"][name]`` when the project names one (a subclass usually),
else the one here. Forms that check something (a password, a code) do it in ``clean``
through the suite's flows, so a swapped form keeps the throttles and the rules; what they
found is on the form (``form.user``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.validators import MaxLengthValidator
from django.http import HttpRequest
from django.utils.module_loading import import_string
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings

__all__ = [
    "AccessTokenForm",
    "CodeForm",
    "EmailForm",
    "LoginForm",
    "LogoutForm",
    "NewPasswordForm",
    "ReauthenticateForm",
    "SignupForm",
    "TOTPCodeForm",
    "form_class",
    "username_field",
]

#: The longest a personal access token may last, in days.
ACCESS_TOKEN_MAX_DAYS = 365

#: The longest code the code fields take (a recovery code with its dashes is 14).
CODE_MAX_LENGTH = 64


def _hashable_length(value: str) -> None:
    """A new password the suite can hash (``passwords.MAX_PASSWORD_BYTES``): a longer
    one is the form's error, not the hasher's ``ValueError``."""
    from .passwords import MAX_PASSWORD_BYTES

    if len(value.encode("utf-8", "surrogatepass")) > MAX_PASSWORD_BYTES:
        raise forms.ValidationError(
            _("This password is too long (at most %(max)d bytes)."),
            code="password_too_long",
            params={"max": MAX_PASSWORD_BYTES},
        )


def form_class(name: str, default: type[forms.Form]) -> type[forms.Form]:
    """``AUTH["FORMS"][name]`` (an import string or a class), else ``default``."""
    value = (app_settings.AUTH.FORMS or {}).get(name)
    if value is None:
        return default
    cls = import_string(value) if isinstance(value, str) else value
    if not (isinstance(cls, type) and issubclass(cls, forms.Form)):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"APPFRAMEWORK['AUTH']['FORMS'][{name!r}] is not a form class.")
    return cls


def username_field() -> tuple[str, str, str]:
    """(field name, label, input type) of the user model's ``USERNAME_FIELD``: the login
    form asks for what the model signs in with, "Email" for an email model."""
    model = get_user_model()
    name = model.USERNAME_FIELD
    field = model._meta.get_field(name)
    label = capfirst(str(getattr(field, "verbose_name", name)))
    kind = "email" if field.get_internal_type() == "EmailField" or name == "email" else "text"
    return name, label, kind


def _login_name_field() -> forms.CharField:
    _name, label, kind = username_field()
    widget_class = forms.EmailInput if kind == "email" else forms.TextInput
    return forms.CharField(
        label=label,
        max_length=254,
        widget=widget_class(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )


def _code_field(label: Any = None, *, numeric: bool = False) -> forms.CharField:
    # A phone's numeric keypad only where every valid code is digits (a TOTP code): a
    # mailed code (7CRQHJ) or a recovery code has letters it could not type.
    attrs = {"autocomplete": "one-time-code", "spellcheck": "false"}
    if numeric:
        attrs["inputmode"] = "numeric"
    return forms.CharField(
        label=label or _("Code"), max_length=CODE_MAX_LENGTH, widget=forms.TextInput(attrs=attrs)
    )


class RequestForm(forms.Form):
    """A form that knows its request (and, on account pages, its user)."""

    def __init__(
        self, *args: Any, request: HttpRequest | None = None, user: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.user = user


class LoginForm(RequestForm):
    """The login name (the model's ``USERNAME_FIELD``) and the password. Valid when the
    password is right, through ``AuthManager`` (the login throttle:
    ``TooManyRequestsException`` past the limit); ``user`` then holds the account."""

    error_messages = {
        "invalid_login_email": _("Wrong email or password."),
        "invalid_login": _("Wrong username or password."),
    }

    password = forms.CharField(
        label=_("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Named as the model's field (email, username): what browsers and password
        # managers already filled in for this site.
        self.login_field, _label, self.login_kind = username_field()
        self.fields = {self.login_field: _login_name_field(), **self.fields}

    def clean(self) -> dict[str, Any]:
        from ..container import container
        from .manager import AuthManager

        cleaned: dict[str, Any] = super().clean() or {}
        login, password = cleaned.get(self.login_field), cleaned.get("password")
        if login is None or password is None:
            return cleaned
        user = container.resolve(AuthManager).attempt_sync(login, password, request=self.request)
        if user is None:
            code = "invalid_login_email" if self.login_kind == "email" else "invalid_login"
            raise forms.ValidationError(self.error_messages[code], code=code)
        self.user = user
        return cleaned


class CodeForm(RequestForm):
    """One code: a TOTP code or a recovery code (the sign-in challenge, TOTP pages), or
    the code of a mail (email confirmation, sign-in by code)."""

    code = _code_field()


class TOTPCodeForm(CodeForm):
    """A code from the authenticator app only (turning TOTP on): digits, so phones show
    the numeric keypad."""

    code = _code_field(numeric=True)


class ReauthenticateForm(RequestForm):
    """Proof of one factor of the signed-in user: ``password``, ``code`` (TOTP or a
    recovery code) or ``credential`` (a passkey's answer). The view checks it; the form
    only says which was given."""

    password = forms.CharField(
        label=_("Password"),
        strip=False,
        required=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    code = _code_field()
    credential = forms.CharField(required=False, widget=forms.HiddenInput, max_length=65536)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["code"].required = False

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        given = [name for name in ("password", "code", "credential") if cleaned.get(name)]
        if len(given) != 1:
            raise forms.ValidationError(
                _("Give your password, a code or your passkey."), code="factor_required"
            )
        cleaned["method"] = given[0]
        return cleaned


class SignupForm(RequestForm):
    """A new account: the email address, the login name when the model's is not the
    email, and a password Django's ``AUTH_PASSWORD_VALIDATORS`` accept."""

    email = forms.EmailField(
        label=_("Email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = forms.CharField(
        label=_("Password"),
        strip=False,
        validators=[_hashable_length],
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        model = get_user_model()
        name, _label, kind = username_field()
        self.username_name: str | None = None
        if kind != "email" and name != model.get_email_field_name():
            field = _login_name_field()
            # The model column's length, not the login form's 254: a longer name would
            # fail at INSERT (a 500), as Django's UserCreationForm never lets it.
            max_length = getattr(model._meta.get_field(name), "max_length", None)
            if max_length:
                field.max_length = max_length
                field.widget.attrs["maxlength"] = str(max_length)
                field.validators = [
                    v for v in field.validators if not isinstance(v, MaxLengthValidator)
                ] + [MaxLengthValidator(max_length)]
            self.fields = {name: field, **self.fields}
            self.username_name = name
            setattr(self, f"clean_{name}", self._clean_username)

    def _clean_username(self) -> Any:
        """The model field's own checks (its validators: no spaces or slashes in
        Django's usernames) and, as Django's UserCreationForm, no other account with the
        name in any case. A username is public, so saying it is taken tells nothing."""
        model = get_user_model()
        name = str(self.username_name)
        value = self.cleaned_data[name]
        # Django's base user normalises (NFKC); the suite's plain-model users need not.
        normalize = getattr(model, "normalize_username", None)
        if normalize is not None:
            value = normalize(value)
        field: Any = model._meta.get_field(name)
        try:
            value = field.clean(value, None)
        except forms.ValidationError as exc:
            raise forms.ValidationError(exc.error_list) from None
        if field.unique and model._default_manager.filter(**{f"{name}__iexact": value}).exists():
            taken = model().unique_error_message(model, (name,))
            raise forms.ValidationError(taken.message, code="username_taken", params=taken.params)
        return value

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip()
        local, _sep, domain = email.rpartition("@")
        return f"{local}@{domain.lower()}"

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        password = cleaned.get("password")
        if password:
            from .adapter import get_adapter

            candidate = get_adapter(self.request).new_user(self.request)
            get_adapter(self.request).populate_user(self.request, candidate, cleaned)
            try:
                validate_password(password, candidate)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return cleaned


class NewPasswordForm(RequestForm):
    """A new password, typed twice, that Django's ``AUTH_PASSWORD_VALIDATORS`` accept for
    the form's user (field names as Django's ``SetPasswordForm``)."""

    new_password1 = forms.CharField(
        label=_("New password"),
        strip=False,
        validators=[_hashable_length],
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    new_password2 = forms.CharField(
        label=_("New password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        first, second = cleaned.get("new_password1"), cleaned.get("new_password2")
        if first and second and first != second:
            self.add_error(
                "new_password2",
                forms.ValidationError(_("The two passwords differ."), code="password_mismatch"),
            )
        elif first:
            try:
                validate_password(first, self.user)
            except forms.ValidationError as exc:
                self.add_error("new_password1", exc)
        return cleaned


class EmailForm(RequestForm):
    """An email address: a new one for the account, or where to send a code or a link."""

    email = forms.EmailField(
        label=_("Email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


class LogoutForm(RequestForm):
    """``everywhere``: end every session and API token of the account, not only this one."""

    everywhere = forms.BooleanField(label=_("Log out everywhere"), required=False)


class AccessTokenForm(RequestForm):
    """A new personal access token: its ``name``, ``expires_in_days`` (1 to 365; empty:
    never) and ``scopes`` (of ``AUTH["ACCESS_TOKEN_SCOPES"]``; none: not limited)."""

    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("What the token is for, e.g. “deploy script”."),
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    expires_in_days = forms.IntegerField(
        label=_("Expires in (days)"),
        required=False,
        min_value=1,
        max_value=ACCESS_TOKEN_MAX_DAYS,
        help_text=_("Leave empty for a token that does not expire."),
    )
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: the token may do whatever you may."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from .access_tokens import known_scopes

        super().__init__(*args, **kwargs)
        field = self.fields["scopes"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(scope, scope) for scope in known_scopes()]
