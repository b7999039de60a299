"""The account flows of the JSON API on both clients (browser: cookie + CSRF; app:
``X-Session-Token``, no cookies), and their refusals: configuration and status, password
login, the pending second factor (TOTP, recovery code, wrong code, the guessing limit),
re-authentication, logout (and "everywhere"), login CSRF, bad bodies."""

from __future__ import annotations

import json
import time
from typing import Any

import pyotp
import pytest
from django.core import mail
from django.test import Client

from appframework.auth.models import UserSession
from appframework.auth.reauth import AUTHENTICATED_AT_SESSION_KEY
from tests.conftest import csrf_cookie, enable_totp

pytestmark = pytest.mark.django_db

JSON = "application/json"
CLIENTS = ["browser", "app"]


class Api:
    """One client of the JSON API: the browser sends its CSRF header on unsafe methods,
    the app its session token (and keeps no cookies)."""

    def __init__(self, kind: str, address: str = "203.0.113.20") -> None:
        self.kind = kind
        self.base = f"/api/auth/{kind}/v1/"
        self.token = ""
        self.address = address
        self.client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)

    def call(self, method: str, path: str, data: Any = None, *, csrf: bool = True) -> Any:
        extra: dict[str, Any] = {"HTTP_ACCEPT": JSON}
        if self.kind == "app":
            self.client.cookies.clear()
            extra["HTTP_X_SESSION_TOKEN"] = self.token
        elif method != "get" and csrf:
            extra["HTTP_X_CSRF_TOKEN"] = csrf_cookie(self.client)
        send = getattr(self.client, method)
        if method == "get":
            answer = send(self.base + path, **extra)
        else:
            body = data if isinstance(data, str) else json.dumps(data or {})
            answer = send(self.base + path, body, content_type=JSON, **extra)
        if self.kind == "app" and "X-Session-Token" in answer:
            self.token = answer["X-Session-Token"]
        return answer

    def login(self, email: str, password: str) -> Any:
        return self.call("post", "auth/login", {"email": email, "password": password})


@pytest.fixture(params=CLIENTS)
def api(request: pytest.FixtureRequest) -> Api:
    return Api(request.param)


@pytest.fixture
def totp_user(user: Any) -> tuple[Any, str, list[str]]:
    secret, codes = enable_totp(user)
    return user, secret, codes


def _problem(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    assert answer["Content-Type"] == "application/problem+json"
    body: dict[str, Any] = answer.json()
    assert body["code"] == code, body
    return body


# -- configuration and status -----------------------------------------------------------------


def test_configuration_and_anonymous_status_answer_both_clients(api: Api) -> None:
    assert api.call("get", "config").status_code == 200
    status = api.call("get", "session")
    assert status.status_code == 200
    assert status.json()["status"] == "anonymous" and status.json()["user"] is None


# -- password login ---------------------------------------------------------------------------


def test_a_password_login_signs_in_and_the_status_says_who(
    api: Api, user: Any, password: str
) -> None:
    answer = api.login(user.email, password)
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "authenticated"
    assert answer.json()["user"]["email"] == user.email
    assert api.call("get", "session").json()["status"] == "authenticated"
    if api.kind == "app":
        assert api.token.startswith("afs_")
        assert answer.json()["session_token"] == api.token


def test_a_wrong_password_is_401_invalid_credentials(api: Api, user: Any) -> None:
    _problem(api.login(user.email, "not the password"), 401, "invalid_credentials")
    assert api.call("get", "session").json()["status"] == "anonymous"


def test_the_browser_login_without_the_csrf_header_is_refused(user: Any, password: str) -> None:
    """Login CSRF: another site cannot sign a browser into the attacker's account."""
    browser = Api("browser")
    answer = browser.call(
        "post", "auth/login", {"email": user.email, "password": password}, csrf=False
    )
    assert answer.status_code == 403
    assert answer["Content-Type"] == "application/problem+json"
    assert browser.call("get", "session").json()["status"] == "anonymous"


def test_the_app_client_sets_no_cookie(user: Any, password: str) -> None:
    app = Api("app")
    answer = app.login(user.email, password)
    assert answer.status_code == 200
    assert not answer.cookies, answer.cookies
    assert not app.call("get", "account").cookies


# -- the second factor ------------------------------------------------------------------------


def test_totp_login_is_pending_until_the_code_then_signed_in(
    api: Api, totp_user: tuple[Any, str, list[str]], password: str
) -> None:
    user, secret, _codes = totp_user
    pending = api.login(user.email, password)
    assert pending.status_code == 200
    assert pending.json()["status"] == "second_factor_required"
    assert pending.json()["user"] is None
    assert "totp" in json.dumps(pending.json()["second_factor"])
    # The step after the one enable_totp spent (the window accepts one step either side).
    code = pyotp.TOTP(secret).at(time.time() + 30)
    done = api.call("post", "auth/second-factor", {"code": code})
    assert done.status_code == 200, done.content
    assert done.json()["status"] == "authenticated"


def test_a_recovery_code_answers_the_second_factor_once(
    totp_user: tuple[Any, str, list[str]], password: str
) -> None:
    user, _secret, codes = totp_user
    for kind in CLIENTS:
        api = Api(kind)
        api.login(user.email, password)
        done = api.call("post", "auth/second-factor", {"code": codes[0]})
        if kind == "browser":
            assert done.json()["status"] == "authenticated", done.content
        else:  # the same recovery code again: spent
            _problem(done, 401, "mfa_invalid_code")


def test_a_wrong_code_is_401_and_the_guessing_limit_is_429_with_retry_after(
    api: Api, totp_user: tuple[Any, str, list[str]], password: str
) -> None:
    user, secret, _codes = totp_user
    api.login(user.email, password)
    wrong = f"{(int(pyotp.TOTP(secret).now()) + 1) % 1_000_000:06d}"
    statuses = []
    for _ in range(8):
        answer = api.call("post", "auth/second-factor", {"code": wrong})
        statuses.append(answer.status_code)
        if answer.status_code == 429:
            assert int(answer["Retry-After"]) > 0
            assert answer.json()["code"] == "mfa_rate_limited"
            break
        _problem(answer, 401, "mfa_invalid_code")
    assert statuses[-1] == 429, statuses
    # Even the right code waits its turn.
    right = api.call("post", "auth/second-factor", {"code": pyotp.TOTP(secret).now()})
    assert right.status_code == 429


def test_a_second_factor_answer_without_a_pending_login_is_refused(api: Api) -> None:
    _problem(api.call("post", "auth/second-factor", {"code": "123456"}), 403, "mfa_not_pending")


# -- re-authentication ------------------------------------------------------------------------


def _age_app_proof(seconds: int = 3600) -> None:
    row = UserSession.objects.get(kind=UserSession.APP)
    row.data[AUTHENTICATED_AT_SESSION_KEY]["at"] -= seconds
    row.save()


def test_an_account_change_on_a_stale_session_asks_for_a_proof_then_goes_through(
    totp_user: tuple[Any, str, list[str]], password: str
) -> None:
    user, secret, codes = totp_user
    app = Api("app")
    app.login(user.email, password)
    app.call("post", "auth/second-factor", {"code": codes[1]})
    _age_app_proof()
    code = pyotp.TOTP(secret).at(time.time() + 30)
    refused = app.call("delete", "account/totp", {"code": code})
    _problem(refused, 401, "reauthentication_required")
    user.refresh_from_db()
    assert user.mfa_enabled
    wrong = app.call("post", "auth/reauthenticate", {"password": "not it"})
    assert wrong.status_code in (401, 422) and wrong.json()["code"] == "reauthentication_failed"
    proved = app.call("post", "auth/reauthenticate", {"password": password})
    assert proved.status_code == 200, proved.content
    assert proved.json()["recently_authenticated"] is True
    mail.outbox.clear()
    off = app.call("delete", "account/totp", {"code": code})
    assert off.status_code == 200, off.content
    user.refresh_from_db()
    assert not user.mfa_enabled
    # The same security notice the page sends (on in the tests' settings or not, never 500).
    assert all(user.email in m.to for m in mail.outbox)


# -- logout -----------------------------------------------------------------------------------


def test_logout_ends_the_session_and_an_app_token_is_dead_after_it(
    api: Api, user: Any, password: str
) -> None:
    api.login(user.email, password)
    held = api.token
    out = api.call("delete", "session")
    assert out.status_code == 200
    assert out.json()["status"] == "anonymous"
    if api.kind == "app":
        assert not UserSession.objects.filter(kind=UserSession.APP).exists()
        api.token = held  # a copy of the token from before the logout
        _problem(api.call("get", "account"), 401, "not_authenticated")
    else:
        assert api.call("get", "session").json()["status"] == "anonymous"


def test_logout_everywhere_ends_the_app_sessions_of_the_account(user: Any, password: str) -> None:
    phone, tablet = Api("app"), Api("app", "203.0.113.21")
    phone.login(user.email, password)
    tablet.login(user.email, password)
    assert tablet.call("get", "account").status_code == 200
    assert phone.call("delete", "session", {"everywhere": True}).status_code == 200
    _problem(tablet.call("get", "account"), 401, "not_authenticated")


# -- bad bodies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["{not json", "[1, 2]", '"a string"', "[" * 3000 + "]" * 3000],
    ids=["malformed", "array", "string", "deep"],
)
def test_a_body_that_is_no_json_object_is_400_problem_json(api: Api, body: str) -> None:
    answer = api.call("post", "auth/login", body)
    assert answer.status_code == 400, answer.content
    assert answer["Content-Type"] == "application/problem+json"


def test_a_form_encoded_login_is_refused_not_a_500(api: Api, user: Any, password: str) -> None:
    extra = {"HTTP_X_SESSION_TOKEN": ""} if api.kind == "app" else {}
    if api.kind == "browser":
        extra["HTTP_X_CSRF_TOKEN"] = csrf_cookie(api.client)
    answer = api.client.post(
        api.base + "auth/login", {"email": user.email, "password": password}, **extra
    )
    assert 400 <= answer.status_code < 500, answer.content
