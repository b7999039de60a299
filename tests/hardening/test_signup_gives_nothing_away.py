"""The demo's sign-up tells nobody who has an account (its addresses are confirmed
before use: a taken address gets the answer a new one gets), and is rate-limited."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings

pytestmark = [pytest.mark.django_db]

PASSPHRASE = "a long fresh passphrase"


def test_signup_with_a_taken_email_answers_as_a_new_one(user: Any) -> None:
    taken = Client().post("/signup", {"email": user.email, "password": PASSPHRASE})
    new = Client().post("/signup", {"email": "brand.new@example.com", "password": PASSPHRASE})
    assert (taken.status_code, taken["Location"]) == (new.status_code, new["Location"])
    assert taken.content == new.content
    assert sorted(taken.cookies) == sorted(new.cookies)
    page = Client().get(taken["Location"]).content.decode().lower()
    assert "exists" not in page and "already" not in page and "taken" not in page


def test_the_sixth_signup_from_one_client_within_the_window_is_429(db: Any) -> None:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app["AUTH"] = {**app["AUTH"], "MAIL_PER_CLIENT": 5, "MAIL_WINDOW": 600}
    client = Client()
    with override_settings(APPFRAMEWORK=app):
        answers = [
            client.post("/signup", {"email": f"new{n}@example.com", "password": PASSPHRASE})
            for n in range(6)
        ]
    assert [r.status_code for r in answers[:5]] == [302] * 5
    assert answers[5].status_code == 429 and int(answers[5]["Retry-After"]) >= 1
    from testproject.blog.models import User

    assert not User.objects.filter(email="new5@example.com").exists()
