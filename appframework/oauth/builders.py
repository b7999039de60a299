"""Ready-made providers: Google, GitHub, Microsoft, and any OIDC provider by discovery."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from ..sso_config import validate_provider_fields
from .client import OAuthProviderError, ProviderClient
from .types import OAuthProvider, OAuthUser, check_pkce, check_token_auth_method

__all__ = [
    "DEFAULT_TIMEOUT",
    "DiscoveredProvider",
    "OAuthDiscoveryError",
    "discover",
    "generic_oidc",
    "github",
    "google",
    "map_github_userinfo",
    "map_microsoft_userinfo",
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


Mapper = Callable[[Mapping[str, Any]], OAuthUser]


def _named(mapper: Callable[..., OAuthUser], provider: str) -> Mapper:
    """``mapper`` as the ``map_userinfo`` of the provider named ``provider``: the
    ``OAuthUser`` it returns names that provider."""
    return functools.partial(mapper, provider=provider)


def map_oidc_userinfo(userinfo: Mapping[str, Any], provider: str = "") -> OAuthUser:
    """Standard OIDC claims: ``sub``, ``email``, ``email_verified``, ``name``, ``picture``.
    ``provider`` is the name put in the result (the builders pass their provider's)."""
    return OAuthUser(
        provider=provider,
        provider_user_id=_require_subject(userinfo.get("sub"), "sub"),
        email=_text(userinfo.get("email")),
        name=_text(userinfo.get("name")),
        avatar_url=_text(userinfo.get("picture")),
        # Only a JSON true counts: some providers send the string "false".
        email_verified=userinfo.get("email_verified") is True,
        raw=dict(userinfo),
    )


def google(
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    scope: str = "openid email profile",
    *,
    token_auth_method: str = "client_secret_post",
) -> OAuthProvider:
    """Google (OIDC, PKCE). Google's ``email_verified`` is trusted for linking accounts.
    Its token endpoint takes either ``token_auth_method``."""
    return OAuthProvider(
        name="google",
        client_id=client_id,
        client_secret=client_secret,
        authorize_url="https://accounts.google.com/o/oauth2/v2/auth",
        token_url="https://oauth2.googleapis.com/token",
        userinfo_url="https://openidconnect.googleapis.com/v1/userinfo",
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=_named(map_oidc_userinfo, "google"),
        issuer="https://accounts.google.com",
        token_auth_method=token_auth_method,
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


def map_github_userinfo(userinfo: Mapping[str, Any], provider: str = "") -> OAuthUser:
    """GitHub's ``/user`` (with ``email_verified`` added by the email-list lookup)."""
    return OAuthUser(
        provider=provider,
        provider_user_id=_require_subject(userinfo.get("id"), "id"),
        email=_text(userinfo.get("email")),
        name=_text(userinfo.get("name")) or _text(userinfo.get("login")),
        avatar_url=_text(userinfo.get("avatar_url")),
        email_verified=userinfo.get("email_verified") is True,
        raw=dict(userinfo),
    )


def github(
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    scope: str = "read:user user:email",
    *,
    token_auth_method: str = "client_secret_post",
) -> OAuthProvider:
    """GitHub (OAuth 2.0 with PKCE, not OIDC: no nonce, no ID token). The email is the
    profile's public address when it is verified, else the primary verified address from
    the email list. GitHub documents the client secret as a form field
    (``client_secret_post``, the default)."""
    return OAuthProvider(
        name="github",
        client_id=client_id,
        client_secret=client_secret,
        authorize_url="https://github.com/login/oauth/authorize",
        token_url="https://github.com/login/oauth/access_token",
        userinfo_url="https://api.github.com/user",
        redirect_uri=redirect_uri,
        scope=scope,
        map_userinfo=_named(map_github_userinfo, "github"),
        token_auth_method=token_auth_method,
        fetch_userinfo=_github_userinfo,
        pkce=True,
    )


# A tenant is a well-known name, a GUID or a domain; anything else would change the URL.
_TENANT = re.compile(
    r"^(common|organizations|consumers|[0-9a-fA-F-]{36}|[A-Za-z0-9.-]+\.[A-Za-z]{2,})$"
)


def map_microsoft_userinfo(userinfo: Mapping[str, Any], provider: str = "") -> OAuthUser:
    """Microsoft Graph ``/me``. Its ``mail`` is whatever the tenant admin typed and
    ``userPrincipalName`` is not a mailbox, so the email is never treated as verified."""
    return OAuthUser(
        provider=provider,
        provider_user_id=_require_subject(userinfo.get("id"), "id"),
        email=_text(userinfo.get("mail")),
        name=_text(userinfo.get("displayName")),
        avatar_url=None,
        email_verified=False,
        raw=dict(userinfo),
    )


def microsoft(
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    scope: str = "openid email profile User.Read",
    tenant: str = "common",
    *,
    token_auth_method: str = "client_secret_post",
) -> OAuthProvider:
    """Microsoft identity platform (Entra ID / personal accounts), with PKCE. ``tenant``:
    ``common`` (any account), ``organizations`` (work or school), or a tenant id or
    domain. Its token endpoint takes either ``token_auth_method``."""
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
        map_userinfo=_named(map_microsoft_userinfo, "microsoft"),
        token_auth_method=token_auth_method,
        # Microsoft's discovery document lists no code_challenge_methods_supported,
        # yet its endpoints implement S256.
        pkce=True,
    )


def _discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + "/.well-known/openid-configuration"


def discover(issuer: str, *, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The issuer's ``/.well-known/openid-configuration``, checked: it must name the same
    issuer and give https endpoints (http only for a loopback issuer)."""
    url = _discovery_url(issuer)
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


def _token_auth_method(
    name: str, issuer: str, chosen: str | None, document: Mapping[str, Any]
) -> str:
    """The method ``chosen`` (an argument of generic_oidc), checked against the
    document's ``token_endpoint_auth_methods_supported``; without one, the OIDC default
    ``client_secret_basic``, or ``client_secret_post`` when the list has that and not
    the default."""
    listed = document.get("token_endpoint_auth_methods_supported")
    if not isinstance(listed, list):
        # OIDC Discovery: an absent list means client_secret_basic. An explicit choice
        # is taken on trust then: the provider did not say what it refuses.
        return chosen or "client_secret_basic"
    if chosen is not None:
        if chosen not in listed:
            raise OAuthDiscoveryError(
                f"generic_oidc({name!r}, token_auth_method={chosen!r}): the discovery "
                f"document at {_discovery_url(issuer)} lists {listed!r} in "
                f"token_endpoint_auth_methods_supported, not {chosen!r}."
            )
        return chosen
    for method in ("client_secret_basic", "client_secret_post"):
        if method in listed:
            return method
    raise OAuthDiscoveryError(
        f"generic_oidc({name!r}): the discovery document at {_discovery_url(issuer)} lists "
        f"neither client_secret_basic nor client_secret_post in "
        f"token_endpoint_auth_methods_supported ({listed!r}): this client sends a secret."
    )


class _Discovery:
    """A provider's discovery document, read on first use and kept once it worked.

    One read at a time per provider. A read that fails is not kept: the next use tries
    again, so a provider that was down recovers without a restart. The uses that waited
    for a failing read share its failure rather than each waiting out another timeout
    in turn (an issuer that does not answer would otherwise hold every one of them for
    a timeout each).
    """

    def __init__(self, issuer: str, timeout: float | None) -> None:
        self.issuer = issuer
        self.timeout = timeout
        self.resolved: OAuthProvider | None = None
        self._lock = threading.Lock()
        self._attempts = 0
        self._failure: str | None = None

    def get(
        self, build: Callable[[dict[str, Any]], OAuthProvider], timeout: float | None
    ) -> OAuthProvider:
        resolved = self.resolved
        if resolved is not None:
            return resolved
        attempt = self._attempts
        with self._lock:
            if self.resolved is not None:
                return self.resolved
            if self._attempts != attempt and self._failure is not None:
                raise OAuthDiscoveryError(self._failure)
            seconds = next(t for t in (self.timeout, timeout, DEFAULT_TIMEOUT) if t is not None)
            try:
                resolved = build(discover(self.issuer, timeout=seconds))
            except OAuthDiscoveryError as exc:
                self._failure = str(exc)
                raise
            except ValueError as exc:
                # An endpoint that passed discovery's checks yet is no usable URL.
                self._failure = f"The discovery document at {_discovery_url(self.issuer)}: {exc}"
                raise OAuthDiscoveryError(self._failure) from None
            finally:
                self._attempts += 1
            self.resolved = resolved
            self._failure = None
            return resolved

    # A copied provider (settings are deep-copied by some tools) shares the document.
    def __copy__(self) -> _Discovery:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Discovery:
        return self


class _Discovered:
    """A field of :class:`DiscoveredProvider`: the value given to ``generic_oidc``, or,
    when none was (None), the one its discovery document gives (read on first access)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.slot = f"_given_{name}"

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        given = instance.__dict__.get(self.slot)
        if given is not None:
            return given
        return getattr(instance.resolved(), self.name)

    def __set__(self, instance: Any, value: Any) -> None:
        # The dataclass __init__ stores each field through here.
        instance.__dict__[self.slot] = value


_URL_FIELDS = ("authorize_url", "token_url", "userinfo_url")


class DiscoveredProvider(OAuthProvider):
    """The ``OAuthProvider`` that ``generic_oidc(issuer=...)`` returns: the endpoint URLs
    not given, ``issuer``, ``require_iss``, and ``pkce`` and ``token_auth_method`` unless
    given, come from the issuer's discovery document, read on first use (the first
    request for this provider, or reading one of those fields) and then kept.

    Building one reaches no network, so a provider that is down stops neither start-up
    nor the other providers: only its own requests fail (502 ``oauth_provider_error``),
    and the next one reads the document again. :meth:`resolved` gives the plain
    ``OAuthProvider`` built from the document.
    """

    authorize_url = _Discovered()
    token_url = _Discovered()
    userinfo_url = _Discovered()
    issuer = _Discovered()
    require_iss = _Discovered()
    token_auth_method = _Discovered()
    pkce = _Discovered()

    def __post_init__(self) -> None:
        # What was given is checked now; the rest when the document is read (the
        # provider built from it runs every check of OAuthProvider).
        given = [f for f in _URL_FIELDS if self._given(f) is not None]
        validate_provider_fields(self, (*given, "redirect_uri"))
        if not self.client_id:
            raise ValueError(f"OAuthProvider {self.name!r} has no client_id.")
        if self._given("pkce") is not None:
            check_pkce(self._given("pkce"))
        if self._given("token_auth_method") is not None:
            check_token_auth_method(self._given("token_auth_method"))

    def _given(self, field: str) -> Any:
        return self.__dict__.get(f"_given_{field}")

    @classmethod
    def _create(cls, discovery: _Discovery, values: dict[str, Any]) -> DiscoveredProvider:
        provider = cls(**values)
        object.__setattr__(provider, "_discovery", discovery)
        return provider

    def resolved(self, timeout: float | None = None) -> OAuthProvider:
        discovery: _Discovery | None = self.__dict__.get("_discovery")
        if discovery is None:
            # Made by dataclasses.replace, which read every field: nothing to discover.
            return self
        return discovery.get(lambda document: self._from_document(discovery, document), timeout)

    def _from_document(self, discovery: _Discovery, document: dict[str, Any]) -> OAuthProvider:
        pkce = self._given("pkce")
        if pkce is None:
            methods = document.get("code_challenge_methods_supported")
            # Only S256: "plain" would send the verifier itself through the browser.
            pkce = isinstance(methods, list) and "S256" in methods
        values = {
            field: getattr(self, field)
            for field in (
                "name",
                "client_id",
                "client_secret",
                "redirect_uri",
                "scope",
                "map_userinfo",
                "authorize_params",
                "fetch_userinfo",
            )
        }
        return OAuthProvider(
            **values,
            authorize_url=self._given("authorize_url") or document["authorization_endpoint"],
            token_url=self._given("token_url") or document["token_endpoint"],
            userinfo_url=self._given("userinfo_url") or document["userinfo_endpoint"],
            issuer=str(document["issuer"]),
            require_iss=document.get("authorization_response_iss_parameter_supported") is True,
            token_auth_method=_token_auth_method(
                self.name, discovery.issuer, self._given("token_auth_method"), document
            ),
            pkce=pkce,
        )

    def __repr__(self) -> str:
        discovery: _Discovery | None = self.__dict__.get("_discovery")
        if discovery is None:
            return super().__repr__()
        if discovery.resolved is not None:
            return type(self).__name__ + repr(discovery.resolved).removeprefix("OAuthProvider")
        # Not read yet: a repr must not reach the network.
        name, issuer = self.name, discovery.issuer
        return f"{type(self).__name__}(name={name!r}, issuer={issuer!r}, not discovered yet)"


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
    timeout: float | None = None,
    pkce: bool | None = None,
    token_auth_method: str | None = None,
) -> OAuthProvider:
    """Any OIDC provider with ``sub``/``email``/``name``/``picture`` claims.

    With ``issuer``, the endpoint URLs not given are read from the issuer's discovery
    document on first use, not now (a :class:`DiscoveredProvider`): an issuer that is
    down, or a document that cannot be used (``OAuthDiscoveryError``), fails that
    provider's requests only, and the next one tries again. ``timeout`` bounds that
    read (default: ``OAUTH["TIMEOUT"]``). Without ``issuer``, all three URLs must be
    given.

    ``pkce``: None (the default) turns PKCE on when the discovery document lists
    ``S256`` in ``code_challenge_methods_supported``, off when it does not, and on
    without discovery; True or False decides.

    ``token_auth_method``: None (the default) is ``client_secret_basic``, the OIDC
    default, unless the document's ``token_endpoint_auth_methods_supported`` lists
    ``client_secret_post`` and not ``client_secret_basic``; ``client_secret_basic`` or
    ``client_secret_post`` decides, and must then be in that list when the document has
    one. A value that is neither is a ``ValueError`` now; a method the document does
    not list, or a list with neither, an ``OAuthDiscoveryError`` when it is read.
    """
    if pkce is not None:
        check_pkce(pkce)
    if token_auth_method is not None:
        check_token_auth_method(token_auth_method)
    values: dict[str, Any] = {
        "name": name,
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "map_userinfo": _named(map_oidc_userinfo, name),
    }
    if issuer is not None:
        parts = urlsplit(issuer if isinstance(issuer, str) else "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"generic_oidc({name!r}, issuer=...) must be an absolute http(s) URL, "
                f"not {issuer!r}."
            )
        # None: "from the document" (see _Discovered).
        values.update(
            authorize_url=authorize_url or None,
            token_url=token_url or None,
            userinfo_url=userinfo_url or None,
            issuer=None,
            require_iss=None,
            token_auth_method=token_auth_method,
            pkce=pkce,
        )
        return DiscoveredProvider._create(_Discovery(issuer, timeout), values)
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
        **values,
        authorize_url=str(authorize_url),
        token_url=str(token_url),
        userinfo_url=str(userinfo_url),
        token_auth_method=token_auth_method or "client_secret_basic",
        pkce=True if pkce is None else pkce,
    )
