"""Ready-made providers: Google, GitHub, Microsoft, and any OIDC provider by discovery."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from .client import OAuthProviderError, ProviderClient
from .types import OAuthProvider, OAuthUser

__all__ = [
    "DEFAULT_TIMEOUT",
    "OAuthDiscoveryError",
    "discover",
    "generic_oidc",
    "github",
    "google",
    "map_oidc_userinfo",
    "microsoft",
]

# Seconds for each call to a provider (discovery, token exchange, userinfo).
DEFAULT_TIMEOUT = 10.0


class OAuthDiscoveryError(ImproperlyConfigured):
    """The provider's discovery document could not be read or is not usable."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _subject(value: Any) -> str | None:
    # Some providers send numeric ids; bool is an int subclass and never an id.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return _text(value)


def _require_subject(value: Any, claim: str) -> str:
    subject = _subject(value)
    if subject is None:
        raise OAuthProviderError(f"The provider's userinfo has no usable {claim!r}.")
    return subject


def map_oidc_userinfo(userinfo: Mapping[str, Any]) -> OAuthUser:
    """Standard OIDC claims: ``sub``, ``email``, ``email_verified``, ``name``, ``picture``."""
    return OAuthUser(
        provider="",
        provider_user_id=_require_subject(userinfo.get("sub"), "sub"),
        email=_text(userinfo.get("email")),
        name=_text(userinfo.get("name")),
        avatar_url=_text(userinfo.get("picture")),
        # Only a JSON true counts: some providers send the string "false".
        email_verified=userinfo.get("email_verified") is True,
    )


def google(
    client_id: str, client_secret: str, redirect_uri: str, scope: str = "openid email profile"
) -> OAuthProvider:
    """Google (OIDC, PKCE). Google's ``email_verified`` is trusted for linking accounts."""
    return OAuthProvider(
        name="google",
        client_id=client_id,
        client_secret=client_secret,
        authorize_url="https://accounts.google.com/o/oauth2/v2/auth",
        token_url="https://oauth2.googleapis.com/token",
        userinfo_url="https://openidconnect.googleapis.com/v1/userinfo",
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=map_oidc_userinfo,
        issuer="https://accounts.google.com",
        pkce=True,
    )


GITHUB_EMAILS_URL = "https://api.github.com/user/emails"


def _github_userinfo(provider: OAuthProvider, token: str, http: Any) -> Mapping[str, Any]:
    profile = dict(http.userinfo(provider.userinfo_url, token))
    try:
        emails = http.userinfo_list(GITHUB_EMAILS_URL, token, "reading the email list")
    except OAuthProviderError:
        # Without the user:email scope the list is refused; the profile's public
        # address is then unverified as far as we can tell.
        emails = []
    verified = {
        e["email"].lower(): e
        for e in emails
        if isinstance(e.get("email"), str) and e.get("verified") is True
    }
    public = _text(profile.get("email"))
    if public is not None and public.lower() in verified:
        profile["email_verified"] = True
    elif public is None:
        primary = next((e for e in verified.values() if e.get("primary") is True), None)
        if primary is not None:
            profile["email"] = primary["email"]
            profile["email_verified"] = True
    profile.setdefault("email_verified", False)
    profile["emails"] = emails
    return profile


def map_github_userinfo(userinfo: Mapping[str, Any]) -> OAuthUser:
    return OAuthUser(
        provider="",
        provider_user_id=_require_subject(userinfo.get("id"), "id"),
        email=_text(userinfo.get("email")),
        name=_text(userinfo.get("name")) or _text(userinfo.get("login")),
        avatar_url=_text(userinfo.get("avatar_url")),
        email_verified=userinfo.get("email_verified") is True,
    )


def github(
    client_id: str, client_secret: str, redirect_uri: str, scope: str = "read:user user:email"
) -> OAuthProvider:
    """GitHub (OAuth 2.0 with PKCE, not OIDC: no nonce, no ID token). The email is the
    profile's public address when it is verified, else the primary verified address from
    the email list."""
    return OAuthProvider(
        name="github",
        client_id=client_id,
        client_secret=client_secret,
        authorize_url="https://github.com/login/oauth/authorize",
        token_url="https://github.com/login/oauth/access_token",
        userinfo_url="https://api.github.com/user",
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=map_github_userinfo,
        fetch_userinfo=_github_userinfo,
        pkce=True,
    )


# A tenant is a well-known name, a GUID or a domain; anything else would change the URL.
_TENANT = re.compile(
    r"^(common|organizations|consumers|[0-9a-fA-F-]{36}|[A-Za-z0-9.-]+\.[A-Za-z]{2,})$"
)


def map_microsoft_userinfo(userinfo: Mapping[str, Any]) -> OAuthUser:
    """Microsoft Graph ``/me``. Its ``mail`` is whatever the tenant admin typed and
    ``userPrincipalName`` is not a mailbox, so the email is never treated as verified."""
    return OAuthUser(
        provider="",
        provider_user_id=_require_subject(userinfo.get("id"), "id"),
        email=_text(userinfo.get("mail")),
        name=_text(userinfo.get("displayName")),
        avatar_url=None,
        email_verified=False,
    )


def microsoft(
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    scope: str = "openid email profile User.Read",
    tenant: str = "common",
) -> OAuthProvider:
    """Microsoft identity platform (Entra ID / personal accounts), with PKCE. ``tenant``:
    ``common`` (any account), ``organizations`` (work or school), or a tenant id or
    domain."""
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise ValueError(
            f"microsoft(tenant=...) must be 'common', 'organizations', 'consumers', a tenant "
            f"id or a domain, not {tenant!r}."
        )
    base = f"https://login.microsoftonline.com/{tenant}/oauth2/v2.0"
    return OAuthProvider(
        name="microsoft",
        client_id=client_id,
        client_secret=client_secret,
        authorize_url=f"{base}/authorize",
        token_url=f"{base}/token",
        userinfo_url="https://graph.microsoft.com/v1.0/me",
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=map_microsoft_userinfo,
        # Microsoft's discovery document lists no code_challenge_methods_supported,
        # yet its endpoints implement S256.
        pkce=True,
    )


def discover(issuer: str, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The issuer's ``/.well-known/openid-configuration``, checked: it must name the same
    issuer and give https endpoints (http only for a loopback issuer)."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        document = ProviderClient(issuer, timeout).object("GET", url, "discovery")
    except Exception as exc:
        raise OAuthDiscoveryError(
            f"Could not read the OIDC discovery document at {url}: {exc}"
        ) from None
    if document.get("issuer") != issuer.rstrip("/") and document.get("issuer") != issuer:
        raise OAuthDiscoveryError(
            f"The discovery document at {url} names issuer {document.get('issuer')!r}, "
            f"not {issuer!r}."
        )
    loopback = urlsplit(issuer).hostname in ("127.0.0.1", "localhost", "::1")
    for key in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint"):
        value = document.get(key)
        scheme = urlsplit(value).scheme if isinstance(value, str) else ""
        if scheme != "https" and not (loopback and scheme == "http"):
            raise OAuthDiscoveryError(
                f"The discovery document at {url} has no usable {key} ({value!r})."
            )
    return document


def generic_oidc(
    name: str,
    client_id: str,
    client_secret: str,
    authorize_url: str | None = None,
    token_url: str | None = None,
    userinfo_url: str | None = None,
    redirect_uri: str = "",
    scope: str = "openid email profile",
    *,
    issuer: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    pkce: bool | None = None,
) -> OAuthProvider:
    """Any OIDC provider with ``sub``/``email``/``name``/``picture`` claims.

    With ``issuer``, the endpoint URLs not given are read once, now, from the issuer's
    discovery document (``OAuthDiscoveryError``, an ``ImproperlyConfigured``, when it is
    unreachable or invalid). Without it, all three URLs must be given.

    ``pkce``: None (the default) turns PKCE on when the discovery document lists
    ``S256`` in ``code_challenge_methods_supported``, off when it does not, and on
    without discovery; True or False decides.
    """
    require_iss = False
    use_pkce = True
    if issuer is not None:
        document = discover(issuer, timeout=timeout)
        issuer = str(document["issuer"])
        authorize_url = authorize_url or document["authorization_endpoint"]
        token_url = token_url or document["token_endpoint"]
        userinfo_url = userinfo_url or document["userinfo_endpoint"]
        require_iss = document.get("authorization_response_iss_parameter_supported") is True
        challenge_methods = document.get("code_challenge_methods_supported")
        # Only S256: "plain" would send the verifier itself through the browser.
        use_pkce = isinstance(challenge_methods, list) and "S256" in challenge_methods
        methods = document.get("token_endpoint_auth_methods_supported")
        # The discovery default is client_secret_basic when the list is absent.
        auth_method = (
            "client_secret_post"
            if isinstance(methods, list) and "client_secret_basic" not in methods
            else "client_secret_basic"
        )
    else:
        auth_method = "client_secret_basic"
        missing = [
            key
            for key, value in (
                ("authorize_url", authorize_url),
                ("token_url", token_url),
                ("userinfo_url", userinfo_url),
            )
            if not value
        ]
        if missing:
            raise ImproperlyConfigured(
                f"generic_oidc({name!r}) needs issuer= (discovery) or {', '.join(missing)}."
            )
    return OAuthProvider(
        name=name,
        client_id=client_id,
        client_secret=client_secret,
        authorize_url=str(authorize_url),
        token_url=str(token_url),
        userinfo_url=str(userinfo_url),
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=map_oidc_userinfo,
        issuer=issuer,
        require_iss=require_iss,
        token_auth_method=auth_method,
        pkce=use_pkce if pkce is None else pkce,
    )
