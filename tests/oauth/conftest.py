"""Fixtures of the OAuth login tests: the local OpenID Connect provider (one process for
the whole folder), the relying party's settings pointing at it, and the steps of a
sign-in as a browser takes them.

The relying party is the test project served by Django's test ``Client`` (host
``testserver``); the provider is ``python -m testproject.local_idp`` on 127.0.0.1
(tests/oauth/peer.py), reached over real HTTP by ``appframework.oauth.client``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.test import Client, override_settings

from appframework.oauth import OAuthProvider, generic_oidc
from appframework.oauth.client import ProviderClient, TokenResponse
from appframework.oauth.models import OAuthIdentity
from tests.oauth.peer import (
    PASSWORD,
    POST_ONLY_CLIENT_ID,
    POST_ONLY_CLIENT_SECRET,
    VERIFIED_USER,
    LocalIdp,
    ProviderBrowser,
    start_local_idp,
)

REDIRECT_URI = "http://testserver/auth/local/callback"
# A second provider name registered at the same provider (two providers giving the
# same subject ids: tests/oauth/test_attacks.py, O4).
OTHER_REDIRECT_URI = "http://testserver/auth/other/callback"
JSON = {"HTTP_ACCEPT": "application/json"}


# -- settings ---------------------------------------------------------------------------------
def oauth_settings(providers: Any, **oauth: Any) -> Any:
    """``override_settings`` of APPFRAMEWORK with its OAUTH section replaced (every other
    section, MFA.CHALLENGE_URL included, kept as the test settings have it)."""
    app = copy.deepcopy({k: v for k, v in settings.APPFRAMEWORK.items() if k != "OAUTH"})
    app["OAUTH"] = {"PROVIDERS": providers, **oauth}
    return override_settings(APPFRAMEWORK=app)


def app_settings_with(**sections: dict[str, Any]) -> Any:
    """``override_settings`` of APPFRAMEWORK with some keys of some sections changed."""
    app = copy.deepcopy(settings.APPFRAMEWORK)
    for name, values in sections.items():
        app[name] = {**app.get(name, {}), **values}
    return override_settings(APPFRAMEWORK=app)


# -- the provider -----------------------------------------------------------------------------
@pytest.fixture(scope="session")
def local_idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIdp]:
    """The local OpenID Connect provider, started once; a failure to start fails the
    tests that need it (never a skip). Besides its client, it has one that must send its
    secret as form fields (``POST_ONLY_CLIENT_ID``)."""
    idp = start_local_idp(
        tmp_path_factory.mktemp("oauth-local-idp"),
        [REDIRECT_URI, OTHER_REDIRECT_URI],
        post_only_clients=[(POST_ONLY_CLIENT_ID, POST_ONLY_CLIENT_SECRET)],
    )
    try:
        yield idp
    finally:
        idp.stop()


@pytest.fixture(scope="session")
def pkce_optional_idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIdp]:
    """A second local provider that accepts authorization requests without PKCE, as
    providers that predate it do: what a client sending none is exposed to shows there."""
    idp = start_local_idp(
        tmp_path_factory.mktemp("oauth-pkce-optional-idp"),
        [REDIRECT_URI, OTHER_REDIRECT_URI],
        pkce_optional=True,
    )
    try:
        yield idp
    finally:
        idp.stop()


@pytest.fixture(scope="session")
def local_provider(local_idp: LocalIdp) -> OAuthProvider:
    """``generic_oidc("local", ...)`` configured by discovery from the running provider."""
    return generic_oidc(
        "local",
        local_idp.client_id,
        local_idp.client_secret,
        redirect_uri=REDIRECT_URI,
        issuer=local_idp.issuer,
    )


@pytest.fixture
def oauth_local(local_provider: OAuthProvider) -> Iterator[OAuthProvider]:
    """APPFRAMEWORK["OAUTH"]["PROVIDERS"] = [the local provider]."""
    with oauth_settings([local_provider]):
        yield local_provider


@pytest.fixture
def exchange_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call of ``ProviderClient.exchange_code`` (the request to the token
    endpoint), recorded with its arguments (``code``, ``code_verifier``, ...); the real
    method still runs."""
    calls: list[dict[str, Any]] = []
    original = ProviderClient.exchange_code

    def spy(self: ProviderClient, token_url: str, **kwargs: Any) -> TokenResponse:
        calls.append({"token_url": token_url, **kwargs})
        return original(self, token_url, **kwargs)

    monkeypatch.setattr(ProviderClient, "exchange_code", spy)
    return calls


# -- a sign-in, step by step ------------------------------------------------------------------
def query_of(url: str) -> dict[str, str]:
    """The query parameters of ``url`` (each given once)."""
    params = parse_qs(urlsplit(url).query, keep_blank_values=True)
    assert all(len(values) == 1 for values in params.values()), url
    return {name: values[0] for name, values in params.items()}


def local_path(url: str) -> str:
    """``http://testserver/a?b`` → ``/a?b``: what the test Client requests."""
    parts = urlsplit(url)
    assert parts.netloc in ("", "testserver"), url
    return urlunsplit(("", "", parts.path, parts.query, ""))


def with_query(url: str, **changes: str | None) -> str:
    """``url`` with query parameters replaced (None: removed)."""
    parts = urlsplit(url)
    params = query_of(url)
    for name, value in changes.items():
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    return urlunsplit(parts._replace(query=urlencode(params)))


def start(client: Client, provider: str = "local", next: str | None = None, **extra: Any) -> str:
    """GET /auth/<provider>/redirect; the authorization URL it redirects to."""
    query = f"?{urlencode({'next': next})}" if next is not None else ""
    response = client.get(f"/auth/{provider}/redirect{query}", **extra)
    assert response.status_code == 302, response.content
    return str(response["Location"])


def authorize_at_provider(
    authorize_url: str, username: str = VERIFIED_USER, redirect_uri: str = REDIRECT_URI
) -> str:
    """The user signs in at the provider (a fresh browser there); the callback URL."""
    browser = ProviderBrowser()
    try:
        return browser.login_and_authorize(authorize_url, username, PASSWORD, redirect_uri)
    finally:
        browser.close()


def provider_callback(
    client: Client, username: str = VERIFIED_USER, next: str | None = None, provider: str = "local"
) -> str:
    """Start at the relying party, sign in at the provider: the callback URL (not yet
    requested)."""
    redirect_uri = REDIRECT_URI if provider == "local" else OTHER_REDIRECT_URI
    return authorize_at_provider(start(client, provider, next), username, redirect_uri)


def sign_in(
    client: Client,
    username: str = VERIFIED_USER,
    next: str | None = None,
    provider: str = "local",
    **extra: Any,
) -> Any:
    """The whole sign-in: start, provider, callback; the callback's response."""
    callback = provider_callback(client, username, next, provider)
    return client.get(local_path(callback), **extra)


def session_user_id(client: Client) -> str | None:
    """The signed-in user's id in the client's session cookie, or None."""
    value = client.session.get("_auth_user_id")
    return None if value is None else str(value)


def signed_in_email(client: Client) -> str | None:
    """Who the demo's home page says is signed in (None: anonymous)."""
    page = client.get("/").content.decode()
    match = re.search(r"Signed in as <strong>([^<]+)</strong>", page)
    if match is None:
        assert "You are anonymous." in page
        return None
    return match.group(1)


def problem(response: Any) -> dict[str, Any]:
    """The problem+json document of an error response."""
    assert response["Content-Type"] == "application/problem+json", (
        response.status_code,
        response.content,
    )
    document: dict[str, Any] = response.json()
    assert document["status"] == response.status_code
    return document


def identities() -> Sequence[tuple[str, str, Any]]:
    return list(
        OAuthIdentity.objects.order_by("pk").values_list("provider", "provider_user_id", "user_id")
    )
