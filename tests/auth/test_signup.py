"""The sign-up page (appframework.auth.signup) in each ``EMAIL_VERIFICATION`` mode, its
signals and webhook, the answers that tell nobody which addresses have an account
(mandatory), and the mail limits every account mail counts against."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client

from appframework.auth.models import EmailAddress
from appframework.security.tokens import session_cookie_name
from appframework_webhooks.manager import WebhookManager
from testproject.blog.models import User

from .account_pages import URLCONF, browser, post, signed_in
from .flows import (
    CONFIRM_LINK,
    GOOD_PASSWORD,
    LOGIN,
    LOGIN_CODE,
    PASSWORD_RESET,
    SENT,
    SIGNUP,
    code_in,
    configure,
    link_in,
    names,
    sent,
    sign_up,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure", "sent"]  # fixtures

NEW = "newcomer@example.com"


@pytest.fixture
def webhooks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """The webhook events fired (``WebhookManager.fire_sync``), nothing delivered."""
    fired: list[tuple[str, dict[str, Any]]] = []

    def fire_sync(self: Any, event: str, data: dict[str, Any]) -> list[str]:
        fired.append((event, dict(data)))
        return []

    monkeypatch.setattr(WebhookManager, "fire_sync", fire_sync)
    return fired


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every PBKDF2 hash computed (a new password, or the time burnt in its place)."""
    computed: list[str] = []
    original = PBKDF2PasswordHasher.encode

    def encode(self: Any, password: str, salt: str, iterations: int | None = None) -> str:
        computed.append(salt)
        return original(self, password, salt, iterations)

    monkeypatch.setattr(PBKDF2PasswordHasher, "encode", encode)
    return computed


# -- the three modes -------------------------------------------------------------------
def test_without_verification_a_signup_signs_in_and_sends_no_mail(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="none")
    client = browser()
    response = sign_up(client, NEW)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)
    assert mailoutbox == []
    user = User.objects.get(email=NEW)
    assert user.check_password(GOOD_PASSWORD)


def test_with_optional_verification_a_signup_signs_in_and_mails_a_confirmation_link(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="optional", EMAIL_VERIFICATION_BY_CODE=False)
    client = browser()
    response = sign_up(client, NEW)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)
    (message,) = mailoutbox
    assert message.to == [NEW]
    assert message.subject == "Confirm your email address"
    assert CONFIRM_LINK.search(message.body)
    row = EmailAddress.objects.get(user__email=NEW)
    assert (row.email, row.verified, row.primary) == (NEW, False, True)


def test_with_optional_verification_by_code_a_signup_signs_in_and_mails_a_code(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="optional", EMAIL_VERIFICATION_BY_CODE=True)
    client = browser()
    response = sign_up(client, NEW)
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)
    (message,) = mailoutbox
    code = code_in(message)
    assert message.subject == f"Your confirmation code: {code}"
    assert CONFIRM_LINK.search(message.body) is None


def test_with_mandatory_verification_a_signup_signs_nobody_in_and_shows_check_your_inbox(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=False)
    client = browser()
    response = sign_up(client, NEW)
    assert response.status_code == 302
    assert response["Location"] == SENT
    assert not signed_in(client)
    page = client.get(SENT)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Check your inbox" in text
    assert 'name="code"' not in text
    (message,) = mailoutbox
    assert message.to == [NEW]
    link_in(message)


def test_with_mandatory_verification_by_code_the_inbox_page_asks_for_the_code(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=True)
    client = browser()
    assert sign_up(client, NEW)["Location"] == SENT
    assert 'name="code"' in client.get(SENT).content.decode()
    assert not signed_in(client)
    code_in(mailoutbox[0])


def test_with_mandatory_verification_login_is_refused_until_confirmed_and_resends(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=False)
    sign_up(browser(), NEW)
    other = browser()
    other.get(LOGIN)
    response = post(other, LOGIN, {"email": NEW, "password": GOOD_PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == SENT
    assert not signed_in(other)
    assert len(mailoutbox) == 2
    assert mailoutbox[1].to == [NEW]
    # Once the address is confirmed (elsewhere), the password signs in.
    again = link_in(mailoutbox[1])
    elsewhere = browser()
    elsewhere.get(again)
    assert post(elsewhere, again)["Location"] == LOGIN
    assert not signed_in(elsewhere)
    other.get(LOGIN)
    response = post(other, LOGIN, {"email": NEW, "password": GOOD_PASSWORD})
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(other)


def test_confirming_in_the_browser_that_typed_the_password_signs_it_in(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    """The refused login proved the password: its browser is the one a confirmation
    signs in, as the sign-up browser's."""
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=False)
    sign_up(browser(), NEW)
    other = browser()
    other.get(LOGIN)
    assert post(other, LOGIN, {"email": NEW, "password": GOOD_PASSWORD})["Location"] == SENT
    link = link_in(mailoutbox[-1])
    other.get(link)
    assert post(other, link)["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(other)


def test_a_wrong_password_of_an_unconfirmed_account_sends_nothing(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="mandatory")
    sign_up(browser(), NEW)
    mailoutbox.clear()
    client = browser()
    client.get(LOGIN)
    assert post(client, LOGIN, {"email": NEW, "password": "not-the-password"}).status_code == 401
    assert mailoutbox == []


# -- signals and the webhook ----------------------------------------------------------
@pytest.mark.parametrize("mode", ["none", "optional", "mandatory"])
def test_a_signup_sends_user_registered_which_fires_the_user_registered_webhook(
    configure: Callable[..., None],
    sent: list[tuple[str, dict[str, Any]]],
    webhooks: list[tuple[str, dict[str, Any]]],
    mode: str,
) -> None:
    configure(EMAIL_VERIFICATION=mode)
    sign_up(browser(), NEW)
    user = User.objects.get(email=NEW)
    assert names(sent) == ["user_registered"]
    assert sent[0][1]["user"] == user
    assert sent[0][1]["request"] is not None
    assert webhooks == [("user.registered", {"user_id": user.pk})]


def test_a_refused_signup_sends_no_signal(
    configure: Callable[..., None],
    sent: list[tuple[str, dict[str, Any]]],
    webhooks: list[tuple[str, dict[str, Any]]],
) -> None:
    configure(EMAIL_VERIFICATION="optional")
    response = sign_up(browser(), NEW, password="password")
    assert response.status_code == 422
    assert sent == [] and webhooks == []
    assert not User.objects.filter(email=NEW).exists()


# -- the form -------------------------------------------------------------------------
def test_the_password_validators_apply_to_a_signup(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="none")
    client = browser()
    response = sign_up(client, NEW, password="newcomer1")
    assert response.status_code == 422
    page = response.content.decode()
    assert re.search(
        r'<small class="af-field-error" id="id_password_error" role="alert">'
        r"The password is too similar to the email.</small>",
        page,
    )
    assert "newcomer1" not in page
    assert not User.objects.filter(email=NEW).exists()
    assert not signed_in(client)
    assert mailoutbox == []


def test_the_form_keeps_the_address_and_drops_the_password() -> None:
    response = sign_up(browser(), "not-an-address", password="Some-secret-Passw0rd")
    assert response.status_code == 422
    page = response.content.decode()
    assert 'value="not-an-address"' in page
    assert "Some-secret-Passw0rd" not in page


@pytest.mark.parametrize("mode", ["none", "optional"])
@pytest.mark.parametrize("typed", ["alice@example.com", "ALICE@Example.COM"])
def test_outside_mandatory_a_taken_address_is_a_422_with_an_error_on_the_email_field(
    configure: Callable[..., None], mailoutbox: list[Any], user: Any, mode: str, typed: str
) -> None:
    configure(EMAIL_VERIFICATION=mode)
    client = browser()
    response = sign_up(client, typed)
    assert response.status_code == 422
    page = response.content.decode()
    error = re.search(r'<small class="af-field-error" id="id_email_error"[^>]*>([^<]*)<', page)
    assert error, page
    assert error.group(1) == "An account with this address exists already."
    assert User.objects.count() == 1
    assert mailoutbox == []
    assert not signed_in(client)


def test_outside_mandatory_a_taken_address_is_a_problem_for_an_api_client(
    configure: Callable[..., None], user: Any
) -> None:
    configure(EMAIL_VERIFICATION="optional")
    client = browser()
    client.get(SIGNUP)
    response = post(
        client,
        SIGNUP,
        {"email": user.email, "password": GOOD_PASSWORD},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 422
    assert response.json()["errors"]["email"] == [
        {"code": "email_taken", "message": "An account with this address exists already."}
    ]


# -- mandatory: a taken address answers as a new one ------------------------------------
#: The page's CSRF tokens (the form's, the layout's meta tag): new in every page.
CSRF_VALUE = re.compile(r"\b[A-Za-z0-9]{64}\b")


def _answer(client: Client, email: str) -> tuple[int, str, set[str], str]:
    response = sign_up(client, email)
    followed = client.get(response["Location"])
    body = CSRF_VALUE.sub("-", followed.content.decode())
    return response.status_code, response["Location"], set(response.cookies), body


@pytest.mark.parametrize("by_code", [False, True])
@pytest.mark.parametrize("typed", ["alice@example.com", "Alice@EXAMPLE.com"])
def test_under_mandatory_a_taken_address_gets_the_answer_of_a_new_one(
    configure: Callable[..., None], user: Any, by_code: bool, typed: str
) -> None:
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=by_code)
    new = _answer(browser(), NEW)
    taken = _answer(browser(), typed)
    assert new[0] == 302 and new[1] == SENT
    assert session_cookie_name() in new[2]
    assert taken == new
    # Neither browser is signed in, and each page offers the same (a code form or not).
    assert ('name="code"' in new[3]) is by_code


@pytest.mark.parametrize("address", ["taken", "new"])
def test_under_mandatory_each_signup_costs_one_password_hash_and_one_mail(
    configure: Callable[..., None],
    mailoutbox: list[Any],
    hashes: list[str],
    user: Any,
    address: str,
) -> None:
    configure(EMAIL_VERIFICATION="mandatory")
    client = browser()
    client.get(SIGNUP)
    hashes.clear()
    post(
        client,
        SIGNUP,
        {"email": user.email if address == "taken" else NEW, "password": GOOD_PASSWORD},
    )
    assert len(hashes) == 1
    assert len(mailoutbox) == 1


def test_under_mandatory_a_taken_address_makes_no_account_and_mails_its_owner(
    configure: Callable[..., None],
    mailoutbox: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
    webhooks: list[tuple[str, dict[str, Any]]],
    user: Any,
    password: str,
) -> None:
    configure(EMAIL_VERIFICATION="mandatory")
    response = sign_up(browser(), "ALICE@example.com", password=GOOD_PASSWORD)
    assert response["Location"] == SENT
    assert User.objects.count() == 1
    assert sent == [] and webhooks == []
    (message,) = mailoutbox
    # The account's own address, as stored, not the one typed.
    assert message.to == [user.email]
    assert message.subject == "Someone tried to sign up with your address"
    assert "which has an account already" in message.body
    assert CONFIRM_LINK.search(message.body) is None
    user.refresh_from_db()
    assert user.check_password(password)
    assert not EmailAddress.objects.filter(user=user).exists()


def test_under_mandatory_the_signup_browser_of_a_taken_address_cannot_sign_in_by_its_code(
    configure: Callable[..., None], mailoutbox: list[Any], user: Any
) -> None:
    """The taken path's session waits for a code too, but no mail carries it and no
    user is behind it."""
    configure(EMAIL_VERIFICATION="mandatory", EMAIL_VERIFICATION_BY_CODE=True)
    client = browser()
    sign_up(client, user.email)
    response = post(client, SENT, {"code": "ABCDEF"})
    assert response.status_code == 422
    assert not signed_in(client)


# -- the mail limits ------------------------------------------------------------------
def _reset(client: Client, email: str) -> Any:
    client.get(PASSWORD_RESET)
    return post(client, PASSWORD_RESET, {"email": email})


@pytest.mark.parametrize("address", ["alice@example.com", "nobody@example.com"])
def test_mail_per_address_is_a_429_with_retry_after_whether_or_not_it_has_an_account(
    configure: Callable[..., None], mailoutbox: list[Any], user: Any, address: str
) -> None:
    configure(MAIL_PER_ADDRESS=2, MAIL_PER_CLIENT=100, MAIL_WINDOW=600)
    assert [_reset(browser(), address).status_code for _ in range(2)] == [302, 302]
    response = _reset(browser(), address)
    assert response.status_code == 429
    # The sliding window counts the refused hit too: at most two windows away.
    assert 1 <= int(response["Retry-After"]) <= 2 * 600
    sent_before = len(mailoutbox)
    assert sent_before == (2 if address == user.email else 0)
    # Another address from the same client is still served.
    assert _reset(browser(), "someone.else@example.com").status_code == 302


@pytest.mark.parametrize("address", ["alice@example.com", "nobody@example.com"])
def test_mail_per_client_is_a_429_with_retry_after_whether_or_not_addresses_have_accounts(
    configure: Callable[..., None], mailoutbox: list[Any], user: Any, address: str
) -> None:
    configure(MAIL_PER_ADDRESS=100, MAIL_PER_CLIENT=3, MAIL_WINDOW=600)
    client = browser()
    assert [_reset(client, f"n{i}@example.com").status_code for i in range(2)] == [302, 302]
    assert _reset(client, address).status_code == 302
    response = _reset(client, "n9@example.com")
    assert response.status_code == 429
    # The sliding window counts the refused hit too: at most two windows away.
    assert 1 <= int(response["Retry-After"]) <= 2 * 600
    # Another client address is still served.
    other = Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.2")
    assert _reset(other, "n9@example.com").status_code == 302


def test_signups_count_against_the_client_limit_even_without_mail(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="none", MAIL_PER_CLIENT=2, MAIL_WINDOW=600)
    assert sign_up(browser(), "one@example.com").status_code == 302
    assert sign_up(browser(), "two@example.com").status_code == 302
    response = sign_up(browser(), "three@example.com")
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert not User.objects.filter(email="three@example.com").exists()
    assert mailoutbox == []


def test_under_mandatory_signups_to_one_address_count_against_its_limit_taken_or_not(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    """The first sign-up makes the account; the second, with the address now taken,
    is counted the same; the third is refused, as is a sign-in code to it."""
    configure(EMAIL_VERIFICATION="mandatory", MAIL_PER_ADDRESS=2, MAIL_WINDOW=600)
    assert sign_up(browser(), NEW)["Location"] == SENT
    assert sign_up(browser(), NEW)["Location"] == SENT
    assert len(mailoutbox) == 2
    response = sign_up(browser(), NEW.upper())
    assert response.status_code == 429
    assert response["Retry-After"]
    client = browser()
    client.get(LOGIN_CODE)
    configure(LOGIN_BY_CODE=True)
    assert post(client, LOGIN_CODE, {"email": NEW}).status_code == 429
    assert len(mailoutbox) == 2
