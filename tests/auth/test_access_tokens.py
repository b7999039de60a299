"""Personal access tokens: made, stored hashed, accepted as bearer tokens (the suite's
checks, DRF, django-ninja), limited by scopes, revoked; and the tokens page."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client, RequestFactory, override_settings
from django.utils import timezone

from appframework import events
from appframework.auth.access_tokens import (
    LAST_USED_RESOLUTION,
    access_tokens,
    authenticate_access_token,
    create_access_token,
    revoke_access_token,
)
from appframework.auth.models import PersonalAccessToken
from appframework.auth.tokens import TokenManager, current_api_token_sync
from appframework.authorization import authorize_sync, has_scope_sync
from appframework.exceptions import ForbiddenException, NotFoundException, ValidationException
from tests.contrib_drf.conftest import dashboard_ability  # noqa: F401 (a fixture)

from .account_pages import HTML, URLCONF, post

pytestmark = pytest.mark.django_db

TOKENS = "/accounts/tokens/"


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}", "HTTP_ACCEPT": "application/json"}


# -- the module ------------------------------------------------------------------------------
def test_secret_is_shown_once_and_stored_hashed(user: Any) -> None:
    token, secret = create_access_token(user, "deploy", expires_in=7, scopes=["write", "read"])
    assert secret.startswith("afp_") and len(secret) > 40
    row = PersonalAccessToken.objects.get()
    assert row.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {row.name, row.prefix, row.token_hash}
    assert secret.startswith(row.prefix) and len(row.prefix) == 12
    assert row.name == "deploy" and row.scopes == ["read", "write"]
    assert row.expires_at is not None
    assert timedelta(days=6, hours=23) < row.expires_at - timezone.now() <= timedelta(days=7)
    assert authenticate_access_token(secret) == (user, token)


def test_unknown_scope_and_no_name_are_refused(user: Any) -> None:
    with pytest.raises(ValidationException):
        create_access_token(user, "x", scopes=["admin"])
    with pytest.raises(ValidationException):
        create_access_token(user, "  ")
    assert not PersonalAccessToken.objects.exists()


def test_last_use_is_written_at_most_once_a_minute(
    user: Any, django_assert_num_queries: Any
) -> None:
    token, secret = create_access_token(user, "busy")
    authenticate_access_token(secret)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    with django_assert_num_queries(1):  # the lookup only, no write
        authenticate_access_token(secret)
    token.refresh_from_db()
    assert token.last_used_at == first
    PersonalAccessToken.objects.update(last_used_at=first - LAST_USED_RESOLUTION)
    authenticate_access_token(secret)
    token.refresh_from_db()
    assert token.last_used_at > first - LAST_USED_RESOLUTION


def test_expired_revoked_inactive_and_wrong_are_refused(user: Any, other_user: Any) -> None:
    expired, old = create_access_token(user, "old")
    PersonalAccessToken.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert authenticate_access_token(old) is None
    token, secret = create_access_token(user, "live")
    # The right prefix, the wrong rest: not found by its hash.
    assert authenticate_access_token(secret[:12] + "x" * (len(secret) - 12)) is None
    assert authenticate_access_token("afp_") is None
    assert authenticate_access_token("afp_" + "a" * 5000) is None
    with pytest.raises(NotFoundException):
        revoke_access_token(other_user, token.pk)  # not theirs
    revoke_access_token(user, token.pk)
    assert authenticate_access_token(secret) is None
    assert list(access_tokens(user)) == [expired]
    _row, third = create_access_token(user, "third")
    user.is_active = False
    user.save()
    assert authenticate_access_token(third) is None


def test_signals(user: Any, django_capture_on_commit_callbacks: Any) -> None:
    seen: list[tuple[str, Any]] = []

    def made(**kwargs: Any) -> None:
        seen.append(("created", kwargs["token"]))

    def revoked(**kwargs: Any) -> None:
        seen.append(("revoked", kwargs["token"]))

    events.access_token_created.connect(made)
    events.access_token_revoked.connect(revoked)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            token, _secret = create_access_token(user, "x")
            revoke_access_token(user, token.pk)
    finally:
        events.access_token_created.disconnect(made)
        events.access_token_revoked.disconnect(revoked)
    assert seen == [("created", token), ("revoked", token)]


def test_password_reset_revokes_them_and_password_change_does_not(user: Any) -> None:
    from appframework.auth.password_flows import change_password, reset_password

    _token, secret = create_access_token(user, "x")
    request = RequestFactory().post("/")
    from importlib import import_module

    from django.conf import settings

    request.session = import_module(settings.SESSION_ENGINE).SessionStore()  # type: ignore[attr-defined]
    request.user = user
    change_password(request, user, "another-long-passphrase-1")
    assert authenticate_access_token(secret) is not None
    reset_password(request, user, "yet-another-passphrase-2")
    assert authenticate_access_token(secret) is None


# -- bearer authentication -----------------------------------------------------------------
def test_token_manager_accepts_them_and_signed_tokens_still_work(user: Any) -> None:
    manager = TokenManager()
    token, secret = create_access_token(user, "x", scopes=["read"])
    verified = manager.authenticate_sync(secret)
    assert verified is not None and verified.user == user and verified.access_token == token
    assert verified.scopes == frozenset({"read"}) and str(verified) == secret
    signed = manager.authenticate_sync(manager.issue(user))
    assert signed is not None and signed.scopes is None and signed.access_token is None
    assert manager.revoke(secret) and manager.authenticate_sync(secret) is None


@pytest.mark.django_db(transaction=True)
async def test_async_authentication(user: Any) -> None:
    from asgiref.sync import sync_to_async

    _token, secret = await sync_to_async(create_access_token)(user, "x")
    verified = await TokenManager().authenticate(secret)
    assert verified is not None and verified.user.pk == user.pk


def test_demo_apis_accept_a_token_and_refuse_a_revoked_one(user: Any) -> None:
    token, secret = create_access_token(user, "x")
    assert Client().get("/api/drf/posts/", **bearer(secret)).status_code == 200
    revoke_access_token(user, token.pk)
    answer = Client().get("/api/drf/posts/", **bearer(secret))
    assert answer.status_code == 401
    assert answer["Content-Type"] == "application/problem+json"
    assert answer["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.urls("tests.contrib_drf.urls")
@pytest.mark.usefixtures("dashboard_ability")
def test_drf_request_auth_is_the_token(user: Any) -> None:
    user.is_staff = True
    user.save()
    _token, secret = create_access_token(user, "x", expires_in=3)
    answer = Client().get("/t/dashboard", **bearer(secret))
    assert answer.status_code == 200, answer.content
    assert answer.json()["auth"] == {"type": "ApiToken", "key": secret, "token_id": None}


@pytest.mark.urls("tests.contrib_ninja.urls")
def test_ninja_bearer_accepts_a_token_and_refuses_expired_and_wrong(user: Any) -> None:
    token, secret = create_access_token(user, "x")
    answer = Client().get("/t/me", **bearer(secret))
    assert answer.status_code == 200 and answer.json()["email"] == user.email
    PersonalAccessToken.objects.filter(pk=token.pk).update(expires_at=timezone.now())
    for value in (secret, secret[:-3] + "abc"):
        refused = Client().get("/t/me", **bearer(value))
        assert refused.status_code == 401
        assert refused["Content-Type"] == "application/problem+json"
        assert refused["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.usefixtures("dashboard_ability")
def test_scopes_are_checked_through_the_guard(user: Any) -> None:
    user.is_staff = True
    user.save()
    _limited, read_only = create_access_token(user, "ro", scopes=["read"])
    _open, everything = create_access_token(user, "all")
    factory = RequestFactory()

    def request(secret: str) -> Any:
        return factory.get("/", HTTP_AUTHORIZATION=f"Bearer {secret}")

    assert has_scope_sync(request(read_only), "read")
    assert not has_scope_sync(request(read_only), "write")
    assert has_scope_sync(request(everything), "write")  # no scopes: not limited
    signed = TokenManager().issue(user)
    assert has_scope_sync(request(signed), "write")
    assert authorize_sync(request(read_only), "see-dashboard", scope="read") == user
    with pytest.raises(ForbiddenException) as refused:
        authorize_sync(request(read_only), "see-dashboard", scope="write")
    assert refused.value.code == "insufficient_scope"
    assert current_api_token_sync(request(read_only)) is not None


# -- the page ------------------------------------------------------------------------------
def _sign_in(user: Any, password: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    answer = post(client, "/accounts/login/", {"email": user.email, "password": password})
    assert answer.status_code == 302, answer.content
    return client


@pytest.mark.urls(URLCONF)
def test_page_makes_shows_once_lists_and_revokes(user: Any, password: str) -> None:
    client = _sign_in(user, password)
    assert client.get(TOKENS, **HTML).status_code == 200
    made = post(client, TOKENS, {"name": "deploy", "expires_in_days": "30", "scopes": "read"})
    assert made.status_code == 201, made.content
    page = made.content.decode()
    secret = re.search(r"data-token-secret>(afp_[\w-]+)<", page)
    assert secret is not None
    token = PersonalAccessToken.objects.get()
    assert token.scopes == ["read"] and token.prefix in page
    later = client.get(TOKENS, **HTML).content.decode()
    assert secret.group(1) not in later and "deploy" in later and token.prefix in later
    gone = post(client, f"/accounts/tokens/{token.pk}/revoke/", {})
    assert gone.status_code == 302 and gone["Location"] == TOKENS
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert "revoked" in client.get(TOKENS, **HTML).content.decode()


@pytest.mark.urls(URLCONF)
def test_page_refuses_others_tokens_and_bad_input(
    user: Any, password: str, other_user: Any
) -> None:
    client = _sign_in(user, password)
    theirs, _secret = create_access_token(other_user, "theirs")
    assert post(client, f"/accounts/tokens/{theirs.pk}/revoke/", {}).status_code == 404
    assert post(client, TOKENS, {"name": "", "expires_in_days": "400"}).status_code == 422
    assert not PersonalAccessToken.objects.filter(user=user).exists()


@pytest.mark.urls(URLCONF)
def test_page_needs_a_recent_proof_and_csrf(user: Any, password: str) -> None:
    client = _sign_in(user, password)
    # Without the CSRF token the POST is refused.
    assert client.post(TOKENS, {"name": "x"}, **HTML).status_code == 403
    with override_settings(APPFRAMEWORK={"AUTH": {"REAUTHENTICATION_TIMEOUT": -1}}):
        assert client.get(TOKENS, **HTML).status_code == 200  # looking is no change
        answer = post(client, TOKENS, {"name": "x"})
        assert answer.status_code == 302
        assert answer["Location"].startswith("/accounts/reauthenticate/?next=")
        token, _secret = create_access_token(user, "y")
        revoke = post(client, f"/accounts/tokens/{token.pk}/revoke/", {})
        assert revoke.status_code == 302 and "/accounts/reauthenticate/" in revoke["Location"]
    assert PersonalAccessToken.objects.filter(revoked_at__isnull=True).count() == 1


@pytest.mark.urls(URLCONF)
def test_page_sends_the_signed_out_to_sign_in() -> None:
    answer = Client().get(TOKENS, **HTML)
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
