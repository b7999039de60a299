"""The login throttle (like the passkey sign-in limit) counts the address the adapter's
``get_client_ip`` gives: a project that reads its proxy's client header there gets it
counted, not the proxy's ``REMOTE_ADDR``."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest
from django.test import Client

from appframework.auth.adapter import AccountAdapter
from tests.auth.flows import appframework_settings

pytestmark = pytest.mark.django_db


class ProxyAdapter(AccountAdapter):
    def get_client_ip(self, request: HttpRequest) -> str:
        return str(request.META.get("HTTP_X_CLIENT", "") or request.META.get("REMOTE_ADDR", ""))


def test_wrong_passwords_through_many_proxy_addresses_are_counted_for_one_client(
    user: Any,
) -> None:
    adapter = f"{__name__}.ProxyAdapter"
    answers = []
    with appframework_settings(auth={"ADAPTER": adapter}):
        for hop in range(12):
            response = Client(REMOTE_ADDR=f"10.0.0.{hop + 1}", HTTP_X_CLIENT="198.51.100.7").post(
                "/api/auth/app/v1/auth/login",
                {"email": user.email, "password": "wrong"},
                content_type="application/json",
                HTTP_X_SESSION_TOKEN="",
            )
            answers.append(response.status_code)
    assert 429 in answers, answers
    assert answers[0] == 401
