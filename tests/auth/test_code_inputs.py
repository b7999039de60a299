"""Which code inputs ask a phone for the numeric keypad: only the authenticator app's
(digits alone). A mailed code has letters (``7CRQHJ``) and a recovery code too, so their
inputs must let a phone type them."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from appframework.auth.forms import CodeForm, TOTPCodeForm

pytestmark = pytest.mark.django_db


def test_a_mailed_or_recovery_code_input_does_not_ask_for_the_numeric_keypad() -> None:
    assert 'inputmode="numeric"' not in str(CodeForm()["code"])


def test_the_authenticator_apps_code_input_asks_for_the_numeric_keypad() -> None:
    assert 'inputmode="numeric"' in str(TOTPCodeForm()["code"])


def test_the_sign_in_by_code_page_lets_a_phone_type_letters() -> None:
    browser = Client()
    answer = browser.post(reverse("appframework:login-code"), {"email": "nobody@example.test"}, follow=True)
    assert answer.status_code == 200
    page = answer.content.decode()
    assert 'name="code"' in page and 'inputmode="numeric"' not in page
    assert not mail.outbox  # no account: nothing mailed, the same page
