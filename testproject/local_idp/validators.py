"""The claims the provider issues, in the ID token and at the userinfo endpoint, and how
it authenticates clients.

DOT builds both from one dictionary (``get_claim_dict``: ``sub`` plus
``get_additional_claims``) and keeps only the claims whose scope was granted
(``oidc_claim_scope``: ``email``/``email_verified`` need ``email``; ``name``, ``picture`` and
``preferred_username`` need ``profile``). Its userinfo view calls ``get_userinfo_claims``,
which returns that same filtered dictionary.

DOT takes the client secret either way from every client; a client registered for one
method only (``seed.registered_auth_method``) is held to it here, as providers that
enforce a client's registered ``token_endpoint_auth_method`` do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings

from testproject.local_idp.seed import ACCOUNTS_BY_USERNAME, registered_auth_method

Claim = Callable[[Any], Any]


def _email(request: Any) -> str | None:
    return request.user.email or None


def _email_verified(request: Any) -> bool | None:
    if not request.user.email:
        return None
    account = ACCOUNTS_BY_USERNAME.get(request.user.username)
    # An account made by hand (not seeded) has never proved its address.
    return account.email_verified if account is not None else False


def _name(request: Any) -> str | None:
    return request.user.get_full_name() or None


def _picture(request: Any) -> str:
    # The issuer is http://HOST:PORT/o; the avatars are served beside it.
    issuer = oauth2_settings.oidc_issuer(request)
    base = issuer.removesuffix("/o")
    return f"{base}/avatars/{request.user.username}.svg"


class LocalIdpValidator(OAuth2Validator):
    def get_additional_claims(self) -> dict[str, Claim]:
        # The request-free signature (callables, not values) lets DOT list these claims
        # in discovery's claims_supported; it calls each one with the request.
        return {
            # DOT's default subject is the user's primary key; a username is stable
            # across re-created data directories, so a linked account survives them.
            "sub": lambda request: request.user.username,
            "email": _email,
            "email_verified": _email_verified,
            "name": _name,
            "picture": _picture,
            "preferred_username": lambda request: request.user.username,
        }

    def get_oidc_claims(self, token: Any, token_handler: Any, request: Any) -> dict[str, Any]:
        # A claim the user has no value for is left out, not sent as null: an account
        # without an email has no email claims at all.
        claims = super().get_oidc_claims(token, token_handler, request)
        return {name: value for name, value in claims.items() if value is not None}

    def authenticate_client(self, request: Any, *args: Any, **kwargs: Any) -> bool:
        # DOT's own order: the Basic header, then the form fields.
        if self._authenticate_basic_auth(request):
            used = "client_secret_basic"
        elif self._authenticate_request_body(request):
            used = "client_secret_post"
        else:
            return False
        registered = registered_auth_method(request.client)
        # Refused like a wrong secret: 401 invalid_client.
        return registered is None or registered == used
