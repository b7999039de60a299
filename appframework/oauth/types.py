"""The two value types of OAuth login: a configured provider and the identity it vouches for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..sso_config import validate_provider_fields

__all__ = [
    "TOKEN_AUTH_METHODS",
    "OAuthProvider",
    "OAuthUser",
    "UserinfoFetcher",
    "check_pkce",
    "check_token_auth_method",
]

# The ways a confidential client can send its secret to the token endpoint (OIDC Core,
# section 9): an HTTP Basic header, or form fields of the request body.
TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post")


@dataclass(frozen=True)
class OAuthUser:
    """A provider's answer about who signed in, in one shape for every provider.

    ``provider_user_id`` is the provider's stable id for the account (OIDC ``sub``,
    GitHub's numeric id, Microsoft's object id): accounts are linked on it, never on the
    email address, which users can change at most providers. ``email_verified`` is True
    only when the provider said so with a JSON ``true``.
    """

    provider: str
    provider_user_id: str
    email: str | None = None
    name: str | None = None
    avatar_url: str | None = None
    access_token: str = field(default="", repr=False)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    email_verified: bool = False


# (provider, access token, http) -> the userinfo document. ``http`` is the manager's
# ``ProviderClient``, so extra calls (GitHub's email list) share its timeout and errors.
UserinfoFetcher = Callable[["OAuthProvider", str, Any], Mapping[str, Any]]


@dataclass(frozen=True)
class OAuthProvider:
    """One configured provider (a confidential client: it holds a client secret).

    ``redirect_uri`` is the callback URL exactly as registered at the provider; it is
    configured, never derived from the incoming request's Host header, so a forged Host
    cannot send the authorization code elsewhere. ``map_userinfo`` turns the provider's
    userinfo document into an :class:`OAuthUser`; the builders' functions name their
    provider in it (the manager sets ``provider`` to this provider's name anyway, and
    fills ``access_token`` and ``raw``).

    Optional: ``issuer`` (the OIDC issuer; when set, a callback carrying an ``iss``
    parameter must name it, and with ``require_iss`` it must carry one: the mix-up
    defence), ``token_auth_method`` (how the client secret goes to the token endpoint:
    ``client_secret_basic``, an HTTP Basic ``Authorization`` header, the OIDC default;
    or ``client_secret_post``, form fields), ``authorize_params`` (extra query
    parameters), ``fetch_userinfo`` (replaces the single GET of ``userinfo_url``) and
    ``pkce``.

    ``pkce`` (on by default) sends an RFC 7636 S256 ``code_challenge`` with each
    authorization request and its ``code_verifier`` with the code: a code stolen from
    one browser is then refused when redeemed through another browser's sign-in (code
    injection). Turn it off only for a provider that rejects the extra parameters;
    ``generic_oidc`` turns it off when the discovery document does not list ``S256``.
    """

    name: str
    client_id: str
    client_secret: str = field(repr=False)
    authorize_url: str
    token_url: str
    userinfo_url: str
    redirect_uri: str
    scope: str
    map_userinfo: Callable[[Mapping[str, Any]], OAuthUser]
    issuer: str | None = None
    require_iss: bool = False
    token_auth_method: str = "client_secret_basic"
    authorize_params: Mapping[str, str] = field(default_factory=dict)
    fetch_userinfo: UserinfoFetcher | None = field(default=None, repr=False)
    pkce: bool = True

    def __post_init__(self) -> None:
        validate_provider_fields(
            self, ("authorize_url", "token_url", "userinfo_url", "redirect_uri")
        )
        if not self.client_id:
            raise ValueError(f"OAuthProvider {self.name!r} has no client_id.")
        check_pkce(self.pkce)
        check_token_auth_method(self.token_auth_method)

    def resolved(self, timeout: float | None = None) -> OAuthProvider:
        """This provider with every field known: itself, unless it waits for its OIDC
        discovery document (``generic_oidc(issuer=...)``), which is then read (within
        ``timeout`` seconds, when given) and kept; ``OAuthDiscoveryError`` when it cannot
        be read or used, tried again on the next call."""
        return self


def check_pkce(value: Any) -> None:
    """``ValueError`` unless ``value`` is a bool."""
    if not isinstance(value, bool):
        # A string "false" from an environment variable would read as on.
        raise ValueError(f"OAuthProvider.pkce must be True or False, not {value!r}.")


def check_token_auth_method(value: Any) -> None:
    """``ValueError`` unless ``value`` is one of :data:`TOKEN_AUTH_METHODS`."""
    if value not in TOKEN_AUTH_METHODS:
        raise ValueError(
            f"OAuthProvider.token_auth_method must be client_secret_basic or "
            f"client_secret_post, not {value!r}."
        )
