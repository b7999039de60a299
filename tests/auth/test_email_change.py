"""Changing the account's address (appframework.auth.verification.request_email_change):
a recent proof first, a confirmation to the new address, the change only once it is
confirmed, a notice to the old one, and answers that tell nothing about addresses that
belong to another account."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from appframework.auth.models import EmailAddress
from testproject.blog.models import User
from tests.conftest import login_client

from .account_pages import HTML, URLCONF, age_proof, browser, post, signed_in
from .flows import (
    CONFIRM_LINK,
    EMAIL,
    EMAIL_CHANGE,
    LOGIN,
    REAUTH,
    SENT,
    code_in,
    configure,
    link_in,
    names,
    sent,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure", "sent"]  # fixtures

NEW = "alice.new@example.com"
TAKEN_MESSAGE = "This address is already used by another account."


@pytest.fixture
def signed(user: Any, configure: Callable[..., None]) -> Client:
    """Alice, signed in just now (a recent proof), links by default."""
    configure(EMAIL_VERIFICATION="optional", EMAIL_VERIFICATION_BY_CODE=False)
    return login_client(browser(), user)


def _change(client: Client, email: str, **extra: Any) -> Any:
    client.get(EMAIL_CHANGE)
    return post(client, EMAIL_CHANGE, {"email": email}, **extra)


def _email_of(user: Any) -> str:
    user.refresh_from_db()
    return str(user.email)


def test_a_change_without_a_recent_proof_goes_to_confirm_its_you_and_sends_nothing(
    signed: Client, user: Any, mailoutbox: list[Any]
) -> None:
    age_proof(signed)
    for response in (signed.get(EMAIL_CHANGE, **HTML), _change(signed, NEW)):
        assert response.status_code == 302
        assert response["Location"] == f"{REAUTH}?next={EMAIL_CHANGE}"
    assert mailoutbox == []
    assert not EmailAddress.objects.filter(email=NEW).exists()
    assert _email_of(user) == "alice@example.com"


def test_proving_it_again_lets_the_change_through(
    signed: Client, user: Any, password: str, mailoutbox: list[Any]
) -> None:
    age_proof(signed)
    signed.get(REAUTH)
    response = post(signed, REAUTH, {"password": password, "next": EMAIL_CHANGE})
    assert response["Location"] == EMAIL_CHANGE
    assert _change(signed, NEW)["Location"] == EMAIL
    assert [m.to for m in mailoutbox] == [[NEW]]


def test_an_anonymous_browser_goes_to_the_login_page() -> None:
    response = browser().get(EMAIL_CHANGE, **HTML)
    assert response.status_code == 302
    assert response["Location"] == f"{LOGIN}?next={EMAIL_CHANGE}"


def test_the_new_address_is_mailed_a_link_and_nothing_changes_before_it_is_confirmed(
    signed: Client, user: Any, password: str, mailoutbox: list[Any]
) -> None:
    response = _change(signed, NEW)
    assert response.status_code == 302
    assert response["Location"] == EMAIL
    (message,) = mailoutbox
    assert message.to == [NEW]
    assert CONFIRM_LINK.search(message.body)
    assert _email_of(user) == "alice@example.com"
    page = signed.get(EMAIL).content.decode()
    assert f"We sent a message to {NEW}: confirm the address there to use it." in page
    assert f"Waiting for confirmation: <strong>{NEW}</strong>" in page
    # The old address still signs in; the new one does not yet.
    client = browser()
    client.get(LOGIN)
    assert post(client, LOGIN, {"email": NEW, "password": password}).status_code == 401
    assert (
        post(client, LOGIN, {"email": "alice@example.com", "password": password}).status_code == 302
    )


def test_confirming_moves_the_account_and_tells_the_old_address(
    signed: Client,
    user: Any,
    password: str,
    mailoutbox: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    _change(signed, NEW)
    link = link_in(mailoutbox[0])
    signed.get(link)
    response = post(signed, link)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(signed)
    assert _email_of(user) == NEW
    assert names(sent) == ["email_confirmed", "email_changed"]
    changed = sent[1][1]
    assert (changed["user"], changed["old_email"], changed["new_email"]) == (
        user,
        "alice@example.com",
        NEW,
    )
    notice = mailoutbox[1]
    assert notice.to == ["alice@example.com"]
    assert notice.subject == "The email address of your account changed"
    assert f"changed from alice@example.com to {NEW}" in notice.body
    assert list(EmailAddress.objects.filter(user=user).values_list("email", "verified")) == [
        (NEW, True)
    ]
    client = browser()
    client.get(LOGIN)
    assert post(client, LOGIN, {"email": NEW, "password": password}).status_code == 302


def test_the_old_address_is_told_even_without_security_notifications(
    signed: Client, configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(SECURITY_NOTIFICATIONS=False)
    _change(signed, NEW)
    link = link_in(mailoutbox[0])
    post(signed, link)
    assert [m.to for m in mailoutbox] == [[NEW], ["alice@example.com"]]


def test_a_confirmation_by_code_is_asked_in_the_same_browser(
    signed: Client,
    user: Any,
    configure: Callable[..., None],
    mailoutbox: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    configure(EMAIL_VERIFICATION_BY_CODE=True)
    response = _change(signed, NEW)
    assert response.status_code == 302
    # The code is typed on the "check your inbox" page, which asks for it.
    assert response["Location"] == SENT
    page = signed.get(response["Location"]).content.decode()
    assert 'name="code"' in page
    code = code_in(mailoutbox[0])
    other = login_client(browser(), user)
    assert post(other, SENT, {"code": code}).status_code == 422
    assert _email_of(user) == "alice@example.com"
    assert post(signed, SENT, {"code": code})["Location"] == settings.LOGIN_REDIRECT_URL
    assert _email_of(user) == NEW
    assert names(sent) == ["email_confirmed", "email_changed"]


def test_a_second_request_replaces_the_first(
    signed: Client, user: Any, mailoutbox: list[Any]
) -> None:
    _change(signed, NEW)
    first = link_in(mailoutbox[0])
    _change(signed, "alice.other@example.com")
    second = link_in(mailoutbox[1])
    assert post(signed, first).status_code == 422
    assert _email_of(user) == "alice@example.com"
    assert post(signed, second).status_code == 302
    assert _email_of(user) == "alice.other@example.com"


def test_the_current_address_is_refused(signed: Client, mailoutbox: list[Any]) -> None:
    response = _change(signed, "Alice@Example.com")
    assert response.status_code == 422
    assert "That is your address already." in response.content.decode()
    assert mailoutbox == []


def test_the_change_form_needs_the_csrf_token(signed: Client, mailoutbox: list[Any]) -> None:
    signed.get(EMAIL_CHANGE)
    assert signed.post(EMAIL_CHANGE, {"email": NEW}, **HTML).status_code == 403
    assert mailoutbox == []


# -- addresses of other accounts ---------------------------------------------------------
#: What differs between two answers for different addresses: the CSRF tokens and the
#: address itself (echoed back in the message).
_TOKEN = re.compile(r"\b[A-Za-z0-9]{64}\b")


def _answer(client: Client, email: str) -> tuple[int, str, set[str], str]:
    response = _change(client, email)
    body = client.get(response["Location"]).content.decode()
    body = re.sub(re.escape(email), "ADDRESS", _TOKEN.sub("-", body), flags=re.IGNORECASE)
    return response.status_code, response["Location"], set(response.cookies), body


@pytest.mark.parametrize("by_code", [False, True])
def test_a_taken_address_gets_the_answer_of_a_free_one(
    signed: Client,
    user: Any,
    other_user: Any,
    configure: Callable[..., None],
    mailoutbox: list[Any],
    by_code: bool,
) -> None:
    configure(EMAIL_VERIFICATION_BY_CODE=by_code)
    taken = _answer(signed, "BOB@example.com")
    free = _answer(signed, NEW)
    assert taken[0] == 302
    assert taken == free
    # Bob's address got a notice, never a confirmation; the free one a confirmation.
    notice, confirmation = mailoutbox
    assert notice.to == [other_user.email]
    assert notice.subject == "Someone tried to sign up with your address"
    assert CONFIRM_LINK.search(notice.body) is None and "    " not in notice.body
    assert confirmation.to == [NEW]
    assert _email_of(user) == "alice@example.com"


def test_a_taken_address_cannot_be_confirmed_with_a_code(
    signed: Client, user: Any, other_user: Any, configure: Callable[..., None]
) -> None:
    configure(EMAIL_VERIFICATION_BY_CODE=True)
    _change(signed, other_user.email)
    for code in ("ABCDEF", "GHJKMN", "PQRSTU"):
        assert post(signed, SENT, {"code": code}).status_code == 422
    assert _email_of(user) == "alice@example.com"


def test_an_address_taken_while_its_link_waited_is_refused(
    signed: Client,
    user: Any,
    other_user: Any,
    mailoutbox: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    _change(signed, NEW)
    link = link_in(mailoutbox[0])
    User.objects.filter(pk=other_user.pk).update(email=NEW)
    signed.get(link)
    response = post(signed, link)
    assert response.status_code == 422
    assert TAKEN_MESSAGE in response.content.decode()
    assert _email_of(user) == "alice@example.com"
    assert sent == []
    assert len(mailoutbox) == 1


def test_an_address_another_account_confirmed_while_the_link_waited_is_refused(
    signed: Client, user: Any, other_user: Any, mailoutbox: list[Any]
) -> None:
    _change(signed, NEW)
    link = link_in(mailoutbox[0])
    EmailAddress.objects.create(user=other_user, email=NEW, verified=True)
    assert post(signed, link).status_code == 422
    assert _email_of(user) == "alice@example.com"
