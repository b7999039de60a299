"""Two sign-ups for the same address at once: the second insert breaks the unique
constraint after the form's check passed. It is a 422 ``signup_conflict`` with nothing
written, not a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.auth import signup as signup_module
from testproject.blog.models import User

from .account_pages import URLCONF

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]


def test_a_sign_up_losing_the_race_for_its_address_is_a_422_and_writes_nothing(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The other sign-up had not committed when this one looked: the check sees no owner.
    monkeypatch.setattr(signup_module, "email_owner", lambda email, **kw: None)
    answer = Client().post(
        "/accounts/signup/",
        {"email": user.email, "password": "a fresh passphrase 42!"},
        HTTP_ACCEPT="application/json",
    )
    assert answer.status_code == 422, answer.content
    assert answer["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "signup_conflict"
    assert list(User.objects.values_list("email", flat=True)) == [user.email]
