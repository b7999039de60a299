"""Passkeys in the admin: listed, searchable, renamed or deleted; never created there
(only a ceremony makes one) and never with their key material editable or shown."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Passkey

__all__ = ["PasskeyAdmin"]


@admin.register(Passkey)
class PasskeyAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "created_at", "last_used_at", "backed_up")
    list_select_related = ("user",)
    search_fields = ("name",)
    list_filter = ("backed_up",)
    # public_key and user_handle stay out of every form and page.
    fields = (
        "user",
        "name",
        "aaguid",
        "transports",
        "sign_count",
        "backed_up",
        "created_at",
        "last_used_at",
    )
    # Only the name is the owner's to change; the rest is what the authenticator said.
    readonly_fields = tuple(field for field in fields if field != "name")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
