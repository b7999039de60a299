from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.contrib.auth.models import PermissionsMixin
from django.db import models

from appframework.auth import Authenticatable
from appframework.authorization import HasRoles
from appframework.mfa.models import MfaEnrollable
from appframework_tenancy.models import TenantModel


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> User:
        if not email:
            raise ValueError("email is required")
        user = self.model(email=self.normalize_email(email), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class Tenant(models.Model):
    """A demo organisation. Tenant models store its id in their ``tenant_id`` column."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(unique=True)

    def __str__(self) -> str:
        return self.name


class User(Authenticatable, HasRoles, MfaEnrollable, AbstractBaseUser, PermissionsMixin):
    # The password column is password_hash (appframework's convention), not Django's `password`.
    password = None  # type: ignore[assignment]
    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True)
    password_hash = models.CharField(max_length=255, default="!")
    session_version = models.PositiveIntegerField(default=0)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    # The tenants this user may switch to (testproject/blog/tenancy.py checks it).
    tenants = models.ManyToManyField(Tenant, blank=True, related_name="members")

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    objects = UserManager()

    def __str__(self) -> str:
        return self.email


class Post(TenantModel):
    title = models.CharField(max_length=200)
    body = models.TextField(blank=True)
    author = models.ForeignKey(User, on_delete=models.CASCADE, related_name="posts")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "title": self.title,
            "body": self.body,
            "author_id": self.author_id,
            "tenant_id": self.tenant_id,
        }


class ReceivedWebhook(models.Model):
    """What the demo's own webhook receiver (/webhooks/receiver) got, and whether the
    signatures checked out."""

    event = models.CharField(max_length=255)
    webhook_id = models.CharField(max_length=64, blank=True)
    signature_valid = models.BooleanField(default=False)
    replay_proof_valid = models.BooleanField(default=False)
    body = models.TextField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event} ({'signed' if self.signature_valid else 'bad signature'})"
