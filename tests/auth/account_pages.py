"""Helpers of the account-page tests: a browser-like client (CSRF enforced) and TOTP
codes of later 30-second steps without sleeping."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace
from typing import Any

import pyotp
import pytest
from django.test import Client

from appframework.mfa import totp as totp_module
from appframework.mfa.flows import PENDING_SESSION_KEY
from appframework.security.tokens import session_cookie_name
from tests.conftest import age_proof

__all__ = ["age_proof"]

URLCONF = "tests.auth.accounts_urls"
COOKIE = "csrf_token"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
RECOVERY = re.compile(r"\b[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}\b")
STEP = 30


def browser() -> Client:
    return Client(enforce_csrf_checks=True)


def post(client: Client, path: str, data: dict[str, str] | None = None, **extra: Any) -> Any:
    """A form POST as the browser sends it: the CSRF cookie's value in ``_token`` (the
    cookie is set by a GET of the login page first)."""
    if COOKIE not in client.cookies:
        client.get("/accounts/login/")
    body = {**(data or {}), "_token": client.cookies[COOKIE].value}
    return client.post(path, body, **{**HTML, **extra})


def admin_post(client: Client, path: str, data: dict[str, str]) -> Any:
    """The admin's forms send Django's masked ``csrfmiddlewaretoken`` from the page."""
    page = client.get(path).content.decode()
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, page
    return client.post(path, {**data, "csrfmiddlewaretoken": match.group(1)}, **HTML)


def session_cookie(client: Client) -> str | None:
    morsel = client.cookies.get(session_cookie_name())
    return morsel.value if morsel is not None and morsel.value else None


def pending(client: Client) -> Any:
    return client.session.get(PENDING_SESSION_KEY)


def signed_in(client: Client) -> bool:
    """Whether the client's session opens the ``@login_required`` page."""
    return bool(client.get("/private/").status_code == 200)


def freeze_totp_clock(monkeypatch: pytest.MonkeyPatch, at: float) -> None:
    """The TOTP check (only) sees ``at`` as now: a later step without sleeping."""
    monkeypatch.setattr(totp_module, "time", SimpleNamespace(time=lambda: at))


def next_step_code(monkeypatch: pytest.MonkeyPatch, secret: str, steps: int = 1) -> str:
    """A live code of a step after the one enable_totp spent, the clock moved there."""
    at = time.time() + STEP * steps
    freeze_totp_clock(monkeypatch, at)
    return str(pyotp.TOTP(secret).at(at))


def wrong_code(secret: str) -> str:
    """Six digits that are no code of ``secret`` around now (and the next steps)."""
    totp = pyotp.TOTP(secret)
    now = time.time()
    live = {totp.at(now + STEP * k) for k in range(-2, 4)}
    return next(c for c in ("000000", "111111", "222222", "333333", "444444") if c not in live)
