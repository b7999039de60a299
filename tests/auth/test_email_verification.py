"""Confirming an address (appframework.auth.verification): the signed link (shown by a
GET, confirmed by the button's POST, once, until it expires, never when altered) and
the code (in the browser that asked, three tries, once), and who is signed in after."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.core import signing
from django.test import Client

from appframework.auth import mail_codes
from appframework.auth.models import EmailAddress
from appframework.auth.verification import LINK_SALT, confirmation_key, email_verified
from testproject.blog.models import User

from .account_pages import HTML, URLCONF, browser, post, signed_in
from .flows import (
    EMAIL,
    EMAIL_RESEND,
    LOGIN,
    SENT,
    code_in,
    configure,
    copy_cookies,
    link_in,
    names,
    sent,
    sign_up,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure", "sent"]  # fixtures

NEW = "newcomer@example.com"
INVALID = "This confirmation link is not valid or has expired. Ask for a new one."
BAD_CODE = "That code is not valid or has expired."


def _verified(email: str = NEW) -> bool:
    return email_verified(User.objects.get(email=email))


def _wrong(code: str) -> str:
    """A well-formed code that is not ``code``."""
    return "ABCDEF" if code != "ABCDEF" else "GHJKMN"


@pytest.fixture
def by_link(configure: Callable[..., None], mailoutbox: list[Any]) -> tuple[Client, str]:
    """Signed up under mandatory verification: the browser and the mailed link."""
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=False)
    client = browser()
    assert sign_up(client, NEW)["Location"] == SENT
    return client, link_in(mailoutbox[-1])


@pytest.fixture
def by_code(configure: Callable[..., None], mailoutbox: list[Any]) -> tuple[Client, str]:
    """Signed up under mandatory verification by code: the browser and the code."""
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=True)
    client = browser()
    assert sign_up(client, NEW)["Location"] == SENT
    return client, code_in(mailoutbox[-1])


# -- the link --------------------------------------------------------------------------
def test_opening_the_link_shows_the_address_and_a_button_and_confirms_nothing(
    by_link: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    client, link = by_link
    for _ in range(2):  # a mail scanner, then the person
        page = client.get(link)
        assert page.status_code == 200
        text = page.content.decode()
        assert f"Confirm that <strong>{NEW}</strong> is your address." in text
        assert '<form method="post"' in text
    assert not _verified()
    assert not signed_in(client)
    assert sent == []


def test_the_button_confirms_and_signs_in_the_browser_that_signed_up(
    by_link: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    client, link = by_link
    client.get(link)
    response = post(client, link)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)
    assert _verified()
    user = User.objects.get(email=NEW)
    assert names(sent) == ["email_confirmed"]
    assert sent[0][1]["user"] == user and sent[0][1]["email"] == NEW
    row = EmailAddress.objects.get(user=user)
    assert (row.email, row.verified, row.primary) == (NEW, True, True)


def test_the_button_in_another_browser_confirms_but_signs_nobody_in(
    by_link: tuple[Client, str],
) -> None:
    _client, link = by_link
    other = browser()
    other.get(link)
    response = post(other, link)
    assert response.status_code == 302
    assert response["Location"] == LOGIN
    assert not signed_in(other)
    assert _verified()


def test_a_link_confirms_once(
    by_link: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    client, link = by_link
    client.get(link)
    assert post(client, link).status_code == 302
    again = browser()
    assert again.get(link).status_code == 422
    response = post(again, link)
    assert response.status_code == 422
    assert INVALID in response.content.decode()
    assert names(sent) == ["email_confirmed"]


def _key_signed_at(user: Any, at: float, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(signing, "time", SimpleNamespace(time=lambda: at))
        return confirmation_key(user, user.email)


@pytest.mark.parametrize(("age", "works"), [(3 * 86400 + 120, False), (3 * 86400 - 120, True)])
def test_a_link_expires_after_email_verification_link_ttl(
    by_link: tuple[Client, str],
    configure: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    age: int,
    works: bool,
) -> None:
    configure(EMAIL_VERIFICATION_LINK_TTL=3 * 86400)
    user = User.objects.get(email=NEW)
    path = f"/accounts/email/confirm/{_key_signed_at(user, time.time() - age, monkeypatch)}/"
    client = browser()
    assert client.get(path).status_code == (200 if works else 422)
    response = post(client, path)
    assert response.status_code == (302 if works else 422)
    assert _verified() is works
    if not works:
        assert INVALID in response.content.decode()


def test_a_shorter_ttl_ends_links_already_sent(
    by_link: tuple[Client, str], configure: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    user = User.objects.get(email=NEW)
    path = f"/accounts/email/confirm/{_key_signed_at(user, time.time() - 600, monkeypatch)}/"
    configure(EMAIL_VERIFICATION_LINK_TTL=300)
    assert post(browser(), path).status_code == 422
    assert not _verified()


def _altered(link: str, how: str) -> str:
    key = link.removeprefix("/accounts/email/confirm/").removesuffix("/")
    payload, stamp, signature = key.split(":")
    if how == "signature":
        flipped = "A" if signature[-1] != "A" else "B"
        return f"{payload}:{stamp}:{signature[:-1]}{flipped}"
    if how == "payload":
        other = signing.dumps({"u": "1", "e": "mallory@example.com"}, salt=LINK_SALT)
        return f"{other.split(':')[0]}:{stamp}:{signature}"
    if how == "salt":
        return signing.dumps({"u": "1", "e": NEW})
    if how == "truncated":
        return key[:-5]
    return "not-a-key"


@pytest.mark.parametrize("how", ["signature", "payload", "salt", "truncated", "junk"])
def test_an_altered_or_forged_key_is_refused(
    by_link: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]], how: str
) -> None:
    client, link = by_link
    path = f"/accounts/email/confirm/{_altered(link, how)}/"
    page = client.get(path)
    assert page.status_code == 422
    assert INVALID in page.content.decode()
    assert post(client, path).status_code == 422
    assert not _verified()
    assert not signed_in(client)
    assert sent == []


def test_a_link_for_an_address_the_account_does_not_have_is_refused(
    by_link: tuple[Client, str], user: Any
) -> None:
    """A key signed for a real user, but an address never asked for (no row)."""
    forged = confirmation_key(user, "elsewhere@example.com")
    assert post(browser(), f"/accounts/email/confirm/{forged}/").status_code == 422
    assert not EmailAddress.objects.filter(email="elsewhere@example.com").exists()


def test_a_link_of_a_deactivated_account_is_refused(by_link: tuple[Client, str]) -> None:
    _client, link = by_link
    User.objects.filter(email=NEW).update(is_active=False)
    assert post(browser(), link).status_code == 422
    assert not _verified()


def test_the_confirm_button_needs_the_csrf_token(by_link: tuple[Client, str]) -> None:
    client, link = by_link
    client.get(link)
    assert client.post(link, **HTML).status_code == 403
    assert not _verified()


# -- the code --------------------------------------------------------------------------
def test_the_code_confirms_and_signs_in_the_browser_that_signed_up(
    by_code: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    client, code = by_code
    response = post(client, SENT, {"code": code})
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)
    assert _verified()
    assert names(sent) == ["email_confirmed"]


def test_the_code_may_be_typed_in_lower_case_with_spaces(by_code: tuple[Client, str]) -> None:
    client, code = by_code
    typed = f" {code[:3].lower()} {code[3:].lower()} "
    assert post(client, SENT, {"code": typed})["Location"] == settings.LOGIN_REDIRECT_URL
    assert _verified()


def test_the_code_does_nothing_in_another_browser(by_code: tuple[Client, str]) -> None:
    client, code = by_code
    other = browser()
    response = post(other, SENT, {"code": code})
    assert response.status_code == 422
    assert BAD_CODE in response.content.decode()
    assert not _verified()
    assert not signed_in(other)
    # Still good where it was asked for.
    assert post(client, SENT, {"code": code}).status_code == 302
    assert _verified()


def test_another_browsers_code_does_not_confirm_its_own_sign_up(
    by_code: tuple[Client, str], mailoutbox: list[Any]
) -> None:
    _client, code = by_code
    other = browser()
    sign_up(other, "second@example.com")
    assert post(other, SENT, {"code": code}).status_code == 422
    assert not _verified() and not _verified("second@example.com")


def test_three_wrong_codes_drop_it(by_code: tuple[Client, str]) -> None:
    client, code = by_code
    for _ in range(3):
        response = post(client, SENT, {"code": _wrong(code)})
        assert response.status_code == 422
        assert BAD_CODE in response.content.decode()
    response = post(client, SENT, {"code": code})
    assert response.status_code == 422
    assert not _verified()
    assert not signed_in(client)
    # The page no longer asks for it.
    assert 'name="code"' not in client.get(SENT).content.decode()


def test_two_wrong_codes_leave_the_third_try(by_code: tuple[Client, str]) -> None:
    client, code = by_code
    for _ in range(2):
        assert post(client, SENT, {"code": _wrong(code)}).status_code == 422
    assert post(client, SENT, {"code": code}).status_code == 302
    assert _verified()


def test_wrong_codes_sent_with_copies_of_one_cookie_still_count_three(
    by_code: tuple[Client, str],
) -> None:
    """Sessions live in the cookie: a guesser who replays the cookie from before the
    first wrong try gets no fresh tries."""
    client, code = by_code
    for _ in range(3):
        assert post(copy_cookies(client), SENT, {"code": _wrong(code)}).status_code == 422
    assert post(client, SENT, {"code": code}).status_code == 422
    assert not _verified()


def test_a_spent_code_replayed_with_an_old_copy_of_the_cookie_is_refused(
    by_code: tuple[Client, str], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    client, code = by_code
    copy = copy_cookies(client)
    assert post(client, SENT, {"code": code}).status_code == 302
    response = post(copy, SENT, {"code": code})
    assert response.status_code == 422
    assert not signed_in(copy)
    assert names(sent) == ["email_confirmed"]


def test_a_code_expires_after_email_code_ttl(
    by_code: tuple[Client, str], configure: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, code = by_code
    later = time.time() + 15 * 60 + 5
    monkeypatch.setattr(mail_codes, "time", SimpleNamespace(time=lambda: later))
    assert post(client, SENT, {"code": code}).status_code == 422
    assert not _verified()


@pytest.mark.parametrize("typed", ["", "A" * 65, "12\x0034", "ü" * 6])
def test_odd_codes_are_refused_without_an_error(by_code: tuple[Client, str], typed: str) -> None:
    client, _code = by_code
    assert post(client, SENT, {"code": typed}).status_code == 422
    assert not _verified()


# -- sending it again ------------------------------------------------------------------
def test_a_signed_in_user_with_an_unconfirmed_address_can_have_it_sent_again(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="optional", EMAIL_VERIFICATION_BY_CODE=False)
    client = browser()
    sign_up(client, NEW)
    page = client.get(EMAIL).content.decode()
    assert "Not confirmed" in page and f'action="{EMAIL_RESEND}"' in page
    response = post(client, EMAIL_RESEND)
    assert response.status_code == 302
    assert response["Location"] == SENT
    assert len(mailoutbox) == 2 and mailoutbox[1].to == [NEW]
    link = link_in(mailoutbox[1])
    client.get(link)
    assert post(client, link)["Location"] == settings.LOGIN_REDIRECT_URL
    assert "Confirmed" in client.get(EMAIL).content.decode()
    # Confirmed: nothing more is sent.
    assert post(client, EMAIL_RESEND)["Location"] == EMAIL
    assert len(mailoutbox) == 2


def test_resending_needs_a_session_and_the_csrf_token(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="optional")
    client = browser()
    sign_up(client, NEW)
    mailoutbox.clear()
    assert client.post(EMAIL_RESEND, **HTML).status_code == 403
    anonymous = browser()
    response = post(anonymous, EMAIL_RESEND)
    assert response.status_code == 302
    assert response["Location"].startswith(LOGIN)
    assert mailoutbox == []


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ((), True),
        ((("Reader@Example.com", False),), False),
        ((("reader@example.com", True),), True),
        ((("other@example.com", True), ("reader@example.com", False)), False),
    ],
    ids=["no rows", "current unconfirmed", "current confirmed", "only another confirmed"],
)
def test_email_verified_reads_the_current_address_in_one_query(
    rows: tuple[tuple[str, bool], ...],
    expected: bool,
    django_assert_num_queries: Callable[..., Any],
) -> None:
    user = User.objects.create_user("Reader@Example.com", "pw-123456789")
    other = User.objects.create_user("stranger@example.com", "pw-123456789")
    EmailAddress.objects.create(user=other, email="reader@example.com", verified=True)
    for email, verified in rows:
        EmailAddress.objects.create(user=user, email=email.lower(), verified=verified)
    with django_assert_num_queries(1):
        assert email_verified(user) is expected
