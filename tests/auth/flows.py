"""Helpers of the account-flow tests (sign-up, addresses, passwords, sign-in by code,
trusted browsers): settings over a deep copy of ``settings.APPFRAMEWORK``, the mails'
links and codes, the signals a flow sent, and the template lookups Django logs."""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from django.conf import settings
from django.core.mail import EmailMessage
from django.test import Client, override_settings

from appframework import events

from .account_pages import browser, post

SIGNUP = "/accounts/signup/"
SENT = "/accounts/signup/sent/"
EMAIL = "/accounts/email/"
EMAIL_CHANGE = "/accounts/email/change/"
EMAIL_RESEND = "/accounts/email/resend/"
PASSWORD_CHANGE = "/accounts/password/change/"
PASSWORD_RESET = "/accounts/password/reset/"
PASSWORD_RESET_SENT = "/accounts/password/reset/sent/"
LOGIN = "/accounts/login/"
CHALLENGE = "/accounts/login/code/"
LOGIN_CODE = "/accounts/login/email/"
LOGIN_CODE_CONFIRM = "/accounts/login/email/code/"
REAUTH = "/accounts/reauthenticate/"
LOGOUT = "/accounts/logout/"
SETUP = "/accounts/two-factor/"

#: A password every validator of the test settings accepts.
GOOD_PASSWORD = "Velvet-orbit-Marmalade-93"
NEW_PASSWORD = "Quartz-lantern-Oboe-4711"

CONFIRM_LINK = re.compile(r"http://testserver(/accounts/email/confirm/[^/\s]+/)")
RESET_LINK = re.compile(r"http://testserver(/accounts/password/reset/[^/\s]+/[^/\s]+/)")
MAIL_CODE = re.compile(r"^ {4}([A-Z2-9]{6})$", re.MULTILINE)

SIGNALS = (
    "user_registered",
    "email_confirmed",
    "email_changed",
    "password_changed",
    "password_reset",
)


def appframework_settings(
    *, auth: dict[str, Any] | None = None, mfa: dict[str, Any] | None = None
) -> Any:
    """``override_settings`` of a deep copy of the current ``APPFRAMEWORK`` with the
    ``AUTH`` and ``MFA`` keys given."""
    app = copy.deepcopy(settings.APPFRAMEWORK)
    for section, values in (("AUTH", auth), ("MFA", mfa)):
        if values:
            app.setdefault(section, {}).update(values)
    return override_settings(APPFRAMEWORK=app)


@pytest.fixture
def configure() -> Iterator[Callable[..., None]]:
    """``configure(EMAIL_VERIFICATION="none", mfa={...})``: AUTH keys (and MFA ones)
    for the rest of the test; later calls apply over earlier ones."""
    with ExitStack() as stack:

        def apply(*, mfa: dict[str, Any] | None = None, **auth: Any) -> None:
            stack.enter_context(appframework_settings(auth=auth, mfa=mfa))

        yield apply


@pytest.fixture
def sent() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The account signals sent during the test, in order: ``(name, kwargs)``."""
    received: list[tuple[str, dict[str, Any]]] = []
    receivers = []
    for name in SIGNALS:
        signal = getattr(events, name)

        def receiver(sender: Any, _name: str = name, **kwargs: Any) -> None:
            received.append((_name, kwargs))

        signal.connect(receiver, weak=False, dispatch_uid=f"tests.flows.{name}")
        receivers.append((signal, name))
    yield received
    for signal, name in receivers:
        signal.disconnect(dispatch_uid=f"tests.flows.{name}")


def names(received: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [name for name, _kwargs in received]


@pytest.fixture
def failed_lookups(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """``failed_lookups()``: the variable lookups Django's template engine failed so
    far (it logs each at DEBUG on ``django.template``, the whole context in the
    exception): a page must render without any."""
    caplog.set_level(logging.DEBUG, logger="django.template")

    def read() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name == "django.template"
            and "Exception while resolving variable" in r.getMessage()
        ]

    return read


def link_in(message: EmailMessage, pattern: re.Pattern[str] = CONFIRM_LINK) -> str:
    """The path of the link in ``message``."""
    match = pattern.search(str(message.body))
    assert match, message.body
    return match.group(1)


def code_in(message: EmailMessage) -> str:
    match = MAIL_CODE.search(str(message.body))
    assert match, message.body
    return match.group(1)


def sign_up(client: Client, email: str, password: str = GOOD_PASSWORD, **extra: Any) -> Any:
    """Open the sign-up page (which gives the CSRF cookie), then post it."""
    page = client.get(SIGNUP)
    assert page.status_code == 200, page.status_code
    return post(client, SIGNUP, {"email": email, "password": password, **extra})


def signed_in_user(client: Client) -> Any:
    """The user the client's session signs in (None when anonymous)."""
    response = client.get("/private/")
    if response.status_code != 200:
        return None
    from testproject.blog.models import User

    email = response.content.decode().removeprefix("private page of ")
    return User.objects.get(email=email)


def copy_cookies(source: Client) -> Client:
    """Another client holding a copy of ``source``'s cookies (as they are now)."""
    clone = browser()
    for name, morsel in source.cookies.items():
        clone.cookies[name] = morsel.value
    return clone
