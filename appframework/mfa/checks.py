"""Check ``appframework.E010``: the TOTP secret and recovery-code hashes stay hidden,
from forms, admin pages and the admin's changelist filters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.core import checks

from ..checks import check_error
from .models import HIDDEN_FIELDS, MfaEnrollable


def _names(value: Any) -> Iterable[str]:
    for item in value or ():
        if isinstance(item, list | tuple):
            yield from _names(item)
        elif isinstance(item, str):
            yield item


def _admin_names(model_admin: Any) -> set[str]:
    names: set[str] = set()
    for attr in ("fields", "readonly_fields", "list_display", "list_filter", "search_fields"):
        names.update(_names(getattr(model_admin, attr, None)))
    for _, options in getattr(model_admin, "fieldsets", None) or ():
        names.update(_names(options.get("fields")))
    # search_fields take lookup prefixes ("=", "^", "@") and all of them "__" paths.
    return {name.lstrip("=^@").split("__", 1)[0] for name in names}


def _filterable(model_admin: Any, name: str) -> bool:
    try:
        return bool(model_admin.lookup_allowed(f"{name}__startswith", "x", None))
    except Exception:
        return False  # a refusal by raising is a refusal


def check_hidden_fields(**kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    models = [m for m in apps.get_models() if issubclass(m, MfaEnrollable)]
    admins: dict[Any, Any] = {}
    if apps.is_installed("django.contrib.admin"):
        from django.contrib import admin

        admins = dict(admin.site._registry)
    for model in models:
        for name in HIDDEN_FIELDS:
            try:
                field = model._meta.get_field(name)
            except Exception:
                continue
            if getattr(field, "editable", False):
                errors.append(
                    check_error(
                        "appframework.E010",
                        f"{model._meta.label}.{name} is editable: forms and the admin would show it.",
                        "Keep MfaEnrollable's declaration (editable=False).",
                        obj=model,
                    )
                )
        model_admin = admins.get(model)
        if model_admin is not None:
            filterable = [name for name in HIDDEN_FIELDS if _filterable(model_admin, name)]
            if filterable:
                errors.append(
                    check_error(
                        "appframework.E010",
                        f"The admin of {model._meta.label} lets its changelist be filtered "
                        f"on {', '.join(filterable)} (?{filterable[0]}__startswith=…): a "
                        "staff user could read the secret a character at a time.",
                        "Add appframework.mfa.admin.HiddenFieldsAdminMixin first in the "
                        "ModelAdmin's bases.",
                        obj=model_admin,
                    )
                )
            exposed = sorted(_admin_names(model_admin) & set(HIDDEN_FIELDS))
            if exposed:
                errors.append(
                    check_error(
                        "appframework.E010",
                        f"The admin of {model._meta.label} shows {', '.join(exposed)}: the "
                        "TOTP secret and recovery-code hashes must never be displayed.",
                        "Remove them from the ModelAdmin's fields, fieldsets, list_display, "
                        "readonly_fields, list_filter and search_fields.",
                        obj=model_admin,
                    )
                )
    return errors
