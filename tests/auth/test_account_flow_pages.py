"""Every page the account flows added, as a hostile or careless client meets it: a POST
without the CSRF token is refused (403) and does nothing, junk input (very long
strings, NUL bytes, non-UTF-8 percent-encoding, huge codes) is never a 500, and no page
or mail makes Django's template engine log a failed variable lookup (it logs the whole
context with it)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.utils import timezone
from django.utils.http import urlsafe_base64_encode

from appframework.auth.models import TrustedBrowser
from appframework.auth.password_flows import reset_token_generator
from appframework.auth.verification import confirmation_key, record_address
from testproject.blog.models import User
from tests.conftest import enable_totp, login_client

from .account_pages import COOKIE, HTML, URLCONF, browser, post
from .flows import (
    CHALLENGE,
    EMAIL,
    EMAIL_CHANGE,
    EMAIL_RESEND,
    GOOD_PASSWORD,
    LOGIN,
    LOGIN_CODE,
    LOGIN_CODE_CONFIRM,
    PASSWORD_CHANGE,
    PASSWORD_RESET,
    PASSWORD_RESET_SENT,
    RESET_LINK,
    SENT,
    SETUP,
    SIGNUP,
    code_in,
    configure,
    failed_lookups,
    link_in,
    sign_up,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure", "failed_lookups"]  # fixtures


@dataclass
class Page:
    """A page in the state where its POST would act: the client, its path, a valid
    POST body, and the text fields junk goes into."""

    client: Client
    path: str
    data: dict[str, str] = field(default_factory=dict)
    fields: tuple[str, ...] = ()


def _settings(configure: Callable[..., None]) -> None:
    configure(
        EMAIL_VERIFICATION="mandatory",
        EMAIL_VERIFICATION_BY_CODE=True,
        LOGIN_BY_CODE=True,
        SECURITY_NOTIFICATIONS=True,
        mfa={"TRUST_BROWSER": True},
    )


def _signup(user: Any) -> Page:
    return Page(
        browser(),
        SIGNUP,
        {"email": "new@example.com", "password": GOOD_PASSWORD},
        ("email", "password"),
    )


def _code_sent(user: Any) -> Page:
    client = browser()
    sign_up(client, "new@example.com")
    return Page(client, SENT, {"code": "ABCDEF"}, ("code",))


def _confirm_link(user: Any) -> Page:
    record_address(user, user.email, verified=False, primary=True)
    return Page(browser(), f"/accounts/email/confirm/{confirmation_key(user, user.email)}/")


def _email_change(user: Any) -> Page:
    return Page(
        login_client(browser(), user), EMAIL_CHANGE, {"email": "alice.new@example.com"}, ("email",)
    )


def _resend(user: Any) -> Page:
    record_address(user, user.email, verified=False, primary=True)
    return Page(login_client(browser(), user), EMAIL_RESEND)


def _password_change(user: Any) -> Page:
    new = "Quartz-lantern-Oboe-4711"
    return Page(
        login_client(browser(), user),
        PASSWORD_CHANGE,
        {"new_password1": new, "new_password2": new},
        ("new_password1", "new_password2"),
    )


def _password_reset(user: Any) -> Page:
    return Page(browser(), PASSWORD_RESET, {"email": user.email}, ("email",))


def _set_password(user: Any) -> Page:
    client = browser()
    uidb64 = urlsafe_base64_encode(str(user.pk).encode())
    first = client.get(
        f"/accounts/password/reset/{uidb64}/{reset_token_generator.make_token(user)}/"
    )
    new = "Quartz-lantern-Oboe-4711"
    return Page(
        client,
        first["Location"],
        {"new_password1": new, "new_password2": new},
        ("new_password1", "new_password2"),
    )


def _login_code(user: Any) -> Page:
    return Page(browser(), LOGIN_CODE, {"email": user.email}, ("email",))


def _login_code_confirm(user: Any) -> Page:
    client = browser()
    client.get(LOGIN_CODE)
    post(client, LOGIN_CODE, {"email": user.email})
    return Page(client, LOGIN_CODE_CONFIRM, {"code": "ABCDEF"}, ("code",))


def _forget(user: Any) -> Page:
    row = TrustedBrowser.objects.create(
        user=user, key_hash="b" * 64, expires_at=timezone.now() + timedelta(days=1)
    )
    return Page(login_client(browser(), user), f"/accounts/trusted-browsers/{row.pk}/forget/")


def _challenge(user: Any) -> Page:
    enable_totp(user)
    client = browser()
    client.get(LOGIN)
    post(client, LOGIN, {"email": user.email, "password": "correct horse battery staple"})
    return Page(client, CHALLENGE, {"code": "000000", "trust": "on"}, ("code",))


PAGES: dict[str, Callable[[Any], Page]] = {
    "signup": _signup,
    "code sent": _code_sent,
    "confirm link": _confirm_link,
    "email change": _email_change,
    "resend": _resend,
    "password change": _password_change,
    "password reset": _password_reset,
    "set password": _set_password,
    "login code": _login_code,
    "login code confirm": _login_code_confirm,
    "forget trusted browser": _forget,
    "challenge with trust": _challenge,
}

SIGNED_IN = ("email change", "resend", "password change", "forget trusted browser")


def _state(user: Any) -> tuple[Any, ...]:
    user.refresh_from_db()
    return (
        User.objects.count(),
        user.email,
        user.password_hash,
        user.session_version,
        TrustedBrowser.objects.count(),
        list(user.email_addresses.values_list("email", "verified")),
    )


@pytest.mark.parametrize("name", list(PAGES))
def test_a_post_without_the_csrf_token_is_403_and_does_nothing(
    configure: Callable[..., None], user: Any, mailoutbox: list[Any], name: str
) -> None:
    _settings(configure)
    page = PAGES[name](user)
    page.client.get(LOGIN)  # the browser holds a CSRF cookie; the form's token is missing
    mailoutbox.clear()
    before = _state(user)
    assert page.client.post(page.path, page.data, **HTML).status_code == 403
    # An Authorization header: the public pages (which sign in or mail) still check the
    # token; the signed-in ones ignore the session then, so nobody is signed in.
    response = page.client.post(page.path, page.data, HTTP_AUTHORIZATION="Basic x", **HTML)
    if name in SIGNED_IN:
        assert response.status_code == 302
        assert response["Location"].startswith(f"{LOGIN}?next=")
    else:
        assert response.status_code == 403
    assert _state(user) == before
    assert mailoutbox == []


def _junk_values() -> list[str]:
    return [
        "x" * 100_000,
        "\x00",
        "a\x00b@example.com",
        "9" * 5000,
        "é" * 300,
        "<script>alert(1)</script>",
        " ",
    ]


@pytest.mark.parametrize(
    "name", [n for n in PAGES if n not in ("confirm link", "resend", "forget trusted browser")]
)
def test_junk_in_the_fields_is_never_a_500(
    configure: Callable[..., None], user: Any, name: str
) -> None:
    _settings(configure)
    page = PAGES[name](user)
    page.client.raise_request_exception = False
    for value in _junk_values():
        data = {**page.data, **dict.fromkeys(page.fields, value)}
        response = post(page.client, page.path, data)
        assert response.status_code < 500, (value[:20], response.status_code)
        assert "<script>alert(1)</script>" not in response.content.decode(errors="replace")


@pytest.mark.parametrize("name", [n for n in PAGES if PAGES[n] is not _confirm_link])
def test_non_utf8_percent_encoding_in_the_body_is_never_a_500(
    configure: Callable[..., None], user: Any, name: str
) -> None:
    _settings(configure)
    page = PAGES[name](user)
    page.client.raise_request_exception = False
    page.client.get(LOGIN)
    token = page.client.cookies[COOKIE].value
    fields = "&".join(f"{f}=%ff%fe%00%c3%28" for f in page.fields)
    body = f"_token={token}&{fields}".encode()
    response = page.client.post(
        page.path, body, content_type="application/x-www-form-urlencoded", **HTML
    )
    assert response.status_code < 500


@pytest.mark.parametrize(
    "key",
    ["%00", "%ff%fe", "x" * 10_000, "a:b:c", "...:...:...", "eyJ1IjoiMSJ9:1:%c3%28", "%2e%2e"],
)
def test_a_junk_confirmation_key_is_a_422_page_not_an_error(
    configure: Callable[..., None], user: Any, key: str
) -> None:
    _settings(configure)
    client = browser()
    client.raise_request_exception = False
    path = f"/accounts/email/confirm/{key}/"
    assert client.get(path).status_code == 422
    assert post(client, path).status_code == 422


@pytest.mark.parametrize("name", ["signup", "password change", "set password"])
def test_an_overlong_new_password_is_a_field_error_not_a_500(
    configure: Callable[..., None], user: Any, name: str
) -> None:
    _settings(configure)
    page = PAGES[name](user)
    long = "é" * 2049  # 4098 bytes in UTF-8: more than the hasher takes
    data = {**page.data, **{f: long for f in page.fields if "password" in f}}
    response = post(page.client, page.path, data)
    assert response.status_code == 422
    assert "This password is too long (at most 4096 bytes)." in response.content.decode()
    user.refresh_from_db()
    assert user.check_password("correct horse battery staple")
    assert not User.objects.filter(email="new@example.com").exists()


# -- template lookups ----------------------------------------------------------------
@pytest.fixture
def library_templates() -> Iterator[None]:
    """The library's own templates (the demo's project folder overrides the layout and
    the login page with its own context)."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = []
    with override_settings(TEMPLATES=templates):
        yield


def _visit(user: Any, mailoutbox: list[Any]) -> list[tuple[str, int]]:
    """Every page of the flows, shown and posted right and wrong; the mails they send."""
    seen: list[tuple[str, int]] = []

    def get(client: Client, path: str) -> Any:
        response = client.get(path)
        seen.append((f"GET {path}", response.status_code))
        return response

    def send(client: Client, path: str, data: dict[str, str] | None = None) -> Any:
        response = post(client, path, data)
        seen.append((f"POST {path}", response.status_code))
        return response

    # Sign-up: the page, a refusal, a sign-up, the code page (wrong, then right).
    client = browser()
    get(client, SIGNUP)
    send(client, SIGNUP, {"email": "bad", "password": "x"})
    send(client, SIGNUP, {"email": "new@example.com", "password": GOOD_PASSWORD})
    get(client, SENT)
    send(client, SENT, {"code": "ABCDEF"})
    send(client, SENT, {"code": code_in(mailoutbox[-1])})
    get(client, EMAIL)
    # A taken address (the owner's notice).
    send(browser(), SIGNUP, {"email": user.email, "password": GOOD_PASSWORD})
    # The link: valid, then spent.
    record_address(user, user.email, verified=False, primary=True)
    link = f"/accounts/email/confirm/{confirmation_key(user, user.email)}/"
    other = browser()
    get(other, link)
    send(other, link)
    get(other, link)
    send(other, link)
    get(other, SENT)
    # Signed in: the address page, an email change (its mail and notice), the resend,
    # the password change (a refusal, then right).
    signed = login_client(browser(), user)
    get(signed, EMAIL)
    get(signed, EMAIL_CHANGE)
    send(signed, EMAIL_CHANGE, {"email": "not an address"})
    send(signed, EMAIL_CHANGE, {"email": "alice.new@example.com"})
    send(signed, SENT, {"code": code_in(mailoutbox[-1])})
    get(signed, EMAIL)
    get(signed, PASSWORD_CHANGE)
    send(signed, PASSWORD_CHANGE, {"new_password1": "short", "new_password2": "short"})
    send(
        signed,
        PASSWORD_CHANGE,
        {"new_password1": "Quartz-lantern-Oboe-4711", "new_password2": "Quartz-lantern-Oboe-4711"},
    )
    # Reset: ask, the link, the form (wrong, right), the link again.
    anonymous = browser()
    get(anonymous, PASSWORD_RESET)
    send(anonymous, PASSWORD_RESET, {"email": ""})
    send(anonymous, PASSWORD_RESET, {"email": "alice.new@example.com"})
    get(anonymous, PASSWORD_RESET_SENT)
    reset = link_in(mailoutbox[-1], RESET_LINK)
    form = get(anonymous, reset)["Location"]
    get(anonymous, form)
    send(anonymous, form, {"new_password1": "a", "new_password2": "b"})
    send(anonymous, form, {"new_password1": GOOD_PASSWORD, "new_password2": GOOD_PASSWORD})
    get(anonymous, get(anonymous, reset)["Location"])
    # Sign-in by code: ask, the code page (wrong, then right).
    coded = browser()
    get(coded, LOGIN_CODE)
    send(coded, LOGIN_CODE, {"email": "nope"})
    send(coded, LOGIN_CODE, {"email": "alice.new@example.com"})
    get(coded, LOGIN_CODE_CONFIRM)
    send(coded, LOGIN_CODE_CONFIRM, {"code": "ABCDEF"})
    send(coded, LOGIN_CODE_CONFIRM, {"code": code_in(mailoutbox[-1])})
    return seen


@pytest.mark.usefixtures("library_templates")
def test_no_page_or_mail_of_the_flows_fails_a_template_lookup(
    configure: Callable[..., None],
    user: Any,
    mailoutbox: list[Any],
    failed_lookups: Callable[[], list[str]],
) -> None:
    _settings(configure)
    seen = _visit(user, mailoutbox)
    assert all(status < 500 for _path, status in seen), seen
    assert len(mailoutbox) >= 8
    assert failed_lookups() == []


@pytest.mark.usefixtures("library_templates")
def test_the_closed_signup_page_fails_no_template_lookup(
    configure: Callable[..., None], failed_lookups: Callable[[], list[str]]
) -> None:
    configure(SIGNUP=False)
    assert browser().get(SIGNUP).status_code == 403
    assert failed_lookups() == []


@pytest.mark.usefixtures("library_templates")
def test_the_trusted_browsers_pages_fail_no_template_lookup(
    configure: Callable[..., None],
    user: Any,
    failed_lookups: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _settings(configure)
    page = _challenge(user)
    assert page.client.get(CHALLENGE).status_code == 200
    assert post(page.client, CHALLENGE, {"code": "000000"}).status_code == 401
    forget = _forget(user)
    assert forget.client.get(SETUP).status_code == 200
    assert post(forget.client, forget.path).status_code == 302
    assert forget.client.get(SETUP).status_code == 200
    assert failed_lookups() == []
