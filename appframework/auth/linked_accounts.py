"""The single sign-on identities linked to an account (OAuth, SAML), and unlinking one.

Unlinking is an account change: it needs a recent authentication (the view asks), and it
is refused when it would leave the account without a way in — no usable password, no
passkey, no other identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import events
from ..exceptions import NotFoundException, ValidationException
from .factors import has_passkeys
from .sso import identity_subject

__all__ = [
    "KINDS",
    "LinkedAccount",
    "linked_accounts",
    "remove_linked_accounts",
    "unlink_account",
]

#: kind → (app, model) of the identity links the suite's apps keep.
KINDS = {
    "oauth": ("appframework_oauth", "OAuthIdentity"),
    "saml": ("appframework_saml", "SamlIdentity"),
}


@dataclass(frozen=True)
class LinkedAccount:
    kind: str
    identity: Any

    @property
    def pk(self) -> Any:
        return self.identity.pk

    @property
    def provider(self) -> str:
        return str(self.identity.provider)

    @property
    def email(self) -> str:
        return str(self.identity.email)

    @property
    def created_at(self) -> Any:
        return self.identity.created_at

    @property
    def last_login_at(self) -> Any:
        return self.identity.last_login_at


def _models() -> dict[str, Any]:
    found = {}
    for kind, (label, name) in KINDS.items():
        try:
            found[kind] = apps.get_model(label, name)
        except LookupError:  # that app is not installed
            continue
    return found


def linked_accounts(user: Any) -> list[LinkedAccount]:
    """Every identity linked to ``user``, oldest first within each kind."""
    return [
        LinkedAccount(kind, identity)
        for kind, model in _models().items()
        for identity in model.objects.filter(user=user).order_by("created_at")
    ]


def unlink_account(request: HttpRequest | None, user: Any, kind: str, pk: Any) -> None:
    """Unlink ``user``'s identity ``kind``/``pk``; ``NotFoundException`` when it is not
    theirs, ``ValidationException`` (``identity_last_way_in``) when it is their last
    way to sign in."""
    model = _models().get(kind)
    identity = None if model is None else model.objects.filter(user=user, pk=pk).first()
    if identity is None:
        raise NotFoundException(_("No such linked account."), code="identity_not_found")
    others = len(linked_accounts(user)) - 1
    if not user.has_usable_password() and not has_passkeys(user) and others == 0:
        raise ValidationException(
            _("This is your only way to sign in: set a password or add a passkey first."),
            code="identity_last_way_in",
        )
    provider, subject = str(identity.provider), identity_subject(identity)
    with transaction.atomic():
        identity.delete()
        transaction.on_commit(
            lambda: events.identity_unlinked.send(
                sender=user._meta.model,
                user=user,
                request=request,
                provider=provider,
                subject=subject,
            )
        )


def remove_linked_accounts(user: Any) -> int:
    """Unlink every identity of ``user`` at once (its address was just taken back by its
    owner: identities linked before may be a squatter's); how many there were."""
    return sum(model.objects.filter(user=user).delete()[0] for model in _models().values())
