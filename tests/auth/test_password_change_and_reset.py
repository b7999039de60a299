"""Changing the password (a recent proof; this session stays, every other session and
API token ends) and resetting it through a mailed link (the token moved out of the
page's URL, the link good once; every session, token and trusted browser ends)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from appframework.auth import TokenManager
from appframework.auth.models import TrustedBrowser
from appframework.auth.password_flows import reset_token_generator
from appframework.auth.verification import email_verified, record_address
from tests.conftest import login_client

from .account_pages import HTML, URLCONF, age_proof, browser, post, signed_in
from .flows import (
    LOGIN,
    NEW_PASSWORD,
    PASSWORD_CHANGE,
    PASSWORD_RESET,
    PASSWORD_RESET_SENT,
    REAUTH,
    RESET_LINK,
    configure,
    link_in,
    names,
    sent,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure", "sent"]  # fixtures

INVALID_LINK = "This link is not valid any more: it was used, or it expired."
NEW = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}


def _password_works(user: Any, password: str) -> bool:
    user.refresh_from_db()
    return bool(user.check_password(password))


def _sign_in(user: Any, password: str) -> Client:
    client = browser()
    client.get(LOGIN)
    response = post(client, LOGIN, {"email": user.email, "password": password})
    assert response.status_code == 302, response.status_code
    return client


# -- change ----------------------------------------------------------------------------
@pytest.fixture
def signed(user: Any, configure: Callable[..., None]) -> Client:
    configure(SECURITY_NOTIFICATIONS=False)
    return login_client(browser(), user)


def _change(client: Client, data: dict[str, str]) -> Any:
    client.get(PASSWORD_CHANGE)
    return post(client, PASSWORD_CHANGE, data)


def test_a_change_without_a_recent_proof_goes_to_confirm_its_you(
    signed: Client, user: Any, password: str
) -> None:
    age_proof(signed)
    response = _change(signed, NEW)
    assert response.status_code == 302
    assert response["Location"] == f"{REAUTH}?next={PASSWORD_CHANGE}"
    assert _password_works(user, password)


@pytest.mark.parametrize(
    ("first", "second", "field", "message"),
    [
        ("password", "password", "new_password1", "This password is too common."),
        ("a1b2", "a1b2", "new_password1", "This password is too short."),
        ("alice-example", "alice-example", "new_password1", "too similar to the"),
        (NEW_PASSWORD, NEW_PASSWORD + "x", "new_password2", "The two passwords differ."),
    ],
)
def test_the_password_validators_and_the_repeat_apply(
    signed: Client, user: Any, password: str, first: str, second: str, field: str, message: str
) -> None:
    response = _change(signed, {"new_password1": first, "new_password2": second})
    assert response.status_code == 422
    page = response.content.decode()
    error = re.search(rf'id="id_{field}_error" role="alert">([^<]*)<', page)
    assert error and message in error.group(1), page
    assert first not in re.findall(r'value="([^"]*)"', page)
    assert _password_works(user, password)


def test_a_change_keeps_this_session_and_ends_every_other(
    user: Any, password: str, configure: Callable[..., None]
) -> None:
    configure(SECURITY_NOTIFICATIONS=False)
    other = _sign_in(user, password)
    this = _sign_in(user, password)
    response = _change(this, NEW)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(this)
    assert not signed_in(other)
    assert _password_works(user, NEW_PASSWORD)
    assert not _password_works(user, password)


def test_a_change_ends_the_api_tokens_issued_before(signed: Client, user: Any) -> None:
    manager = TokenManager()
    before = manager.issue(user)
    assert manager.verify_sync(before) == user
    _change(signed, NEW)
    user.refresh_from_db()
    assert manager.verify_sync(before) is None
    assert manager.verify_sync(manager.issue(user)) == user


def test_a_change_sends_password_changed(
    signed: Client, user: Any, sent: list[tuple[str, dict[str, Any]]], mailoutbox: list[Any]
) -> None:
    _change(signed, NEW)
    assert names(sent) == ["password_changed"]
    assert sent[0][1]["user"] == user
    assert mailoutbox == []


def test_with_security_notifications_a_change_is_mailed_to_the_owner(
    signed: Client, configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(SECURITY_NOTIFICATIONS=True)
    _change(signed, NEW)
    (message,) = mailoutbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "Your password was changed"
    assert "Your other sessions and API tokens have ended." in message.body
    assert NEW_PASSWORD not in message.body


def test_the_change_form_needs_the_csrf_token(signed: Client, user: Any, password: str) -> None:
    signed.get(PASSWORD_CHANGE)
    assert signed.post(PASSWORD_CHANGE, NEW, **HTML).status_code == 403
    assert _password_works(user, password)


# -- reset -----------------------------------------------------------------------------
_TOKEN = re.compile(r"\b[A-Za-z0-9]{64}\b")


def _ask(client: Client, email: str) -> Any:
    client.get(PASSWORD_RESET)
    return post(client, PASSWORD_RESET, {"email": email})


def _open(client: Client, link: str) -> tuple[Any, Any]:
    """Open the mailed link: the redirect, then the page it leads to."""
    first = client.get(link)
    return first, client.get(first["Location"]) if first.status_code == 302 else None


@pytest.fixture
def reset_link(user: Any, configure: Callable[..., None], mailoutbox: list[Any]) -> str:
    configure(SECURITY_NOTIFICATIONS=False)
    assert _ask(browser(), "Alice@Example.com")["Location"] == PASSWORD_RESET_SENT
    (message,) = mailoutbox
    assert message.to == [user.email]
    assert message.subject == "Reset your password"
    mailoutbox.clear()
    return link_in(message, RESET_LINK)


def test_the_answer_is_the_same_for_known_and_unknown_addresses(
    user: Any, mailoutbox: list[Any]
) -> None:
    answers = []
    for email in (user.email, "nobody@example.com"):
        client = browser()
        response = _ask(client, email)
        page = _TOKEN.sub("-", client.get(response["Location"]).content.decode())
        answers.append((response.status_code, response["Location"], set(response.cookies), page))
    assert answers[0] == answers[1]
    assert answers[0][:2] == (302, PASSWORD_RESET_SENT)
    assert [m.to for m in mailoutbox] == [[user.email]]


def test_an_inactive_account_is_mailed_nothing(user: Any, mailoutbox: list[Any]) -> None:
    user.is_active = False
    user.save()
    assert _ask(browser(), user.email)["Location"] == PASSWORD_RESET_SENT
    assert mailoutbox == []


def test_the_link_moves_its_token_into_the_session_before_the_form(reset_link: str) -> None:
    token = reset_link.rstrip("/").rsplit("/", 1)[1]
    client = browser()
    first, page = _open(client, reset_link)
    assert first.status_code == 302
    uid = reset_link.split("/")[-3]
    assert first["Location"] == f"/accounts/password/reset/{uid}/set-password/"
    assert token not in first["Location"]
    assert page.status_code == 200
    text = page.content.decode()
    assert 'name="new_password1"' in text
    assert token not in text


def test_setting_the_password_ends_every_session_and_token(
    user: Any,
    password: str,
    configure: Callable[..., None],
    mailoutbox: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    configure(SECURITY_NOTIFICATIONS=False)
    signed_before = _sign_in(user, password)
    token = TokenManager().issue(user)
    # The browser that asks is signed in too (a sign-in after the mail would end the
    # link, as Django's: the token covers the last login).
    client = login_client(browser(), user)
    _ask(client, user.email)
    reset_link = link_in(mailoutbox[0], RESET_LINK)
    _open(client, reset_link)
    response = post(client, _set_password_path(reset_link), NEW)
    assert response.status_code == 302
    assert response["Location"] == LOGIN
    assert not signed_in(client)
    assert not signed_in(signed_before)
    assert TokenManager().verify_sync(token) is None
    assert _password_works(user, NEW_PASSWORD)
    assert names(sent) == ["password_reset"]
    assert _sign_in(user, NEW_PASSWORD)


def _set_password_path(link: str) -> str:
    return f"/accounts/password/reset/{link.split('/')[-3]}/set-password/"


def test_the_link_works_once(reset_link: str, user: Any) -> None:
    client = browser()
    _open(client, reset_link)
    kept = Client(enforce_csrf_checks=True)
    for name, morsel in client.cookies.items():
        kept.cookies[name] = morsel.value
    assert post(client, _set_password_path(reset_link), NEW).status_code == 302
    # The link again, in any browser.
    again = browser()
    _first, page = _open(again, reset_link)
    assert page.status_code == 400
    assert INVALID_LINK in page.content.decode()
    assert post(again, _set_password_path(reset_link), NEW).status_code == 400
    # A copy of the cookie that held the token before it was used.
    response = post(
        kept,
        _set_password_path(reset_link),
        {"new_password1": "Another-Quiet-Harbour-8", "new_password2": "Another-Quiet-Harbour-8"},
    )
    assert response.status_code == 400
    assert _password_works(user, NEW_PASSWORD)


def test_a_reset_forgets_the_trusted_browsers_and_mails_the_owner(
    reset_link: str, user: Any, configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(SECURITY_NOTIFICATIONS=True)
    TrustedBrowser.objects.create(
        user=user, key_hash="a" * 64, expires_at=timezone.now() + timedelta(days=1)
    )
    client = browser()
    _open(client, reset_link)
    assert post(client, _set_password_path(reset_link), NEW).status_code == 302
    assert not TrustedBrowser.objects.filter(user=user).exists()
    (message,) = mailoutbox
    assert message.to == [user.email]
    assert message.subject == "Your password was reset"


def test_the_validators_apply_to_the_new_password(
    reset_link: str, user: Any, password: str
) -> None:
    client = browser()
    _open(client, reset_link)
    response = post(
        client,
        _set_password_path(reset_link),
        {"new_password1": "12345678", "new_password2": "12345678"},
    )
    assert response.status_code == 422
    assert "This password is entirely numeric." in response.content.decode()
    assert _password_works(user, password)
    # The form again, the link still good.
    assert post(client, _set_password_path(reset_link), NEW).status_code == 302


def test_the_address_a_reset_link_reached_counts_as_confirmed(
    reset_link: str, user: Any, configure: Callable[..., None]
) -> None:
    configure(EMAIL_VERIFICATION="mandatory")
    record_address(user, user.email, verified=False, primary=True)
    assert not email_verified(user)
    client = browser()
    _open(client, reset_link)
    post(client, _set_password_path(reset_link), NEW)
    assert email_verified(user)
    signed = browser()
    signed.get(LOGIN)
    response = post(signed, LOGIN, {"email": user.email, "password": NEW_PASSWORD})
    assert response["Location"] == settings.LOGIN_REDIRECT_URL


def _uid(value: str | bytes) -> str:
    return urlsafe_base64_encode(force_bytes(value))


def _bad_links(user: Any, other: Any) -> dict[str, str]:
    token = reset_token_generator.make_token(user)
    uid = _uid(user.pk)
    flipped = token[:-1] + ("a" if token[-1] != "a" else "b")
    not_utf8 = urlsafe_base64_encode(bytes([0xFF, 0xFE]))
    return {
        "flipped token": f"{uid}/{flipped}",
        "short token": f"{uid}/{token[:5]}",
        "token of another user": f"{_uid(other.pk)}/{token}",
        "junk uid": f"!!!/{token}",
        "uid not base64": f"%%%/{token}",
        "uid of text": f"{_uid('abc')}/{token}",
        "uid of a huge number": f"{_uid('9' * 40)}/{token}",
        "uid of a negative number": f"{_uid('-1')}/{token}",
        "uid of non-UTF-8": f"{not_utf8}/{token}",
        "uid with NUL": f"{_uid('1' + chr(0))}/{token}",
        "percent-encoded NUL": f"%00/{token}%00",
        "non-UTF-8 percent-encoding": f"%ff%fe/{token}%c3%28",
        "token like the path": f"{uid}/password",
        "token like the uid": f"{uid}/{uid}",
        "very long": f"{'M' * 5000}/{'x' * 5000}",
    }


@pytest.mark.parametrize(
    "case",
    [
        "flipped token",
        "short token",
        "token of another user",
        "junk uid",
        "uid not base64",
        "uid of text",
        "uid of a huge number",
        "uid of a negative number",
        "uid of non-UTF-8",
        "uid with NUL",
        "percent-encoded NUL",
        "non-UTF-8 percent-encoding",
        "token like the path",
        "token like the uid",
        "very long",
    ],
)
def test_an_altered_link_is_refused_without_an_error(
    user: Any, other_user: Any, password: str, case: str
) -> None:
    path = f"/accounts/password/reset/{_bad_links(user, other_user)[case]}/"
    client = browser()
    first = client.get(path)
    assert first.status_code == 302
    assert first["Location"].endswith("/set-password/")
    page = client.get(first["Location"])
    assert page.status_code == 400
    assert INVALID_LINK in page.content.decode()
    response = post(client, first["Location"], NEW)
    assert response.status_code == 400
    assert _password_works(user, password)
    assert _password_works(other_user, password)
