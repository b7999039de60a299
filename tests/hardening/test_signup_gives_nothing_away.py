"""The demo's sign-up tells nobody who has an account, and is rate-limited."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db]



# -- sign-up tells nobody who has an account, and is rate-limited ------------------------------
def test_signup_with_a_taken_email_does_not_say_it_is_taken(user: Any) -> None:
    client = Client()
    taken = client.post("/signup", {"email": user.email, "password": "a long fresh passphrase"})
    assert taken.status_code == 422
    page = taken.content.decode().lower()
    assert "exists" not in page and "already" not in page and "taken" not in page


def test_the_sixth_signup_from_one_address_in_ten_minutes_is_429(db: Any) -> None:
    client = Client()
    answers = [
        client.post(
            "/signup", {"email": f"new{n}@example.com", "password": "a long fresh passphrase"}
        )
        for n in range(6)
    ]
    assert [r.status_code for r in answers[:5]] == [302] * 5
    assert answers[5].status_code == 429 and int(answers[5]["Retry-After"]) >= 1
    from testproject.blog.models import User

    assert not User.objects.filter(email="new5@example.com").exists()
