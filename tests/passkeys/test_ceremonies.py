"""Registration and passwordless sign-in with a software authenticator, and every way
an answer is refused: wrong origin, wrong RP id, a replayed or foreign or expired
challenge, a counter going backwards, no user verification, another user's or a
removed credential, too many tries, and a cross-site POST (login CSRF)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client, override_settings

from appframework.auth import current_user_sync
from appframework.conf import app_settings
from appframework.events import passkey_added
from appframework.exceptions import BadRequestException
from appframework.passkeys import ceremonies
from appframework.passkeys.models import Passkey
from testproject.blog.models import User
from tests.conftest import login_client

from .authenticator import SoftAuthenticator, b64url
from .conftest import JSON, add_passkey, code_of, options, passwordless

pytestmark = pytest.mark.django_db


def signed_in(client: Client) -> Any:
    from django.http import HttpRequest

    request = HttpRequest()
    request.session = client.session
    request.COOKIES = {k: v.value for k, v in client.cookies.items()}
    return current_user_sync(request)


# -- registration --------------------------------------------------------------------------
def test_registration_stores_the_credential_without_secrets_in_the_page(
    user: Any, authenticator: SoftAuthenticator
) -> None:
    client = login_client(Client(), user)
    opts = options(client, "register")
    assert opts["rp"] == {"id": "testserver", "name": "appframework demo"}
    assert opts["authenticatorSelection"]["residentKey"] == "required"
    assert opts["user"]["name"] == "alice@example.com"
    # The handle is random, never the primary key or the address.
    assert opts["user"]["id"] not in (b64url(str(user.pk).encode()), b64url(b"alice@example.com"))
    credential = authenticator.create(opts)
    response = client.post("/account/passkeys/add", {"credential": credential, "name": "Laptop"})
    assert (response.status_code, response["Location"]) == (302, "/account/passkeys")
    passkey = Passkey.objects.get()
    assert (passkey.user, passkey.name, passkey.credential_id) == (user, "Laptop", authenticator.id)
    assert bytes(passkey.public_key) == authenticator.cose_key()
    assert passkey.transports == ["internal", "hybrid"]
    assert passkey.aaguid == "00000000-0000-0000-0000-000000000000"
    assert passkey.last_used_at is None
    page = client.get(response["Location"], HTTP_ACCEPT="text/html").content.decode()
    assert "Passkey “Laptop” added." in page
    assert "Laptop" in page and "never" in page
    assert b64url(bytes(passkey.public_key)) not in page
    # The second passkey of the account carries the same handle; the first is excluded.
    second = options(client, "register")
    assert second["user"]["id"] == opts["user"]["id"] == passkey.user_handle
    assert [c["id"] for c in second["excludeCredentials"]] == [authenticator.id]


def test_registration_needs_a_signed_in_user(db: Any, client: Client) -> None:
    assert code_of(client.post("/passkeys/options", {"kind": "register"}, **JSON)) == (
        "not_authenticated"
    )
    page = client.get("/account/passkeys", HTTP_ACCEPT="text/html")
    assert page["Location"].startswith("/login?next=")


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"origin": "https://evil.example"}, "passkey_origin"),
        ({"rp_id": "evil.example"}, "passkey_invalid"),
        ({"challenge": b64url(b"x" * 32)}, "passkey_challenge"),
    ],
)
def test_registration_refusals(
    user: Any, authenticator: SoftAuthenticator, answer: dict[str, Any], code: str
) -> None:
    client = login_client(Client(), user)
    credential = authenticator.create(options(client, "register"), **answer)
    response = client.post("/account/passkeys/add", {"credential": credential}, **JSON)
    assert code_of(response) == code
    assert not Passkey.objects.exists()


def test_a_registration_answer_is_spent_once_and_a_credential_registered_once(
    user: Any, other_user: Any, authenticator: SoftAuthenticator
) -> None:
    client = login_client(Client(), user)
    credential = authenticator.create(options(client, "register"))
    data = {"credential": credential}
    assert client.post("/account/passkeys/add", data).status_code == 302
    assert code_of(client.post("/account/passkeys/add", data, **JSON)) == "passkey_replayed"
    # The same authenticator credential offered to another account.
    bob = login_client(Client(), other_user)
    again = authenticator.create(options(bob, "register"))
    response = bob.post("/account/passkeys/add", {"credential": again}, **JSON)
    assert code_of(response) == "passkey_exists"
    assert Passkey.objects.get().user == user


def test_a_malformed_answer_is_400(user: Any) -> None:
    client = login_client(Client(), user)
    for junk in ("", "{", json.dumps({"id": "x"}), json.dumps([1])):
        response = client.post("/account/passkeys/add", {"credential": junk}, **JSON)
        assert (response.status_code, code_of(response)) == (400, "passkey_malformed")
    response = passwordless_raw(Client(), "not json")
    assert (response.status_code, code_of(response)) == (400, "passkey_malformed")


def passwordless_raw(client: Client, credential: str) -> Any:
    return client.post("/login/passkey", {"credential": credential}, **JSON)


def test_the_passkey_added_event_is_sent_after_commit_and_fires_the_webhook(
    user: Any,
    authenticator: SoftAuthenticator,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from appframework_webhooks import manager

    fired: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        manager,
        "fire_webhook",
        lambda request, event, data: fired.append((event, data)),
    )
    seen: list[Any] = []

    def receiver(sender: Any, user: Any, passkey: Any, request: Any, **kwargs: Any) -> None:
        seen.append((user, passkey, request is not None))

    passkey_added.connect(receiver, dispatch_uid="tests.passkeys.added")
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            passkey = add_passkey(login_client(Client(), user), authenticator)
            assert fired == []  # not before the commit
    finally:
        passkey_added.disconnect(dispatch_uid="tests.passkeys.added")
    assert len(callbacks) == 1
    assert seen == [(user, passkey, True)]
    assert fired == [("user.passkey_added", {"user_id": user.pk, "passkey_id": passkey.pk})]


# -- passwordless sign-in --------------------------------------------------------------------
def test_passwordless_sign_in_is_both_factors(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    from appframework.mfa import pending_user_id  # noqa: F401 - the challenge stays unused
    from tests.conftest import enable_totp

    enable_totp(user)  # TOTP on too: a passkey sign-in is not asked for the code
    client = Client()
    opts = options(client, "login")
    assert opts["userVerification"] == "required"
    assert opts["allowCredentials"] == [] and opts["rpId"] == "testserver"
    response = client.post(
        "/login/passkey", {"credential": authenticator.get(opts), "next": "/blog"}
    )
    assert (response.status_code, response["Location"]) == (302, "/blog")
    assert signed_in(client) == user
    alice_key.refresh_from_db()
    assert alice_key.sign_count == 1 and alice_key.last_used_at is not None


def test_an_offsite_next_is_not_followed(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = Client()
    credential = authenticator.get(options(client, "login"))
    response = client.post(
        "/login/passkey", {"credential": credential, "next": "https://evil.example/"}
    )
    assert response["Location"] == "/"


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ({"origin": "https://evil.example"}, "passkey_origin"),
        ({"origin": "http://testserver:8000"}, "passkey_origin"),
        ({"rp_id": "evil.example"}, "passkey_rp_id"),
        ({"uv": False}, "passkey_user_verification"),
        ({"challenge": b64url(b"y" * 32)}, "passkey_challenge"),
        ({"kind": "webauthn.create"}, "passkey_malformed"),
        ({"user_handle": b"someone else"}, "passkey_unknown"),
    ],
)
def test_passwordless_refusals(
    alice_key: Passkey, authenticator: SoftAuthenticator, answer: dict[str, Any], code: str
) -> None:
    client = Client()
    response = passwordless(client, authenticator, **answer)
    assert code_of(response) == code
    assert response.status_code in (400, 403)
    assert signed_in(client) is None


def test_a_bad_signature_is_refused(alice_key: Passkey, authenticator: SoftAuthenticator) -> None:
    client = Client()
    answer = json.loads(authenticator.get(options(client, "login")))
    answer["response"]["signature"] = b64url(b"\x30\x06\x02\x01\x01\x02\x01\x01")
    response = client.post("/login/passkey", {"credential": json.dumps(answer)}, **JSON)
    assert (response.status_code, code_of(response)) == (403, "passkey_invalid")


def test_a_replayed_answer_is_refused_even_with_the_cookie_kept_from_before(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = Client()
    credential = authenticator.get(options(client, "login"))
    kept = {k: v.value for k, v in client.cookies.items()}
    assert client.post("/login/passkey", {"credential": credential}).status_code == 302
    again = client.post("/login/passkey", {"credential": credential}, **JSON)
    assert code_of(again) == "passkey_replayed"
    # A second browser holding the session cookie from before the sign-in.
    copy = Client()
    for name, value in kept.items():
        copy.cookies[name] = value
    response = copy.post("/login/passkey", {"credential": credential}, **JSON)
    assert code_of(response) == "passkey_replayed"
    assert signed_in(copy) is None


def test_a_challenge_of_another_session_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    asking, answering = Client(), Client()
    options(answering, "login")  # a session of its own, with its own challenge
    credential = authenticator.get(options(asking, "login"))
    response = answering.post("/login/passkey", {"credential": credential}, **JSON)
    assert code_of(response) == "passkey_challenge"
    assert signed_in(answering) is None


def test_a_challenge_of_another_ceremony_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    client = login_client(Client(), user)
    credential = authenticator.get(options(client, "confirm"))
    response = client.post("/login/passkey", {"credential": credential}, **JSON)
    assert code_of(response) == "passkey_challenge"


def test_an_expired_challenge_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client()
    credential = authenticator.get(options(client, "login"))
    timeout = int(app_settings.PASSKEYS.CHALLENGE_TIMEOUT)
    monkeypatch.setattr(ceremonies._STORE, "clock", lambda: time.time() + timeout + 1)
    response = client.post("/login/passkey", {"credential": credential}, **JSON)
    assert code_of(response) == "passkey_challenge"


@pytest.mark.parametrize("count", [3, 5])
def test_a_counter_that_does_not_move_forward_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator, count: int
) -> None:
    assert passwordless(Client(), authenticator, sign_count=5).status_code == 302
    response = passwordless(Client(), authenticator, sign_count=count)
    assert (response.status_code, code_of(response)) == (403, "passkey_sign_count")
    alice_key.refresh_from_db()
    assert alice_key.sign_count == 5


def test_authenticators_without_a_counter_keep_working(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    for _ in range(2):
        assert passwordless(Client(), authenticator, sign_count=0).status_code == 302


def test_an_unknown_or_removed_credential_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    stranger = SoftAuthenticator()
    stranger.user_handle = authenticator.user_handle
    stranger.rp_id = "testserver"
    assert code_of(passwordless(Client(), stranger)) == "passkey_unknown"
    alice_key.delete()
    assert code_of(passwordless(Client(), authenticator)) == "passkey_unknown"


def test_a_deactivated_account_is_refused(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    User.objects.filter(pk=user.pk).update(is_active=False)
    response = passwordless(Client(), authenticator)
    assert (response.status_code, code_of(response)) == (403, "account_disabled")


def test_browsers_get_the_error_page(alice_key: Passkey, authenticator: SoftAuthenticator) -> None:
    client = Client()
    credential = authenticator.get(options(client, "login"), uv=False)
    response = client.post("/login/passkey", {"credential": credential}, HTTP_ACCEPT="text/html")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert "did not verify you" in response.content.decode()


def test_passwordless_sign_in_is_rate_limited_per_client_address(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    attempts = int(app_settings.PASSKEYS.LOGIN_ATTEMPTS)
    client = Client()
    for _ in range(attempts):
        assert code_of(passwordless(client, authenticator, uv=False)) == "passkey_user_verification"
    blocked = passwordless(client, authenticator)  # the right answer, and still refused
    assert (blocked.status_code, code_of(blocked)) == (429, "passkey_rate_limited")
    assert int(blocked["Retry-After"]) >= 1
    # Another address is counted on its own.
    other = Client(REMOTE_ADDR="10.0.0.9")
    assert passwordless(other, authenticator).status_code == 302


def test_successful_sign_ins_do_not_use_up_the_budget(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    with override_settings(APPFRAMEWORK={"PASSKEYS": {"LOGIN_ATTEMPTS": 2}}):
        for _ in range(4):
            assert passwordless(Client(), authenticator).status_code == 302


def test_login_csrf_the_options_and_the_sign_in_need_the_token(
    alice_key: Passkey, authenticator: SoftAuthenticator, csrf_client: Client
) -> None:
    # A cross-site form: no token, and a foreign Origin.
    response = csrf_client.post("/passkeys/options", {"kind": "login"}, **JSON)
    assert response.status_code == 403
    page = csrf_client.get("/login")
    assert b'data-passkey="login"' in page.content
    assert b'autocomplete="username webauthn"' in page.content
    token = page.context["csrf_token"]
    opts = csrf_client.post(
        "/passkeys/options", {"kind": "login"}, HTTP_X_CSRF_TOKEN=str(token), **JSON
    ).json()["publicKey"]
    credential = authenticator.get(opts)
    refused = csrf_client.post("/login/passkey", {"credential": credential}, **JSON)
    assert refused.status_code == 403 and code_of(refused).startswith("csrf_")
    foreign = csrf_client.post(
        "/login/passkey",
        {"credential": credential, "_token": str(token)},
        HTTP_ORIGIN="https://evil.example",
        **JSON,
    )
    assert foreign.status_code == 403 and code_of(foreign).startswith("csrf_")
    ok = csrf_client.post("/login/passkey", {"credential": credential, "_token": str(token)})
    assert ok.status_code == 302
    assert signed_in(csrf_client) == alice_key.user


def test_unknown_ceremony_kind_and_get_are_refused(db: Any, client: Client) -> None:
    assert code_of(client.post("/passkeys/options", {"kind": "x"}, **JSON)) == "invalid_action"
    assert client.get("/passkeys/options", **JSON).status_code == 405
    assert client.get("/login/passkey", **JSON).status_code == 405


def test_the_relying_party_comes_from_settings(user: Any, authenticator: SoftAuthenticator) -> None:
    passkeys = {
        "RP_ID": "example.com",
        "RP_NAME": "Example",
        "ORIGINS": ["https://www.example.com"],
    }
    with override_settings(
        APPFRAMEWORK={"PASSKEYS": passkeys}, ALLOWED_HOSTS=["www.example.com", "testserver"]
    ):
        client = login_client(Client(), user)
        opts = options(client, "register")
        assert opts["rp"] == {"id": "example.com", "name": "Example"}
        refused = authenticator.create(opts)  # answered on http://testserver
        response = client.post("/account/passkeys/add", {"credential": refused}, **JSON)
        assert code_of(response) == "passkey_origin"
        credential = authenticator.create(
            options(client, "register"), origin="https://www.example.com"
        )
        assert client.post("/account/passkeys/add", {"credential": credential}).status_code == 302
        signing = Client()
        answer = authenticator.get(options(signing, "login"), origin="https://www.example.com")
        assert signing.post("/login/passkey", {"credential": answer}).status_code == 302


@pytest.mark.parametrize(
    "client_data",
    [b"\xff\xfe{\x00}\x00", b'{"challenge": "\xe9"}'],
    ids=["utf-16", "latin-1"],
)
def test_client_data_that_is_not_utf8_is_malformed(
    authenticator: SoftAuthenticator, client_data: bytes
) -> None:
    answer = json.loads(authenticator.get({"challenge": b64url(b"c" * 32), "rpId": "testserver"}))
    answer["response"]["clientDataJSON"] = b64url(client_data)
    with pytest.raises(BadRequestException) as raised:
        ceremonies.read_assertion(json.dumps(answer))
    assert raised.value.code == "passkey_malformed"
