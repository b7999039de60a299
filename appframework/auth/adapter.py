"""``AccountAdapter``: what a project overrides of the account pages and flows.

One class, chosen by ``APPFRAMEWORK["AUTH"]["ADAPTER"]`` (an import string), as
django-allauth's ``ACCOUNT_ADAPTER``::

    class MyAdapter(AccountAdapter):
        def get_login_redirect_url(self, request):
            return "/dashboard/"

        def is_open_for_signup(self, request):
            return request.get_host() == "app.example.com"

Every page and API flow asks :func:`get_adapter` for it; docs/accounts.md lists the
methods. The defaults follow Django's settings (``LOGIN_REDIRECT_URL``,
``LOGOUT_REDIRECT_URL``, ``DEFAULT_FROM_EMAIL``) and the suite's (``AUTH["SIGNUP"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives
from django.http import HttpRequest
from django.shortcuts import resolve_url
from django.template import TemplateDoesNotExist
from django.template.loader import render_to_string

from ..conf import app_settings
from ..http import client_ip

__all__ = ["AccountAdapter", "get_adapter"]


class AccountAdapter:
    """The default behaviour; subclass it and name the subclass in ``AUTH["ADAPTER"]``."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        self.request = request

    # -- where the browser goes next --------------------------------------------------
    def get_login_redirect_url(self, request: HttpRequest) -> str:
        """After signing in, when no same-site ``next`` was given."""
        return resolve_url(settings.LOGIN_REDIRECT_URL)

    def get_logout_redirect_url(self, request: HttpRequest) -> str:
        """After logging out: ``LOGOUT_REDIRECT_URL``, else the login page (a project
        need not have a page at ``/``)."""
        return resolve_url(settings.LOGOUT_REDIRECT_URL or settings.LOGIN_URL)

    def get_signup_redirect_url(self, request: HttpRequest) -> str:
        """After a sign-up that signed the new user in."""
        return self.get_login_redirect_url(request)

    # -- sign-up and new users ----------------------------------------------------------
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        """Whether the sign-up page and API take new accounts (``AUTH["SIGNUP"]``)."""
        return bool(app_settings.AUTH.SIGNUP)

    def new_user(self, request: HttpRequest | None) -> Any:
        """An unsaved user of ``AUTH_USER_MODEL``."""
        return get_user_model()()

    def populate_user(self, request: HttpRequest | None, user: Any, data: Mapping[str, Any]) -> Any:
        """Copy what a sign-up gave (``email``, the model's username field, ``name``) onto
        the unsaved ``user``; the password is set by :meth:`save_user`."""
        model = user._meta.model
        fields = {f.name for f in model._meta.get_fields()}
        email_field = model.get_email_field_name()
        if data.get("email"):
            setattr(user, email_field, data["email"])
        username_field = model.USERNAME_FIELD
        if data.get(username_field):
            setattr(user, username_field, data[username_field])
        if "name" in fields and data.get("name"):
            user.name = str(data["name"])[: model._meta.get_field("name").max_length or 150]
        return user

    def populate_sso_user(self, request: HttpRequest | None, user: Any, identity: Any) -> Any:
        """Fill a new account for someone an identity provider vouches for (an
        ``OAuthUser`` or a ``SamlUser``): its email as the login name and the address,
        its name when the model has a ``name`` column."""
        model = user._meta.model
        email = getattr(identity, "email", None)
        data: dict[str, Any] = {"email": email, model.USERNAME_FIELD: email}
        name = getattr(identity, "name", None)
        if name:
            data["name"] = name
        return self.populate_user(request, user, data)

    def save_user(
        self, request: HttpRequest | None, user: Any, password: str | None, *, commit: bool = True
    ) -> Any:
        """Set ``password`` (or an unusable one) and save."""
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        if commit:
            user.save()
        return user

    # -- mail ----------------------------------------------------------------------------
    def format_email_subject(self, subject: str) -> str:
        """The subject line: one line, as given (override to add a site prefix)."""
        return " ".join(subject.split())

    def render_mail(
        self, template_prefix: str, email: str, context: Mapping[str, Any]
    ) -> EmailMultiAlternatives:
        """The message from ``<prefix>_subject.txt``, ``<prefix>_message.txt`` and, when
        it exists, ``<prefix>_message.html`` (templates overridable by name)."""
        context = dict(context)
        subject = self.format_email_subject(
            render_to_string(f"{template_prefix}_subject.txt", context, self.request)
        )
        body = render_to_string(f"{template_prefix}_message.txt", context, self.request)
        message = EmailMultiAlternatives(subject, body, settings.DEFAULT_FROM_EMAIL, [email])
        try:
            html = render_to_string(f"{template_prefix}_message.html", context, self.request)
        except TemplateDoesNotExist:
            pass
        else:
            message.attach_alternative(html, "text/html")
        return message

    def send_mail(self, template_prefix: str, email: str, context: Mapping[str, Any]) -> None:
        """Render and send through Django's mail backend (``EMAIL_BACKEND``)."""
        self.render_mail(template_prefix, email, context).send()

    # -- the request ---------------------------------------------------------------------
    def get_client_ip(self, request: HttpRequest) -> str:
        """The client's address, as the throttles count it (``RATE_LIMIT`` settings)."""
        return client_ip(request)

    def add_message(
        self, request: HttpRequest, level: int, message: Any, *, extra_tags: str = ""
    ) -> None:
        """A ``django.contrib.messages`` message for the next page; nothing without the
        messages app (an API client, a project without it)."""
        from django.contrib import messages

        messages.add_message(request, level, message, extra_tags=extra_tags, fail_silently=True)


def get_adapter(request: HttpRequest | None = None) -> AccountAdapter:
    """An instance of ``AUTH["ADAPTER"]`` for ``request``."""
    adapter: AccountAdapter = app_settings.AUTH.ADAPTER(request)
    return adapter
