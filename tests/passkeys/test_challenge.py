"""A passkey as the second factor: the one challenge after a password, after single
sign-on (``login_or_challenge``, the OAuth callback's and the SAML ACS's last step)
and on the admin's login; the code and the recovery codes keep working beside it."""

from __future__ import annotations

from typing import Any

import pyotp
import pytest
from django.contrib.auth import authenticate
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.test import Client, RequestFactory

from appframework.auth.challenge import login_or_challenge
from appframework.auth.sso import finish_sso_login
from appframework.exceptions import TooManyRequestsException
from appframework.mfa import complete_challenge, pending_user_id
from appframework.passkeys import PasskeyRefused, authentication_options
from appframework.passkeys.models import Passkey
from testproject.blog.models import User
from tests.conftest import enable_totp, login_client

from .authenticator import SoftAuthenticator
from .conftest import JSON, add_passkey, code_of, options
from .test_ceremonies import signed_in

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


def password_step(client: Client, email: str = "alice@example.com") -> Any:
    return client.post("/login", {"email": email, "password": PASSWORD, "next": "/blog"})


def test_the_password_leads_to_the_passkey_challenge(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    client = Client()
    assert password_step(client)["Location"] == "/login/mfa"
    assert signed_in(client) is None and pending_user_id_of(client) == user.pk
    page = client.get("/login/mfa").content.decode()
    assert "Use your passkey" in page
    assert 'name="code"' not in page  # no TOTP: nothing to type
    opts = options(client, "challenge")
    assert [c["id"] for c in opts["allowCredentials"]] == [authenticator.id]
    assert opts["userVerification"] == "preferred"
    # Presence is enough for a second factor (the password was the first).
    response = client.post("/login/mfa", {"credential": authenticator.get(opts, uv=False)})
    assert (response.status_code, response["Location"]) == (302, "/blog")
    assert signed_in(client) == user


def pending_user_id_of(client: Client) -> Any:
    from django.http import HttpRequest

    request = HttpRequest()
    request.session = client.session
    return pending_user_id(request)


def test_passkey_first_code_as_fallback_and_recovery_codes_still_work(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    secret, codes = enable_totp(user)
    client = Client()
    password_step(client)
    page = client.get("/login/mfa").content.decode()
    assert page.index("Use your passkey") < page.index('name="code"')
    assert client.post("/login/mfa", {"code": codes[0]}).status_code == 302
    assert signed_in(client) == user
    other = Client()
    password_step(other)
    code = pyotp.TOTP(secret).now()
    response = other.post("/login/mfa", {"code": code})
    assert response.status_code in (302, 401)  # 401 when the confirming step was this one


def test_refusals_on_the_challenge_page_keep_the_pending_sign_in(
    alice_key: Passkey, authenticator: SoftAuthenticator, other_user: Any, user: Any
) -> None:
    bobs = SoftAuthenticator()
    add_passkey(login_client(Client(), other_user), bobs, "Bob's key")
    client = Client()
    password_step(client)
    # Bob's passkey answering Alice's challenge: not hers.
    response = client.post(
        "/login/mfa", {"credential": bobs.get(options(client, "challenge"))}, **JSON
    )
    assert (response.status_code, code_of(response)) == (403, "passkey_unknown")
    # Browsers get the page again, with the reason.
    assert authenticator.get(options(client, "challenge"), sign_count=0)  # a spent challenge
    page = client.post(
        "/login/mfa",
        {
            "credential": authenticator.get(
                options(client, "challenge"), origin="https://evil.example"
            )
        },
        HTTP_ACCEPT="text/html",
    )
    assert page.status_code == 403 and "comes from another site" in page.content.decode()
    assert "Use your passkey" in page.content.decode()
    assert signed_in(client) is None and pending_user_id_of(client) == user.pk
    ok = client.post("/login/mfa", {"credential": authenticator.get(options(client, "challenge"))})
    assert ok.status_code == 302 and signed_in(client) == user


def test_a_login_challenge_does_not_answer_the_second_factor(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = Client()
    password_step(client)
    credential = authenticator.get(options(client, "login"))
    response = client.post("/login/mfa", {"credential": credential}, **JSON)
    assert code_of(response) == "passkey_challenge"


def test_challenge_options_need_a_pending_sign_in(db: Any, client: Client) -> None:
    assert code_of(client.post("/passkeys/options", {"kind": "challenge"}, **JSON)) == (
        "mfa_not_pending"
    )


def test_passkey_tries_share_the_challenge_limit(
    alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = Client()
    password_step(client)
    for _ in range(5):
        bad = authenticator.get(options(client, "challenge"), origin="https://evil.example")
        assert code_of(client.post("/login/mfa", {"credential": bad}, **JSON)) == "passkey_origin"
    good = authenticator.get(options(client, "challenge"))
    response = client.post("/login/mfa", {"credential": good}, **JSON)
    assert (response.status_code, code_of(response)) == (429, "mfa_rate_limited")


def test_django_authenticate_refuses_a_password_alone(alice_key: Passkey, user: Any) -> None:
    assert authenticate(None, email="alice@example.com", password=PASSWORD) is None
    Passkey.objects.all().delete()
    assert authenticate(None, email="alice@example.com", password=PASSWORD) == user


def sso_request(user: Any = None) -> Any:
    request = RequestFactory().get("/auth/corp/callback")
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    return request


def test_single_sign_on_ends_in_the_same_challenge(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any, settings: Any
) -> None:
    request = sso_request()
    response = finish_sso_login(request, user, "/blog", mfa=True)
    assert response["Location"] == "/login/mfa"  # MFA["CHALLENGE_URL"]
    assert pending_user_id(request) == user.pk
    with pytest.raises(PasskeyRefused) as refused:
        complete_challenge(
            request,
            passkey=authenticator.get(
                authentication_options(request, "challenge", user), rp_id="x"
            ),
        )
    assert refused.value.code == "passkey_rp_id"
    opts = authentication_options(request, "challenge", user)
    assert complete_challenge(request, passkey=authenticator.get(opts)) == user
    assert pending_user_id(request) is None


def test_login_or_challenge_without_a_second_factor_signs_in(user: Any) -> None:
    request = sso_request()
    assert login_or_challenge(request, user) is True
    assert pending_user_id(request) is None


def test_a_complete_challenge_past_the_limit_raises_429(
    alice_key: Passkey, authenticator: SoftAuthenticator, user: Any
) -> None:
    request = sso_request()
    login_or_challenge(request, user)
    for _ in range(5):
        assert complete_challenge(request, "000000") is None
    with pytest.raises(TooManyRequestsException):
        complete_challenge(
            request, passkey=authenticator.get(authentication_options(request, "challenge", user))
        )


# -- the admin -----------------------------------------------------------------------------
@pytest.fixture
def staff(user: Any) -> Any:
    User.objects.filter(pk=user.pk).update(is_staff=True, is_superuser=True)
    user.refresh_from_db()
    return user


def test_the_admin_login_asks_for_the_passkey(
    staff: Any, alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "alice@example.com", "password": PASSWORD}
    )
    assert response["Location"] == "/admin/login/code/"
    page = client.get("/admin/login/code/").content.decode()
    assert "Use your passkey" in page and 'name="code"' not in page
    bad = authenticator.get(options(client, "challenge"), uv=True, origin="https://evil.example")
    refused = client.post("/admin/login/code/", {"credential": bad}, HTTP_ACCEPT="text/html")
    assert refused.status_code == 200 and "comes from another site" in refused.content.decode()
    good = authenticator.get(options(client, "challenge"))
    response = client.post("/admin/login/code/", {"credential": good})
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_admin_lists_passkeys_without_key_material(
    staff: Any, alice_key: Passkey, authenticator: SoftAuthenticator
) -> None:
    admin = login_client(Client(), staff)
    listing = admin.get("/admin/appframework_passkeys/passkey/")
    assert listing.status_code == 200 and "Laptop" in listing.content.decode()
    change = admin.get(f"/admin/appframework_passkeys/passkey/{alice_key.pk}/change/")
    page = change.content.decode()
    assert change.status_code == 200
    assert 'name="name"' in page
    for hidden in ("public_key", "user_handle", 'name="sign_count"', 'name="user"'):
        assert hidden not in page
    assert admin.get("/admin/appframework_passkeys/passkey/add/").status_code == 403
    admin.post(
        f"/admin/appframework_passkeys/passkey/{alice_key.pk}/change/",
        {"name": "Renamed", "public_key": "AAAA", "sign_count": "0"},
    )
    alice_key_after = Passkey.objects.get(pk=alice_key.pk)
    assert alice_key_after.name == "Renamed"
    assert bytes(alice_key_after.public_key) == authenticator.cose_key()
    assert alice_key_after.sign_count == alice_key.sign_count
