"""What ties an authorization code to the sign-in that asked for it, beyond the state.

The state proves that the callback belongs to a sign-in started in this browser; it
says nothing about the code the callback carries. A code stolen from another user (a
leaked URL, a log, a Referer) can be pasted into a callback carrying the thief's own
valid state (code injection). Two proofs close that:

- PKCE (RFC 7636, ``S256``): the authorization request carries the hash of a fresh
  secret, the ``code_verifier``; the provider binds the code to that hash and redeems
  it only for the verifier. The thief's sign-in holds another verifier.
- The OIDC ``nonce``: the authorization request carries a fresh value that the
  provider copies into the ID token issued for that code. The thief's sign-in expects
  another value.

Both are kept with the state (``state.remember_state``) and spent with it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any

from django.utils.translation import gettext_lazy as _

from ..exceptions import ForbiddenException

__all__ = [
    "check_nonce",
    "new_code_verifier",
    "new_nonce",
    "s256_challenge",
    "sends_nonce",
]


def new_code_verifier() -> str:
    """32 random bytes, base64url: 43 characters, the RFC 7636 minimum length, from its
    recommended source."""
    return secrets.token_urlsafe(32)


def s256_challenge(code_verifier: str) -> str:
    """``BASE64URL(SHA256(ASCII(code_verifier)))`` without padding (RFC 7636, S256)."""
    digest = hashlib.sha256(code_verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_nonce() -> str:
    return secrets.token_urlsafe(32)


def sends_nonce(scope: str) -> bool:
    """A nonce is part of an OpenID Connect request only: ``openid`` among the scopes."""
    return "openid" in scope.split()


def check_nonce(expected: str | None, claims: dict[str, Any] | None) -> None:
    """``ForbiddenException`` ``oauth_nonce_mismatch`` unless the ID token's ``claims``
    carry ``expected`` as their ``nonce``. Nothing to check when no nonce was sent
    (``expected`` None) or no ID token came back (``claims`` None)."""
    if expected is None or claims is None:
        return
    nonce = claims.get("nonce")
    if nonce is None:
        raise ForbiddenException(
            _(
                "The sign-in provider's ID token carries no nonce, though this sign-in sent "
                "one; start the sign-in again."
            ),
            code="oauth_nonce_mismatch",
        )
    if not isinstance(nonce, str) or not hmac.compare_digest(
        nonce.encode("utf-8", "surrogatepass"), expected.encode("utf-8")
    ):
        # The code was issued to another sign-in (code injection), or the provider
        # mixed up its answers: either way it is not this browser's code.
        raise ForbiddenException(
            _(
                "The sign-in provider's ID token was issued to another sign-in than the one "
                "started here; start the sign-in again."
            ),
            code="oauth_nonce_mismatch",
        )
