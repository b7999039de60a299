"""The HTTP calls to a provider: discovery, token exchange, userinfo.

Every way a provider can fail (unreachable, slow, a 5xx, HTML instead of JSON, a
document of the wrong shape) becomes one :class:`OAuthProviderError` (502) naming the
provider and the step, never an unhandled exception and a 500 page.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests
from django.utils.translation import gettext_lazy as _

from .. import bounded_json
from ..exceptions import BadGatewayException, ForbiddenException
from ..outbound import StatelessSession

__all__ = ["MAX_DOCUMENT_BYTES", "OAuthProviderError", "ProviderClient", "TokenResponse"]

# Provider documents are a few kilobytes; a provider streaming without end must not
# hold a worker or its memory.
MAX_DOCUMENT_BYTES = 1_000_000

_local = threading.local()


class OAuthProviderError(BadGatewayException):
    """The identity provider could not be reached or answered something unusable."""

    title = _("Sign-in provider error")
    default_detail = _("The sign-in provider did not answer as expected.")
    default_code = "oauth_provider_error"


@dataclass(frozen=True)
class TokenResponse:
    """What the token endpoint answered for a code: the bearer access token, and the
    OIDC ID token when the provider issued one."""

    access_token: str = field(repr=False)
    id_token: str | None = field(default=None, repr=False)


def _session() -> requests.Session:
    # One pooled session per thread: keep-alive to the provider without sharing a
    # Session across threads, and without cookies (one provider's would reach another).
    session: requests.Session | None = getattr(_local, "session", None)
    if session is None:
        session = _local.session = StatelessSession()
    return session


def _basic_auth(client_id: str, client_secret: str) -> tuple[str, str]:
    # The client id and secret are form-encoded before Basic encoding, so a ':' in
    # either cannot shift the split between them.
    return quote(client_id, safe=""), quote(client_secret, safe="")


class ProviderClient:
    """Calls to one provider with one timeout; ``what`` names the step in errors."""

    def __init__(self, provider_name: str, timeout: float) -> None:
        self.provider_name = provider_name
        self.timeout = timeout

    def _fail(self, what: str, reason: str) -> OAuthProviderError:
        return OAuthProviderError(
            _("The sign-in provider %(provider)s failed during %(step)s: %(reason)s")
            % {"provider": self.provider_name, "step": what, "reason": reason}
        )

    def request_json(self, method: str, url: str, what: str, **kwargs: Any) -> Any:
        """The decoded JSON body of a 2xx answer; OAuthProviderError otherwise."""
        headers = {"Accept": "application/json", **kwargs.pop("headers", {})}
        try:
            response = _session().request(
                method,
                url,
                headers=headers,
                timeout=self.timeout,
                allow_redirects=False,
                stream=True,
                **kwargs,
            )
        except requests.Timeout:
            raise self._fail(what, f"no answer within {self.timeout:g} s") from None
        except requests.RequestException as exc:
            raise self._fail(what, f"could not connect ({exc.__class__.__name__})") from None
        try:
            body = response.raw.read(MAX_DOCUMENT_BYTES + 1, decode_content=True)
        except (requests.RequestException, OSError, ValueError) as exc:
            raise self._fail(what, f"the answer broke off ({exc.__class__.__name__})") from None
        finally:
            response.close()
        if len(body) > MAX_DOCUMENT_BYTES:
            raise self._fail(what, "the answer is too large")
        try:
            document = bounded_json.loads(body) if body else None
        except bounded_json.JsonNestingError:
            raise self._fail(what, "the answer nests too deeply") from None
        except (ValueError, UnicodeDecodeError):
            document = None
            if 200 <= response.status_code < 300:
                raise self._fail(what, f"HTTP {response.status_code}, not JSON") from None
        if not 200 <= response.status_code < 300:
            error = document.get("error") if isinstance(document, dict) else None
            if what == "token exchange" and error == "invalid_grant":
                # The code was refused: used already, expired, or issued to someone else.
                raise ForbiddenException(
                    _("The sign-in provider refused the authorization code; start again."),
                    code="oauth_invalid_grant",
                )
            suffix = f" ({error})" if isinstance(error, str) else ""
            raise self._fail(what, f"HTTP {response.status_code}{suffix}")
        return document

    def object(self, method: str, url: str, what: str, **kwargs: Any) -> dict[str, Any]:
        document = self.request_json(method, url, what, **kwargs)
        if not isinstance(document, dict):
            raise self._fail(what, "the answer is not a JSON object")
        return document

    def exchange_code(
        self,
        token_url: str,
        *,
        code: str,
        redirect_uri: str,
        client_id: str,
        client_secret: str,
        auth_method: str,
        code_verifier: str | None = None,
    ) -> TokenResponse:
        """The tokens for ``code`` (authorization-code grant, confidential client), with
        the PKCE ``code_verifier`` when the authorization request carried its challenge."""
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if code_verifier is not None:
            data["code_verifier"] = code_verifier
        kwargs: dict[str, Any] = {"data": data}
        if auth_method == "client_secret_basic":
            kwargs["auth"] = _basic_auth(client_id, client_secret)
        else:
            data.update(client_id=client_id, client_secret=client_secret)
        document = self.object("POST", token_url, "token exchange", **kwargs)
        token = document.get("access_token")
        token_type = document.get("token_type", "bearer")
        if not isinstance(token, str) or not token:
            raise self._fail("token exchange", "no access_token in the answer")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise self._fail("token exchange", f"unsupported token_type {token_type!r}")
        id_token = document.get("id_token")
        if id_token is not None and not isinstance(id_token, str):
            raise self._fail("token exchange", "the id_token is not a string")
        return TokenResponse(access_token=token, id_token=id_token)

    def id_token_claims(self, id_token: str) -> dict[str, Any]:
        """The claims of a JWS compact ID token, read without checking its signature.

        It came straight from the token endpoint, over TLS, in answer to this client's
        authenticated request (OpenID Connect allows that channel to stand in for the
        signature in the code flow); only its ``nonce`` is used. An ID token that is not
        a readable JWT is the provider's failure (502).
        """
        parts = id_token.split(".")
        if len(parts) != 3:
            raise self._fail("token exchange", "the id_token is not a signed JWT")
        payload = parts[1]
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            claims = bounded_json.loads(raw)
        except (binascii.Error, ValueError, UnicodeDecodeError, bounded_json.JsonNestingError):
            raise self._fail("token exchange", "the id_token's claims are not JSON") from None
        if not isinstance(claims, dict):
            raise self._fail("token exchange", "the id_token's claims are not a JSON object")
        return claims

    def userinfo(self, url: str, access_token: str, what: str = "userinfo") -> dict[str, Any]:
        return self.object("GET", url, what, headers={"Authorization": f"Bearer {access_token}"})

    def userinfo_list(self, url: str, access_token: str, what: str) -> list[Mapping[str, Any]]:
        document = self.request_json(
            "GET", url, what, headers={"Authorization": f"Bearer {access_token}"}
        )
        if not isinstance(document, list):
            raise self._fail(what, "the answer is not a JSON list")
        return [item for item in document if isinstance(item, Mapping)]
