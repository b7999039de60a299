"""The signed-in user's personal access tokens as JSON: the list, a new one (its secret
in this one answer) and revoking one. Making and revoking need a recent authentication
(401 ``reauthentication_required``), exactly as on the page."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from ...auth.access_tokens import access_tokens, create_access_token, revoke_access_token
from ...auth.forms import AccessTokenForm, form_class
from ...auth.models import PersonalAccessToken
from ...auth.reauth import require_recent_authentication
from ..base import HeadlessView, InvalidForm

__all__ = ["TokenView", "TokensView", "token_payload"]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def token_payload(token: PersonalAccessToken) -> dict[str, Any]:
    """A token as the API shows it (never its secret nor its hash)."""
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "scopes": list(token.scopes or ()),
        "created_at": _iso(token.created_at),
        "expires_at": _iso(token.expires_at),
        "last_used_at": _iso(token.last_used_at),
    }


def _tokens(user: Any) -> dict[str, Any]:
    return {"tokens": [token_payload(t) for t in access_tokens(user)]}


class _TokenChange(HeadlessView):
    def changing_user(self) -> Any:
        user = self.signed_in_user()
        require_recent_authentication(self.request)
        return user


class TokensView(_TokenChange):
    """GET: the tokens. POST ``name``, ``expires_in_days`` (1 to 365, or null: never),
    ``scopes`` (a list): 201 with the token and its ``secret``, shown this once."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        return _tokens(self.signed_in_user())

    def post(self, request: HttpRequest) -> JsonResponse:
        user = self.changing_user()
        body = self.body()
        expires = body.get("expires_in_days")
        data = {
            "name": body.get("name") if isinstance(body.get("name"), str) else "",
            # A bool is an int to Python; the form must see it as the wrong type it is.
            "expires_in_days": "" if expires is None else str(expires),
            # A list stays a list: the form's multiple choice field reads it as given.
            "scopes": body.get("scopes", []),
        }
        form_type = form_class("access_token", AccessTokenForm)
        form = form_type(data=data, request=request, user=user)  # type: ignore[call-arg]
        if not form.is_valid():
            raise InvalidForm(form)
        cleaned = form.cleaned_data
        token, secret = create_access_token(
            user,
            cleaned["name"],
            expires_in=cleaned.get("expires_in_days"),
            scopes=cleaned.get("scopes") or (),
            request=request,
        )
        return JsonResponse({"token": token_payload(token), "secret": secret}, status=201)


class TokenView(_TokenChange):
    """DELETE: revoke the token (404 for another user's or an unknown one); the
    remaining tokens."""

    http_method_names = ["delete"]

    def delete(self, request: HttpRequest, pk: int) -> dict[str, Any]:
        user = self.changing_user()
        revoke_access_token(user, pk, request=request)
        return _tokens(user)
