"""A response whose request brought no session and touched none does not say
``Vary: Cookie``, as with Django's own SessionMiddleware: the suite's SessionMiddleware
refreshes "last seen" only for a session that exists (shared caches can keep such
pages for everyone)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.auth.user_sessions import SEEN_SESSION_KEY
from tests.conftest import login_client

pytestmark = pytest.mark.django_db


def test_an_anonymous_response_that_never_read_the_session_does_not_vary_on_cookie() -> None:
    response = Client().get("/posts")
    assert response.status_code == 200
    assert "Cookie" not in response.get("Vary", "")


def test_a_signed_in_request_still_refreshes_its_session(user: Any) -> None:
    client = login_client(Client(), user)
    response = client.get("/posts")
    assert response.status_code == 200
    assert SEEN_SESSION_KEY in client.session
