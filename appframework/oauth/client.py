"""The HTTP calls to a provider: discovery, token exchange, userinfo.

Every way a provider can fail (unreachable, slow, a 5xx, HTML instead of JSON, a
document of the wrong shape) becomes one :class:`OAuthProviderError` (502) naming the
provider and the step, never an unhandled exception and a 500 page.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import requests
from django.utils.translation import gettext_lazy as _

from ..exceptions import BadGatewayException, ForbiddenException

__all__ = ["MAX_DOCUMENT_BYTES", "OAuthProviderError", "ProviderClient"]

# Provider documents are a few kilobytes; a provider streaming without end must not
# hold a worker or its memory.
MAX_DOCUMENT_BYTES = 1_000_000

_local = threading.local()


class OAuthProviderError(BadGatewayException):
    """The identity provider could not be reached or answered something unusable."""

    title = _("Sign-in provider error")
    default_detail = _("The sign-in provider did not answer as expected.")
    default_code = "oauth_provider_error"


def _session() -> requests.Session:
    # One pooled session per thread: keep-alive to the provider without sharing a
    # Session across threads.
    session: requests.Session | None = getattr(_local, "session", None)
    if session is None:
        session = _local.session = requests.Session()
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
            document = json.loads(body) if body else None
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
    ) -> str:
        """The access token for ``code`` (authorization-code grant, confidential client)."""
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
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
        return token

    def userinfo(self, url: str, access_token: str, what: str = "userinfo") -> dict[str, Any]:
        return self.object("GET", url, what, headers={"Authorization": f"Bearer {access_token}"})

    def userinfo_list(self, url: str, access_token: str, what: str) -> list[Mapping[str, Any]]:
        document = self.request_json(
            "GET", url, what, headers={"Authorization": f"Bearer {access_token}"}
        )
        if not isinstance(document, list):
            raise self._fail(what, "the answer is not a JSON list")
        return [item for item in document if isinstance(item, Mapping)]
