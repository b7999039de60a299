"""``OAuthManager``: start a sign-in at a provider, and turn its callback into an identity."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings, derived_setting
from ..exceptions import (
    AppFrameworkError,
    BadRequestException,
    ForbiddenException,
    NotFoundException,
)
from ..sso_config import named_providers
from .binding import check_nonce, new_code_verifier, new_nonce, s256_challenge, sends_nonce
from .builders import OAuthDiscoveryError
from .client import OAuthProviderError, ProviderClient
from .state import consume_state, remember_state
from .types import OAuthProvider, OAuthUser

__all__ = ["OAuthCallbackError", "OAuthManager", "configured_providers"]

# What a provider's error text may contribute to the page: printable, short.
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


class OAuthCallbackError(BadRequestException):
    """The provider sent the user back with ``error=...`` (denied, cancelled, failed)."""

    default_code = "oauth_error"


@derived_setting
def configured_providers() -> dict[str, OAuthProvider]:
    """``OAUTH["PROVIDERS"]`` by name, built once (a failure is retried on the next call)."""
    return named_providers("OAUTH", OAuthProvider)


def _stored(entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    return value if isinstance(value, str) and value else None


def _printable(value: Any, limit: int = 200) -> str:
    return _UNPRINTABLE.sub("", value if isinstance(value, str) else "")[:limit]


class OAuthManager:
    """Sign-in through OAuth 2.0 / OIDC providers (confidential clients).

    ``providers`` and ``timeout`` default to ``OAUTH["PROVIDERS"]`` and
    ``OAUTH["TIMEOUT"]``; the ``OAuthServiceProvider`` binds one instance in the container.
    """

    def __init__(
        self, providers: Iterable[OAuthProvider] | None = None, timeout: float | None = None
    ) -> None:
        self._providers = None if providers is None else {p.name: p for p in providers}
        self._timeout = timeout

    @property
    def timeout(self) -> float:
        return float(self._timeout if self._timeout is not None else app_settings.OAUTH.TIMEOUT)

    @property
    def providers(self) -> Mapping[str, OAuthProvider]:
        if self._providers is not None:
            return self._providers
        try:
            return configured_providers()
        except OAuthDiscoveryError as exc:
            # A provider that is down at first use is a 502 for this request, and is
            # tried again on the next one.
            raise OAuthProviderError(str(exc)) from None

    def provider(self, provider_name: str) -> OAuthProvider:
        """The provider named ``provider_name``, with what its discovery document says
        (read on its first use: ``OAuthProviderError``, 502, when that fails);
        ``NotFoundException`` (404) when there is none."""
        return self._ready(self._configured(provider_name))

    def _configured(self, provider_name: str) -> OAuthProvider:
        provider = self.providers.get(provider_name)
        if provider is None:
            raise NotFoundException(
                _("There is no sign-in provider named %(name)s.")
                % {"name": _printable(provider_name, 50)},
                code="oauth_unknown_provider",
            )
        return provider

    def _ready(self, provider: OAuthProvider) -> OAuthProvider:
        try:
            return provider.resolved(self.timeout)
        except OAuthDiscoveryError as exc:
            # This provider's requests fail until its document can be read; the others
            # are not affected, and the next request for it tries again.
            raise OAuthProviderError(str(exc)) from None

    def redirect_url(
        self, request: HttpRequest, provider_name: str, *, next: str | None = None
    ) -> str:
        """Store a one-use ``state`` in the session and return the provider's
        authorization URL. ``next`` (checked again when used) is where the user goes
        after signing in.

        With ``provider.pkce`` a fresh ``code_verifier`` is stored with the state and
        its S256 ``code_challenge`` sent; with ``openid`` in the scope, a fresh ``nonce``
        is stored and sent.
        """
        provider = self.provider(provider_name)
        code_verifier = new_code_verifier() if provider.pkce else None
        nonce = new_nonce() if sends_nonce(provider.scope) else None
        state = remember_state(
            request,
            provider.name,
            next if isinstance(next, str) else None,
            code_verifier=code_verifier,
            nonce=nonce,
        )
        params = {
            **provider.authorize_params,
            "response_type": "code",
            "client_id": provider.client_id,
            "redirect_uri": provider.redirect_uri,
            "scope": provider.scope,
            "state": state,
        }
        if code_verifier is not None:
            params["code_challenge"] = s256_challenge(code_verifier)
            params["code_challenge_method"] = "S256"
        if nonce is not None:
            params["nonce"] = nonce
        parts = urlsplit(provider.authorize_url)
        query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
        return urlunsplit(parts._replace(query=query))

    def handle_callback(self, request: HttpRequest, provider_name: str) -> OAuthUser:
        """The identity behind a provider's callback (``request.GET``).

        The state is checked and spent first (``ForbiddenException`` when missing,
        foreign, or spent: nothing is sent to the provider then); then the RFC 9207
        ``iss`` when the provider has an issuer; an ``error`` from the provider raises
        ``OAuthCallbackError`` (400); no ``code`` raises ``BadRequestException``. The code
        is exchanged with the client secret and the PKCE ``code_verifier`` stored with
        the state (a provider that finds it does not match refuses the code: 403
        ``oauth_invalid_grant``). When a nonce was sent and an ID token comes back, its
        ``nonce`` must be the stored one (``ForbiddenException``
        ``oauth_nonce_mismatch``). Then the userinfo endpoint is read, and
        ``map_userinfo`` gives the result. ``request.oauth_next`` holds the ``next``
        given to :meth:`redirect_url`.
        """
        configured = self._configured(provider_name)
        params = request.GET
        entry = consume_state(request, configured.name, params.get("state"))
        request.oauth_next = entry.get("n")  # type: ignore[attr-defined]
        # After the state: a callback that is not ours makes no request, discovery
        # included.
        provider = self._ready(configured)
        self._check_issuer(provider, params.get("iss"))
        if "error" in params:
            description = _printable(params.get("error_description"))
            raise OAuthCallbackError(
                _("The sign-in provider did not sign you in (%(error)s). %(description)s")
                % {"error": _printable(params.get("error"), 64), "description": description}
            )
        code = params.get("code")
        if not code:
            raise BadRequestException(
                _("The sign-in callback carries no authorization code."), code="oauth_code_missing"
            )
        http = ProviderClient(provider.name, self.timeout)
        # What the entry holds is sent as is, whatever ``provider.pkce`` says now: the
        # code is bound to the challenge sent when this sign-in started, if any.
        tokens = http.exchange_code(
            provider.token_url,
            code=code,
            redirect_uri=provider.redirect_uri,
            client_id=provider.client_id,
            client_secret=provider.client_secret,
            auth_method=provider.token_auth_method,
            code_verifier=_stored(entry, "v"),
        )
        nonce = _stored(entry, "o")
        if nonce is not None and tokens.id_token is not None:
            check_nonce(nonce, http.id_token_claims(tokens.id_token))
        token = tokens.access_token
        if provider.fetch_userinfo is not None:
            userinfo = provider.fetch_userinfo(provider, token, http)
        else:
            userinfo = http.userinfo(provider.userinfo_url, token)
        try:
            user = provider.map_userinfo(userinfo)
        except AppFrameworkError:
            raise
        except Exception as exc:
            raise OAuthProviderError(
                _("The sign-in provider's userinfo could not be read (%(error)s).")
                % {"error": exc.__class__.__name__}
            ) from exc
        return dataclasses.replace(user, provider=provider.name, access_token=token, raw=userinfo)

    @staticmethod
    def _check_issuer(provider: OAuthProvider, iss: Any) -> None:
        if provider.issuer is None:
            return
        if iss is None and not provider.require_iss:
            return
        if iss != provider.issuer:
            # A response from another provider's authorization server (mix-up attack).
            raise ForbiddenException(
                _("The sign-in callback comes from another issuer than %(provider)s.")
                % {"provider": provider.name},
                code="oauth_issuer_mismatch",
            )

    async def aredirect_url(
        self, request: HttpRequest, provider_name: str, *, next: str | None = None
    ) -> str:
        return await sync_to_async(self.redirect_url)(request, provider_name, next=next)

    async def ahandle_callback(self, request: HttpRequest, provider_name: str) -> OAuthUser:
        return await sync_to_async(self.handle_callback)(request, provider_name)
