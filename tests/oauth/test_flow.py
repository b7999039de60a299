"""The whole OAuth sign-in against a real OpenID Connect provider.

The relying party is the test project (Django's test Client, host ``testserver``); the
provider is the local django-oauth-toolkit server (tests/oauth/peer.py). Nothing between
them is stubbed: the authorization code travels through the provider's login, the code
is exchanged over HTTP with the client secret, and the identity comes from the
provider's userinfo endpoint.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import string
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from django.conf import settings
from django.test import Client, override_settings

from appframework.events import user_registered
from appframework.oauth import OAuthProvider, generic_oidc
from appframework.oauth.models import OAuthIdentity
from appframework.oauth.state import SESSION_KEY
from appframework.security.tokens import session_cookie_name
from testproject.blog.models import User
from tests.oauth.conftest import (
    JSON,
    REDIRECT_URI,
    authorize_at_provider,
    identities,
    local_path,
    oauth_settings,
    problem,
    query_of,
    session_user_id,
    sign_in,
    signed_in_email,
    start,
)
from tests.oauth.peer import POST_ONLY_CLIENT_ID, POST_ONLY_CLIENT_SECRET, LocalIdp

pytestmark = pytest.mark.django_db

ALICE = "alice@example.test"


@pytest.fixture
def registrations() -> Iterator[list[Any]]:
    """Every ``user_registered`` sent, as (user, request)."""
    sent: list[Any] = []

    def receiver(sender: Any, user: Any, request: Any = None, **kwargs: Any) -> None:
        sent.append((user, request))

    user_registered.connect(receiver, dispatch_uid="tests.oauth.registrations")
    try:
        yield sent
    finally:
        user_registered.disconnect(dispatch_uid="tests.oauth.registrations")


def _record_requests(
    monkeypatch: pytest.MonkeyPatch, keep: Callable[[str, str], bool]
) -> list[dict[str, Any]]:
    """What each request ``keep(method, url)`` selects carried on the wire (the real
    request is sent)."""
    seen: list[dict[str, Any]] = []
    original = requests.Session.request

    def spy(self: requests.Session, method: str, url: str, **kwargs: Any) -> Any:
        if keep(method, url):
            seen.append(
                {"url": url, "data": dict(kwargs.get("data") or {}), "auth": kwargs.get("auth")}
            )
        return original(self, method, url, **kwargs)

    monkeypatch.setattr(requests.Session, "request", spy)
    return seen


@pytest.fixture
def token_requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each POST to a token endpoint carried on the wire."""
    return _record_requests(monkeypatch, lambda m, url: m == "POST" and url.endswith("/token/"))


@pytest.fixture
def userinfo_requests(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each GET of a userinfo endpoint."""
    return _record_requests(monkeypatch, lambda m, url: m == "GET" and url.endswith("/userinfo/"))


def test_redirect_sends_the_browser_to_the_provider_with_the_authorization_request(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()

    response = client.get("/auth/local/redirect?next=/posts")

    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(oauth_local.authorize_url + "?")
    params = query_of(location)
    state = params.pop("state")
    challenge = params.pop("code_challenge")
    nonce = params.pop("nonce")
    assert params == {
        "response_type": "code",
        "client_id": oauth_local.client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email profile",
        "code_challenge_method": "S256",
    }
    assert len(state) >= 43  # 32 random bytes, base64url
    entry = client.session[SESSION_KEY][state]
    assert entry["n"] == "/posts"
    # The verifier stays here; only its S256 hash goes through the browser.
    assert challenge == s256(entry["v"])
    assert entry["v"] not in location
    assert entry["o"] == nonce
    assert "no-cache" in response["Cache-Control"]


def s256(verifier: str) -> str:
    """RFC 7636 S256, computed here rather than by the code under test."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


VERIFIER_CHARACTERS = set(string.ascii_letters + string.digits + "-._~")


def test_each_authorization_request_has_a_fresh_high_entropy_verifier_and_nonce(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()
    urls = [start(client) for _ in range(3)]
    entries = [client.session[SESSION_KEY][query_of(url)["state"]] for url in urls]

    verifiers = [entry["v"] for entry in entries]
    nonces = [query_of(url)["nonce"] for url in urls]
    assert len(set(verifiers)) == 3
    assert len(set(nonces)) == 3
    assert len({query_of(url)["code_challenge"] for url in urls}) == 3
    for verifier in verifiers:
        # RFC 7636: 43 to 128 unreserved characters; 32 random bytes give 43.
        assert 43 <= len(verifier) <= 128
        assert set(verifier) <= VERIFIER_CHARACTERS
    assert all(len(nonce) >= 43 for nonce in nonces)
    # A second browser gets its own.
    other = query_of(start(Client()))
    assert other["code_challenge"] not in {query_of(url)["code_challenge"] for url in urls}


def test_the_token_request_carries_the_verifier_stored_with_the_state(
    oauth_local: OAuthProvider, token_requests: list[dict[str, Any]]
) -> None:
    client = Client()
    authorize_url = start(client)
    state = query_of(authorize_url)["state"]
    verifier = client.session[SESSION_KEY][state]["v"]
    callback = authorize_at_provider(authorize_url)

    response = client.get(local_path(callback))

    assert response.status_code == 302, response.content
    (sent,) = token_requests
    assert sent["data"]["code_verifier"] == verifier
    assert sent["data"]["code"] == query_of(callback)["code"]
    # Spent with the state: the verifier cannot serve a second callback.
    assert state not in client.session[SESSION_KEY]


def test_a_scope_without_openid_sends_no_nonce(local_provider: OAuthProvider) -> None:
    provider = dataclasses.replace(local_provider, scope="email profile")
    client = Client()
    with oauth_settings([provider]):
        params = query_of(start(client))

    assert "nonce" not in params
    assert "o" not in client.session[SESSION_KEY][params["state"]]
    assert params["code_challenge_method"] == "S256"  # PKCE is not tied to OIDC


def test_with_pkce_off_no_challenge_is_sent_and_the_provider_that_requires_it_refuses(
    local_provider: OAuthProvider, token_requests: list[dict[str, Any]]
) -> None:
    # DOT leaves `iss` out of its error redirects: with require_iss the callback would
    # be refused by the issuer check before its `error` is read.
    provider = dataclasses.replace(local_provider, pkce=False, require_iss=False)
    client = Client()
    with oauth_settings([provider]):
        authorize_url = start(client)
        params = query_of(authorize_url)
        assert "code_challenge" not in params and "code_challenge_method" not in params
        assert "v" not in client.session[SESSION_KEY][params["state"]]
        callback = authorize_at_provider(authorize_url)
        response = client.get(local_path(callback), HTTP_ACCEPT="application/json")

    # The local provider requires PKCE: it sends the browser back with an error.
    assert query_of(callback)["error"] == "invalid_request"
    assert response.status_code == 400
    assert response.json()["code"] == "oauth_error"
    assert "Code challenge required." in response.json()["detail"]
    assert session_user_id(client) is None
    assert token_requests == []


def test_the_nonce_the_provider_puts_in_the_id_token_must_be_the_one_stored(
    oauth_local: OAuthProvider,
    token_requests: list[dict[str, Any]],
    userinfo_requests: list[dict[str, Any]],
) -> None:
    # The browser's session says this sign-in sent another nonce than the provider
    # received: the ID token for this code is then not this sign-in's.
    client = Client()
    authorize_url = start(client)
    state = query_of(authorize_url)["state"]
    callback = authorize_at_provider(authorize_url)
    session = client.session
    session[SESSION_KEY][state]["o"] = "a-nonce-the-provider-never-saw"
    session.save()
    client.cookies[session_cookie_name()] = session.session_key or ""
    assert client.session[SESSION_KEY][state]["o"] == "a-nonce-the-provider-never-saw"

    response = client.get(local_path(callback), HTTP_ACCEPT="application/json")

    assert response.status_code == 403
    assert response.json()["code"] == "oauth_nonce_mismatch"
    assert session_user_id(client) is None
    assert len(token_requests) == 1  # the code was exchanged, and its ID token read
    assert userinfo_requests == []  # nothing more is asked of the provider
    assert User.objects.count() == 0


def test_first_sign_in_creates_the_user_links_the_identity_and_signs_in(
    oauth_local: OAuthProvider, registrations: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    client = Client()

    with django_capture_on_commit_callbacks(execute=True):
        response = sign_in(client, next="/posts")
        assert registrations == []  # sent once the account is committed, not before

    assert response.status_code == 302
    assert response["Location"] == "/posts"
    user = User.objects.get(email=ALICE)
    assert user.name == "Alice Example"
    assert not user.has_usable_password()
    assert session_user_id(client) == str(user.pk)
    assert signed_in_email(client) == ALICE
    identity = OAuthIdentity.objects.get()
    assert (identity.provider, identity.provider_user_id, identity.user_id) == (
        "local",
        "alice",
        user.pk,
    )
    assert identity.email == ALICE
    assert [u.pk for u, _request in registrations] == [user.pk]
    assert registrations[0][1] is not None  # the callback's request


def test_a_second_sign_in_reuses_the_user_and_the_identity(
    oauth_local: OAuthProvider, registrations: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = sign_in(Client())
    assert first.status_code == 302
    user = User.objects.get(email=ALICE)

    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        second = sign_in(client, next="/posts")

    assert second.status_code == 302
    assert second["Location"] == "/posts"
    assert session_user_id(client) == str(user.pk)
    assert User.objects.count() == 1
    assert identities() == [("local", "alice", user.pk)]
    assert len(registrations) == 1


def test_an_existing_local_account_with_the_verified_email_is_linked(
    oauth_local: OAuthProvider, registrations: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    local = User.objects.create_user(ALICE, "a local password", name="Alice Local")
    client = Client()

    with django_capture_on_commit_callbacks(execute=True):
        response = sign_in(client)

    assert response.status_code == 302
    assert response["Location"] == "/"  # LOGIN_REDIRECT_URL: no next given
    assert session_user_id(client) == str(local.pk)
    assert identities() == [("local", "alice", local.pk)]
    assert User.objects.count() == 1
    local.refresh_from_db()
    assert local.name == "Alice Local"  # linking changes nothing of the account
    assert local.check_password("a local password")
    assert registrations == []


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_the_token_endpoint_authenticates_the_client_either_way(
    local_provider: OAuthProvider, token_requests: list[dict[str, Any]], method: str
) -> None:
    provider = dataclasses.replace(local_provider, token_auth_method=method)
    client = Client()
    with oauth_settings([provider]):
        response = sign_in(client)

    assert response.status_code == 302, response.content
    assert session_user_id(client) == str(User.objects.get(email=ALICE).pk)
    (sent,) = token_requests
    assert sent["data"]["grant_type"] == "authorization_code"
    assert sent["data"]["redirect_uri"] == REDIRECT_URI
    if method == "client_secret_basic":
        assert sent["auth"] == (provider.client_id, provider.client_secret)
        assert "client_secret" not in sent["data"]
    else:
        assert sent["auth"] is None
        assert sent["data"]["client_id"] == provider.client_id
        assert sent["data"]["client_secret"] == provider.client_secret


def post_only_client(local_idp: LocalIdp, **options: Any) -> OAuthProvider:
    """The local provider's client registered for ``client_secret_post`` only."""
    return generic_oidc(
        "local",
        POST_ONLY_CLIENT_ID,
        POST_ONLY_CLIENT_SECRET,
        redirect_uri=REDIRECT_URI,
        issuer=local_idp.issuer,
        **options,
    )


def test_a_client_registered_for_client_secret_post_signs_in_with_token_auth_method_post(
    local_idp: LocalIdp, token_requests: list[dict[str, Any]]
) -> None:
    provider = post_only_client(local_idp, token_auth_method="client_secret_post")
    client = Client()
    with oauth_settings([provider]):
        response = sign_in(client)

    assert response.status_code == 302, response.content
    assert session_user_id(client) == str(User.objects.get(email=ALICE).pk)
    (sent,) = token_requests
    assert sent["auth"] is None
    assert sent["data"]["client_id"] == POST_ONLY_CLIENT_ID
    assert sent["data"]["client_secret"] == POST_ONLY_CLIENT_SECRET


def test_a_client_registered_for_client_secret_post_is_refused_with_the_default_basic(
    local_idp: LocalIdp, token_requests: list[dict[str, Any]]
) -> None:
    # Discovery lists both methods, so the default is the OIDC one: this provider holds
    # the client to the one it registered, and the code exchange is refused.
    provider = post_only_client(local_idp)
    client = Client()
    with oauth_settings([provider]):
        response = sign_in(client, **JSON)

    assert provider.token_auth_method == "client_secret_basic"
    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "token exchange" in document["detail"] and "invalid_client" in document["detail"]
    assert session_user_id(client) is None
    (sent,) = token_requests
    assert sent["auth"] == (POST_ONLY_CLIENT_ID, POST_ONLY_CLIENT_SECRET)


def test_the_demo_signs_in_at_another_provider_set_by_its_environment(
    local_idp: LocalIdp, monkeypatch: pytest.MonkeyPatch, token_requests: list[dict[str, Any]]
) -> None:
    # docs/oauth.md, "The demo against your own provider": the demo's own PROVIDERS
    # (testproject/blog/sso.py) pointed at another client, one held to client_secret_post.
    assert settings.APPFRAMEWORK["OAUTH"]["PROVIDERS"] == "testproject.blog.sso.oauth_providers"
    monkeypatch.setenv("OAUTH_LOCAL_ISSUER", local_idp.issuer)
    monkeypatch.setenv("OAUTH_LOCAL_CLIENT_ID", POST_ONLY_CLIENT_ID)
    monkeypatch.setenv("OAUTH_LOCAL_CLIENT_SECRET", POST_ONLY_CLIENT_SECRET)
    monkeypatch.setenv("OAUTH_LOCAL_TOKEN_AUTH_METHOD", "client_secret_post")
    client = Client()
    # A settings change also drops the providers built from another environment.
    with override_settings(DEMO_BASE_URL="http://testserver"):
        response = sign_in(client)

    assert response.status_code == 302, response.content
    assert session_user_id(client) == str(User.objects.get(email=ALICE).pk)
    (sent,) = token_requests
    assert sent["auth"] is None
    assert sent["data"]["client_id"] == POST_ONLY_CLIENT_ID


def test_discovery_configures_the_provider_from_the_issuer(local_provider: OAuthProvider) -> None:
    issuer = local_provider.issuer
    assert issuer is not None and issuer.startswith("http://127.0.0.1:")
    assert local_provider.authorize_url == f"{issuer}/authorize/"
    assert local_provider.token_url == f"{issuer}/token/"
    assert local_provider.userinfo_url == f"{issuer}/userinfo/"
    # The provider advertises RFC 9207, client_secret_basic and S256.
    assert local_provider.require_iss is True
    assert local_provider.token_auth_method == "client_secret_basic"
    assert local_provider.pkce is True


def test_the_callback_carries_code_state_and_the_issuer(oauth_local: OAuthProvider) -> None:
    client = Client()
    authorize_url = start(client)

    callback = authorize_at_provider(authorize_url)

    params = query_of(callback)
    assert set(params) == {"code", "state", "iss"}
    assert params["state"] == query_of(authorize_url)["state"]
    assert params["iss"] == oauth_local.issuer
    assert local_path(callback).startswith("/auth/local/callback?")
