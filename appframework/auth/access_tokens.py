"""Personal access tokens: named API tokens a user makes, shown once, stored hashed.

A token is ``afp_`` and a random URL-safe string; only its SHA-256 is stored
(:class:`~appframework.auth.models.PersonalAccessToken`), with a name, the first
characters (``prefix``, to tell tokens apart in a list), an optional expiry and
optional scopes from ``AUTH["ACCESS_TOKEN_SCOPES"]``. The bearer authentication of the
suite accepts it wherever it accepts a signed token (``appframework.auth.tokens``).

Unlike signed tokens, a personal access token survives signing out and a password
change: its owner made it on purpose and revokes it on the tokens page. "Log out
everywhere" and a password reset revoke every one (someone else may have had the
account), and making one mails the owner (docs/decisions.md).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .. import events
from ..backends import is_active
from ..conf import app_settings
from ..exceptions import NotFoundException, ValidationException
from .models import PersonalAccessToken

__all__ = [
    "ACCESS_TOKEN_PREFIX",
    "LAST_USED_RESOLUTION",
    "aauthenticate_access_token",
    "access_tokens",
    "authenticate_access_token",
    "create_access_token",
    "is_access_token",
    "known_scopes",
    "revoke_access_token",
    "revoke_access_tokens",
]

#: What every personal access token starts with: secret scanners (and people) can
#: recognise one in a log or a repository, and the bearer check routes it here.
ACCESS_TOKEN_PREFIX = "afp_"
#: ``last_used_at`` is written at most this often per token: a busy token would
#: otherwise cost a database write on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
# 32 random bytes: 43 URL-safe characters.
_SECRET_BYTES = 32
# The prefix shown in lists: "afp_" and 8 characters of the secret, as GitHub shows.
_SHOWN_LENGTH = len(ACCESS_TOKEN_PREFIX) + 8
# Far longer than any token made here: refused before hashing.
_MAX_LENGTH = 256


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def known_scopes() -> list[str]:
    """The scopes a token may be limited to (``AUTH["ACCESS_TOKEN_SCOPES"]``)."""
    return [str(scope) for scope in app_settings.AUTH.ACCESS_TOKEN_SCOPES or ()]


def is_access_token(value: object) -> bool:
    """Whether ``value`` has the shape of a personal access token (not whether it is good)."""
    return (
        isinstance(value, str)
        and value.startswith(ACCESS_TOKEN_PREFIX)
        and len(value) <= _MAX_LENGTH
    )


def _scopes(scopes: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(str(scope) for scope in scopes))
    known = known_scopes()
    unknown = [scope for scope in chosen if scope not in known]
    if unknown:
        raise ValidationException(
            _("Unknown scope: %(scopes)s.") % {"scopes": ", ".join(unknown)},
            code="invalid_scope",
        )
    # Stored in the configured order, so lists read the same whatever was ticked first.
    return [scope for scope in known if scope in chosen]


def create_access_token(
    user: Any,
    name: str,
    *,
    expires_in: int | None = None,
    scopes: Iterable[str] = (),
    request: HttpRequest | None = None,
) -> tuple[PersonalAccessToken, str]:
    """A new token of ``user``: the row and the secret, which is shown this once.

    ``expires_in``: days until it stops working (None: never); ``scopes``: a subset of
    ``AUTH["ACCESS_TOKEN_SCOPES"]`` (none: what the user's signed tokens may do).
    Sends ``access_token_created`` once committed.
    """
    if getattr(user, "pk", None) is None:
        raise ValueError("Cannot make a token for an unsaved user.")
    name = str(name).strip()
    if not name:
        raise ValidationException(_("Give the token a name."), code="invalid")
    if expires_in is not None and expires_in < 1:
        raise ValidationException(_("A token lasts at least one day."), code="invalid")
    chosen = _scopes(scopes)
    secret = ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(_SECRET_BYTES)
    expires_at = None if expires_in is None else timezone.now() + timedelta(days=expires_in)
    token = PersonalAccessToken.objects.create(
        user=user,
        name=name,
        prefix=secret[:_SHOWN_LENGTH],
        token_hash=_hash(secret),
        scopes=chosen,
        expires_at=expires_at,
    )
    transaction.on_commit(
        lambda: events.access_token_created.send(
            sender=user._meta.model, user=user, request=request, token=token
        )
    )
    return token, secret


def access_tokens(user: Any) -> QuerySet[PersonalAccessToken]:
    """The user's tokens that are not revoked (expired ones included: the list says so),
    newest first."""
    return PersonalAccessToken.objects.filter(user_id=user.pk, revoked_at__isnull=True)


def _usable(token: PersonalAccessToken | None, now: datetime) -> bool:
    if token is None or token.revoked_at is not None:
        return False
    if token.expires_at is not None and token.expires_at <= now:
        return False
    return is_active(token.user)


def _stale_use(token: PersonalAccessToken, now: datetime) -> Q | None:
    """The condition of the throttled ``last_used_at`` write, or None when not due."""
    cutoff = now - LAST_USED_RESOLUTION
    if token.last_used_at is not None and token.last_used_at > cutoff:
        return None
    # Conditional in SQL too: of two requests racing past the check above, one writes.
    return Q(last_used_at__isnull=True) | Q(last_used_at__lte=cutoff)


def _lookup(secret: object) -> QuerySet[PersonalAccessToken] | None:
    if not is_access_token(secret):
        return None
    # Looked up by the SHA-256 of the whole secret, never compared in Python: how long
    # the index lookup takes depends on the hash of a guess, and learning bits of the
    # hash of a guess tells nothing about the hash of the real secret (a preimage would
    # be needed), so no constant-time comparison is involved or needed.
    digest = _hash(str(secret))
    return PersonalAccessToken.objects.select_related("user").filter(
        token_hash=digest, revoked_at__isnull=True
    )


def authenticate_access_token(secret: object) -> tuple[Any, PersonalAccessToken] | None:
    """``(user, token)`` for a good token; None for an unknown, revoked or expired one,
    or one of an inactive user. Records the use (at most once a minute)."""
    rows = _lookup(secret)
    token = rows.first() if rows is not None else None
    now = timezone.now()
    if token is None or not _usable(token, now):
        return None
    condition = _stale_use(token, now)
    if condition is not None:
        PersonalAccessToken.objects.filter(condition, pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token.user, token


async def aauthenticate_access_token(secret: object) -> tuple[Any, PersonalAccessToken] | None:
    rows = _lookup(secret)
    token = await rows.afirst() if rows is not None else None
    now = timezone.now()
    if token is None or not _usable(token, now):
        return None
    condition = _stale_use(token, now)
    if condition is not None:
        await PersonalAccessToken.objects.filter(condition, pk=token.pk).aupdate(last_used_at=now)
        token.last_used_at = now
    return token.user, token


def _revoked_signal(user: Any, request: HttpRequest | None, token: PersonalAccessToken) -> None:
    transaction.on_commit(
        lambda: events.access_token_revoked.send(
            sender=user._meta.model, user=user, request=request, token=token
        )
    )


def revoke_access_token(
    user: Any, pk: Any, *, request: HttpRequest | None = None
) -> PersonalAccessToken:
    """Revoke the user's token ``pk``; ``NotFoundException`` for a token that is not
    theirs, unknown or already revoked (the same answer: ids of others' tokens stay
    unknown). Sends ``access_token_revoked`` once committed."""
    now = timezone.now()
    with transaction.atomic():
        token = (
            access_tokens(user).select_for_update().filter(pk=pk).first()
            if isinstance(pk, int) or str(pk).isdigit()
            else None
        )
        if token is None:
            raise NotFoundException(_("No such token."), code="not_found")
        token.revoked_at = now
        token.save(update_fields=["revoked_at"])
        _revoked_signal(user, request, token)
    return token


def revoke_access_tokens(user: Any, *, request: HttpRequest | None = None) -> int:
    """Revoke every token of the user (a password reset and "log out everywhere" do);
    how many were live."""
    now = timezone.now()
    with transaction.atomic():
        tokens = list(access_tokens(user).select_for_update())
        PersonalAccessToken.objects.filter(pk__in=[t.pk for t in tokens]).update(revoked_at=now)
        for token in tokens:
            token.revoked_at = now
            _revoked_signal(user, request, token)
    return len(tokens)
