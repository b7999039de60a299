"""The demo's admin: users (with a password on the add page) and posts.

The user model keeps its hash in ``password_hash`` (appframework's ``Authenticatable``),
not in Django's ``password`` column, so Django's stock user forms cannot be used as they
are: the add form below is Django's ``BaseUserCreationForm`` (password + confirmation,
``AUTH_PASSWORD_VALIDATORS``) bound to this model, and the change page shows only
whether a password is set, never the hash.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import BaseUserCreationForm
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from appframework.mfa.admin import HiddenFieldsAdminMixin

from .models import Post, Tenant, User


class UserCreationForm(BaseUserCreationForm):
    """Email, name, password twice; ``save()`` hashes through ``User.set_password``."""

    class Meta:
        model = User
        fields = ("email", "name")

    def clean_email(self) -> str:
        # Same normalisation as User.objects.create_user (lower-case domain), and no
        # second account differing only in case: login looks the address up exactly.
        email = User.objects.normalize_email(self.cleaned_data.get("email") or "")
        if email and User.objects.filter(email__iexact=email).exists():
            raise ValidationError("A user with this email address already exists.", code="unique")
        return email


class UserChangeForm(forms.ModelForm):
    class Meta:
        model = User
        # An allow-list: password_hash and session_version are never edited by hand
        # (the password has its own form, the "Change password" link; the version
        # follows it), and a column added later does not appear here by surprise.
        fields = (
            "email",
            "name",
            "is_active",
            "is_staff",
            "is_superuser",
            "roles",
            "groups",
            "user_permissions",
        )


@admin.register(User)
class UserAdmin(HiddenFieldsAdminMixin, DjangoUserAdmin):
    """Django's user admin (add form with a password, the "change password" page),
    with this model's fields; the TOTP columns cannot be filtered on."""

    form = UserChangeForm
    add_form = UserCreationForm
    fieldsets = (
        (None, {"fields": ("email", "password_status")}),
        ("Personal info", {"fields": ("name",)}),
        (
            "Permissions",
            {
                "fields": (
                    "is_active",
                    "is_staff",
                    "is_superuser",
                    "tenants",
                    "roles",
                    "groups",
                    "user_permissions",
                )
            },
        ),
        ("Important dates", {"fields": ("last_login",)}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "name", "password1", "password2")}),
    )
    readonly_fields = ("password_status", "last_login")
    list_display = ("email", "name", "is_staff", "is_active")
    list_filter = ("is_staff", "is_superuser", "is_active", "groups")
    search_fields = ("email", "name")
    ordering = ("email",)
    filter_horizontal = ("tenants", "roles", "groups", "user_permissions")

    @admin.display(description="Password")
    def password_status(self, obj: User) -> str:
        if obj.pk is None:
            return "-"
        usable = obj.has_usable_password()
        # "../password/" is DjangoUserAdmin's change-password page for this user.
        return format_html(
            '{} <a href="../password/">{}</a>',
            "set." if usable else "unusable (this user cannot log in with a password).",
            "Change password" if usable else "Set password",
        )


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    # Scoped like every read of Post: the changelist shows the resolved tenant's posts.
    list_display = ("title", "author", "tenant_id", "created_at")


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ("name", "slug")
