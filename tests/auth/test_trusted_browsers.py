"""Trusted browsers (``MFA["TRUST_BROWSER"]``): the checkbox on the code form, the
cookie that lets the next password sign-in of the same user skip the code, and the ways
it ends (forgotten on the two-factor page, logging out everywhere, its expiry)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.core import signing
from django.test import Client
from django.utils import timezone

from appframework.auth.models import TrustedBrowser
from appframework.auth.trusted_browsers import TRUST_COOKIE
from tests.conftest import enable_totp, login_client

from .account_pages import HTML, URLCONF, browser, next_step_code, pending, post, signed_in
from .flows import (
    CHALLENGE,
    LOGIN,
    LOGIN_CODE,
    LOGIN_CODE_CONFIRM,
    LOGOUT,
    SETUP,
    code_in,
    configure,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure"]  # fixtures


@pytest.fixture
def trust_on(configure: Callable[..., None]) -> None:
    configure(
        EMAIL_VERIFICATION="optional",
        SECURITY_NOTIFICATIONS=False,
        mfa={"TRUST_BROWSER": True, "TRUST_DAYS": 30},
    )


@pytest.fixture
def secret(user: Any) -> str:
    return enable_totp(user)[0]


def _password(client: Client, user: Any, password: str) -> Any:
    client.get(LOGIN)
    return post(client, LOGIN, {"email": user.email, "password": password})


def _log_out(client: Client, **data: str) -> None:
    client.get(LOGOUT)
    assert post(client, LOGOUT, data).status_code == 302
    assert not signed_in(client)


@pytest.fixture
def trusted(
    trust_on: None, user: Any, password: str, secret: str, monkeypatch: pytest.MonkeyPatch
) -> Client:
    """Alice's browser, trusted after her code, then logged out."""
    client = browser()
    assert _password(client, user, password)["Location"] == CHALLENGE
    response = post(client, CHALLENGE, {"code": next_step_code(monkeypatch, secret), "trust": "on"})
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert TRUST_COOKIE in response.cookies
    _log_out(client)
    return client


def test_the_code_form_offers_the_checkbox(
    trust_on: None, user: Any, password: str, secret: str
) -> None:
    client = browser()
    _password(client, user, password)
    page = client.get(CHALLENGE).content.decode()
    assert 'type="checkbox" name="trust"' in page
    assert "Trust this browser for 30 days" in page


def test_without_trust_browser_there_is_no_checkbox_and_no_cookie(
    configure: Callable[..., None],
    user: Any,
    password: str,
    secret: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(mfa={"TRUST_BROWSER": False})
    client = browser()
    _password(client, user, password)
    page = client.get(CHALLENGE).content.decode()
    assert 'name="trust"' not in page
    response = post(client, CHALLENGE, {"code": next_step_code(monkeypatch, secret), "trust": "on"})
    assert response.status_code == 302
    assert TRUST_COOKIE not in response.cookies
    assert not TrustedBrowser.objects.exists()


def test_ticking_it_sets_a_long_lived_http_only_cookie_and_stores_only_a_hash(
    trust_on: None, user: Any, password: str, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    _password(client, user, password)
    response = post(
        client,
        CHALLENGE,
        {"code": next_step_code(monkeypatch, secret), "trust": "on"},
        HTTP_USER_AGENT="TestBrowser/1.0",
    )
    cookie = response.cookies[TRUST_COOKIE]
    assert cookie["httponly"] is True
    assert int(cookie["max-age"]) == 30 * 86400
    assert cookie["samesite"] == "Lax"
    row = TrustedBrowser.objects.get(user=user)
    assert row.user_agent == "TestBrowser/1.0"
    assert row.key_hash not in cookie.value
    assert timedelta(days=29) < row.expires_at - timezone.now() <= timedelta(days=30)


def test_not_ticking_it_trusts_nothing(
    trust_on: None, user: Any, password: str, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    _password(client, user, password)
    response = post(client, CHALLENGE, {"code": next_step_code(monkeypatch, secret)})
    assert TRUST_COOKIE not in response.cookies
    _log_out(client)
    assert _password(client, user, password)["Location"] == CHALLENGE


def test_the_next_password_sign_in_from_a_trusted_browser_skips_the_code(
    trusted: Client, user: Any, password: str
) -> None:
    response = _password(trusted, user, password)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(trusted)
    assert pending(trusted) is None
    assert TrustedBrowser.objects.get(user=user).last_used_at is not None


def test_a_wrong_password_from_a_trusted_browser_is_still_refused(
    trusted: Client, user: Any
) -> None:
    assert _password(trusted, user, "not the password").status_code == 401
    assert not signed_in(trusted)


def test_a_sign_in_by_code_from_a_trusted_browser_skips_the_second_step(
    trusted: Client, user: Any, configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(LOGIN_BY_CODE=True)
    trusted.get(LOGIN_CODE)
    post(trusted, LOGIN_CODE, {"email": user.email})
    response = post(trusted, LOGIN_CODE_CONFIRM, {"code": code_in(mailoutbox[-1])})
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(trusted)


def test_another_user_with_the_cookie_still_gets_the_challenge(
    trusted: Client, other_user: Any, password: str
) -> None:
    enable_totp(other_user)
    response = _password(trusted, other_user, password)
    assert response["Location"] == CHALLENGE
    assert not signed_in(trusted)


def test_a_browser_without_the_cookie_still_gets_the_challenge(
    trusted: Client, user: Any, password: str
) -> None:
    assert _password(browser(), user, password)["Location"] == CHALLENGE


def test_a_tampered_cookie_does_not_count(trusted: Client, user: Any, password: str) -> None:
    forged = signing.dumps(
        {"u": str(user.pk), "k": "guessed"}, salt="appframework.auth.trusted_browsers"
    )
    trusted.cookies[TRUST_COOKIE] = forged
    assert _password(trusted, user, password)["Location"] == CHALLENGE
    trusted.cookies[TRUST_COOKIE] = "junk\x00" * 100
    assert _password(trusted, user, password)["Location"] == CHALLENGE


def test_the_two_factor_page_lists_it_and_forgetting_it_brings_the_challenge_back(
    trusted: Client, user: Any, password: str
) -> None:
    assert _password(trusted, user, password)["Location"] == settings.LOGIN_REDIRECT_URL
    row = TrustedBrowser.objects.get(user=user)
    forget = f"/accounts/trusted-browsers/{row.pk}/forget/"
    page = trusted.get(SETUP).content.decode()
    assert f'action="{forget}"' in page
    response = post(trusted, forget)
    assert response.status_code == 302
    assert response["Location"] == SETUP
    assert not TrustedBrowser.objects.filter(pk=row.pk).exists()
    assert f'action="{forget}"' not in trusted.get(SETUP).content.decode()
    _log_out(trusted)
    assert _password(trusted, user, password)["Location"] == CHALLENGE


def test_forgetting_needs_the_csrf_token_and_the_owner(
    trusted: Client, user: Any, other_user: Any, password: str
) -> None:
    row = TrustedBrowser.objects.get(user=user)
    forget = f"/accounts/trusted-browsers/{row.pk}/forget/"
    _password(trusted, user, password)
    assert trusted.post(forget, **HTML).status_code == 403
    bob = browser()
    _password(bob, other_user, password)
    assert post(bob, forget).status_code == 404
    anonymous = browser()
    assert post(anonymous, forget)["Location"].startswith(LOGIN)
    assert TrustedBrowser.objects.filter(pk=row.pk).exists()


def test_logging_out_everywhere_brings_the_challenge_back(
    trusted: Client, user: Any, password: str
) -> None:
    assert _password(trusted, user, password)["Location"] == settings.LOGIN_REDIRECT_URL
    _log_out(trusted, everywhere="on")
    assert not TrustedBrowser.objects.filter(user=user).exists()
    assert _password(trusted, user, password)["Location"] == CHALLENGE


def test_an_expired_trust_does_not_count_and_is_not_listed(
    trusted: Client, user: Any, password: str
) -> None:
    TrustedBrowser.objects.filter(user=user).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert _password(trusted, user, password)["Location"] == CHALLENGE
    client = login_client(browser(), user)
    assert "trusted-browsers" not in client.get(SETUP).content.decode()


def test_turning_trust_browser_off_ignores_the_cookies_given(
    trusted: Client, user: Any, password: str, configure: Callable[..., None]
) -> None:
    configure(mfa={"TRUST_BROWSER": False})
    assert _password(trusted, user, password)["Location"] == CHALLENGE
