"""Signing in with a mailed code (``AUTH["LOGIN_BY_CODE"]``): 404 while off, the same
answer for any address, the code good in the browser that asked, three tries, once, and
the first factor only."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from appframework.auth import mail_codes
from appframework.auth.verification import email_verified, record_address
from tests.conftest import enable_totp

from .account_pages import HTML, URLCONF, browser, next_step_code, pending, post, signed_in
from .flows import (
    CHALLENGE,
    LOGIN_CODE,
    LOGIN_CODE_CONFIRM,
    code_in,
    configure,
    copy_cookies,
    signed_in_user,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure"]  # fixtures

BAD_CODE = "That code is not valid or has expired."
_TOKEN = re.compile(r"\b[A-Za-z0-9]{64}\b")


@pytest.fixture
def on(configure: Callable[..., None]) -> None:
    configure(LOGIN_BY_CODE=True, EMAIL_VERIFICATION="optional", SECURITY_NOTIFICATIONS=False)


def _ask(client: Client, email: str, **data: str) -> Any:
    client.get(LOGIN_CODE)
    return post(client, LOGIN_CODE, {"email": email, **data})


def _asked(user: Any, mailoutbox: list[Any], **data: str) -> tuple[Client, str]:
    client = browser()
    response = _ask(client, user.email, **data)
    assert response.status_code == 302 and response["Location"] == LOGIN_CODE_CONFIRM
    return client, code_in(mailoutbox[-1])


def _wrong(code: str) -> str:
    return "ABCDEF" if code != "ABCDEF" else "GHJKMN"


def test_while_off_both_pages_are_404(configure: Callable[..., None], user: Any) -> None:
    configure(LOGIN_BY_CODE=False)
    client = browser()
    for path in (LOGIN_CODE, LOGIN_CODE_CONFIRM):
        assert client.get(path).status_code == 404
        assert post(client, path, {"email": user.email, "code": "ABCDEF"}).status_code == 404


@pytest.mark.usefixtures("on")
def test_an_unknown_address_gets_the_same_answer_and_no_mail(
    user: Any, mailoutbox: list[Any]
) -> None:
    answers = []
    for email in (user.email, "nobody@example.com"):
        client = browser()
        response = _ask(client, email)
        page = _TOKEN.sub("-", client.get(response["Location"]).content.decode())
        answers.append((response.status_code, response["Location"], set(response.cookies), page))
    assert answers[0] == answers[1]
    assert answers[0][:2] == (302, LOGIN_CODE_CONFIRM)
    assert [m.to for m in mailoutbox] == [[user.email]]


@pytest.mark.usefixtures("on")
def test_the_mailed_code_signs_in_and_follows_next(user: Any, mailoutbox: list[Any]) -> None:
    client, code = _asked(user, mailoutbox, next="/private/")
    message = mailoutbox[0]
    assert message.subject == f"Your sign-in code: {code}"
    response = post(client, LOGIN_CODE_CONFIRM, {"code": code})
    assert response.status_code == 302
    assert response["Location"] == "/private/"
    assert signed_in_user(client) == user


@pytest.mark.usefixtures("on")
def test_a_foreign_next_is_dropped(user: Any, mailoutbox: list[Any]) -> None:
    client, code = _asked(user, mailoutbox, next="https://evil.example/")
    assert post(client, LOGIN_CODE_CONFIRM, {"code": code})["Location"] == (
        settings.LOGIN_REDIRECT_URL
    )


@pytest.mark.usefixtures("on")
def test_a_user_with_totp_goes_on_to_the_second_factor(
    user: Any, mailoutbox: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret, _codes = enable_totp(user)
    client, code = _asked(user, mailoutbox, next="/private/")
    response = post(client, LOGIN_CODE_CONFIRM, {"code": code})
    assert response.status_code == 302
    assert response["Location"] == CHALLENGE
    assert not signed_in(client)
    assert str(pending(client)["uid"]) == str(user.pk)
    response = post(client, CHALLENGE, {"code": next_step_code(monkeypatch, secret)})
    assert response["Location"] == "/private/"
    assert signed_in_user(client) == user


@pytest.mark.usefixtures("on")
def test_three_wrong_codes_drop_it(user: Any, mailoutbox: list[Any]) -> None:
    client, code = _asked(user, mailoutbox)
    for _ in range(3):
        response = post(client, LOGIN_CODE_CONFIRM, {"code": _wrong(code)})
        assert response.status_code == 401
        assert BAD_CODE in response.content.decode()
    response = post(client, LOGIN_CODE_CONFIRM, {"code": code})
    assert response.status_code == 302
    assert response["Location"] == LOGIN_CODE
    assert not signed_in(client)


@pytest.mark.usefixtures("on")
def test_wrong_codes_sent_with_copies_of_one_cookie_still_count_three(
    user: Any, mailoutbox: list[Any]
) -> None:
    client, code = _asked(user, mailoutbox)
    for _ in range(3):
        assert (
            post(copy_cookies(client), LOGIN_CODE_CONFIRM, {"code": _wrong(code)}).status_code
            == 401
        )
    response = post(client, LOGIN_CODE_CONFIRM, {"code": code})
    assert response.status_code == 401
    assert not signed_in(client)


@pytest.mark.usefixtures("on")
def test_a_code_works_only_in_the_browser_that_asked(user: Any, mailoutbox: list[Any]) -> None:
    first, first_code = _asked(user, mailoutbox)
    second, second_code = _asked(user, mailoutbox)
    response = post(first, LOGIN_CODE_CONFIRM, {"code": second_code})
    assert response.status_code == 401
    assert not signed_in(first)
    # A browser that asked for nothing is sent to ask first.
    stranger = browser()
    assert post(stranger, LOGIN_CODE_CONFIRM, {"code": first_code})["Location"] == LOGIN_CODE
    assert not signed_in(stranger)
    # Each code still works where it was asked for.
    assert post(first, LOGIN_CODE_CONFIRM, {"code": first_code}).status_code == 302
    assert post(second, LOGIN_CODE_CONFIRM, {"code": second_code}).status_code == 302
    assert signed_in(first) and signed_in(second)


@pytest.mark.usefixtures("on")
def test_a_spent_code_replayed_with_an_old_copy_of_the_cookie_is_refused(
    user: Any, mailoutbox: list[Any]
) -> None:
    client, code = _asked(user, mailoutbox)
    kept = copy_cookies(client)
    assert post(client, LOGIN_CODE_CONFIRM, {"code": code}).status_code == 302
    response = post(kept, LOGIN_CODE_CONFIRM, {"code": code})
    assert response.status_code == 401
    assert not signed_in(kept)


@pytest.mark.usefixtures("on")
def test_a_code_expires_after_email_code_ttl(
    user: Any, mailoutbox: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, code = _asked(user, mailoutbox)
    later = time.time() + 15 * 60 + 5
    monkeypatch.setattr(mail_codes, "time", SimpleNamespace(time=lambda: later))
    assert post(client, LOGIN_CODE_CONFIRM, {"code": code})["Location"] == LOGIN_CODE
    assert not signed_in(client)


@pytest.mark.usefixtures("on")
def test_no_code_signs_in_the_browser_of_an_unknown_address(mailoutbox: list[Any]) -> None:
    client = browser()
    _ask(client, "nobody@example.com")
    for guess in ("ABCDEF", "GHJKMN", "PQRSTU"):
        assert post(client, LOGIN_CODE_CONFIRM, {"code": guess}).status_code == 401
    assert not signed_in(client)
    assert mailoutbox == []


@pytest.mark.usefixtures("on")
def test_an_inactive_account_is_mailed_nothing(user: Any, mailoutbox: list[Any]) -> None:
    user.is_active = False
    user.save()
    assert _ask(browser(), user.email)["Location"] == LOGIN_CODE_CONFIRM
    assert mailoutbox == []


@pytest.mark.usefixtures("on")
def test_an_account_deactivated_after_the_mail_is_not_signed_in(
    user: Any, mailoutbox: list[Any]
) -> None:
    client, code = _asked(user, mailoutbox)
    user.is_active = False
    user.save()
    assert post(client, LOGIN_CODE_CONFIRM, {"code": code}).status_code == 401
    assert not signed_in(client)


def test_the_code_proves_the_address_under_mandatory_verification(
    configure: Callable[..., None], user: Any, mailoutbox: list[Any]
) -> None:
    configure(LOGIN_BY_CODE=True, EMAIL_VERIFICATION="mandatory")
    record_address(user, user.email, verified=False, primary=True)
    client, code = _asked(user, mailoutbox)
    assert post(client, LOGIN_CODE_CONFIRM, {"code": code}).status_code == 302
    assert signed_in(client)
    assert email_verified(user)


@pytest.mark.usefixtures("on")
def test_both_pages_need_the_csrf_token(user: Any, mailoutbox: list[Any]) -> None:
    client = browser()
    client.get(LOGIN_CODE)
    assert client.post(LOGIN_CODE, {"email": user.email}, **HTML).status_code == 403
    assert mailoutbox == []
    client, code = _asked(user, mailoutbox)
    assert client.post(LOGIN_CODE_CONFIRM, {"code": code}, **HTML).status_code == 403
    assert not signed_in(client)
