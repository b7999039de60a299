"""``HiddenFieldsAdminMixin``: the admin never filters on secrets.

Django's admin lets a changelist be filtered on any local column from the query string
(``?mfa_secret__startswith=C``): a staff user who may list users could read a TOTP
secret one character at a time by watching which users stay in the list. Django's own
``UserAdmin`` refuses ``password`` lookups for that reason; this mixin refuses the
TOTP secret, the recovery-code hashes and the password column the same way.
"""

from __future__ import annotations

from typing import Any

from django.db.models.constants import LOOKUP_SEP

from .models import HIDDEN_FIELDS

__all__ = ["HiddenFieldsAdminMixin", "lookup_touches_secret"]


def _secret_names() -> frozenset[str]:
    from django.contrib.auth import get_user_model

    from ..auth.mixins import CONVENTIONAL_PASSWORD_FIELD, password_field_of

    return frozenset(
        {
            *HIDDEN_FIELDS,
            "password",
            CONVENTIONAL_PASSWORD_FIELD,
            password_field_of(get_user_model()),
        }
    )


def lookup_touches_secret(lookup: str, extra: tuple[str, ...] = ()) -> bool:
    """Whether a changelist lookup reads a secret column, on the model or across a
    relation (``author__mfa_secret__startswith``); ``extra`` names the model's own
    secret columns beside the user's."""
    parts = lookup.split(LOOKUP_SEP)
    return not _secret_names().isdisjoint(parts) or not set(extra).isdisjoint(parts)


class HiddenFieldsAdminMixin:
    """Put it first in the bases of the ``ModelAdmin`` of a model with TOTP columns
    (``class UserAdmin(HiddenFieldsAdminMixin, admin.ModelAdmin)``): a lookup on a secret
    is refused (Django answers 400), as Django's ``UserAdmin`` refuses ``password``.
    A model with secrets of its own names them in ``secret_fields``."""

    #: The model's own secret columns, refused beside the user's.
    secret_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: Any, request: Any = None) -> bool:
        if lookup_touches_secret(lookup, self.secret_fields):
            return False
        allowed: bool = super().lookup_allowed(lookup, value, request)  # type: ignore[misc]
        return allowed
