"""The account app's tables: ``SharedRecord`` (one row of the suite's database store,
``appframework.database_store``, where ended sessions, throttle counters and one-use
values live when no shared cache is configured), ``EmailAddress`` (addresses and whether
they are confirmed) and ``TrustedBrowser`` (browsers that skip the second step)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ["EmailAddress", "SharedRecord", "TrustedBrowser"]


class SharedRecord(models.Model):
    """One key of the store. An integer lives in ``number``, so that ``incr`` is a single
    ``UPDATE`` the database makes atomic; anything else is JSON in ``value``. ``expires``
    is seconds since the epoch: a row past it is never read, and culled later."""

    key = models.CharField(max_length=255, primary_key=True)
    value = models.TextField(null=True)
    number = models.BigIntegerField(null=True)
    expires = models.FloatField(db_index=True)

    class Meta:
        db_table = "appframework_shared_records"

    def __str__(self) -> str:
        return self.key


class EmailAddress(models.Model):
    """An address of a user and whether its owner proved they read it.

    Sign-up and an email change write these rows; a user without any (made before the
    suite, by ``createsuperuser`` or in the admin) counts as verified. ``email`` is kept
    lower-cased: one address, one owner, whatever case it is typed in."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="email_addresses"
    )
    email = models.EmailField(max_length=254, db_index=True)
    verified = models.BooleanField(default=False)
    primary = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "appframework_email_addresses"
        verbose_name = _("email address")
        verbose_name_plural = _("email addresses")
        constraints = [
            models.UniqueConstraint(fields=["user", "email"], name="af_email_unique_per_user"),
        ]

    def __str__(self) -> str:
        return self.email


class TrustedBrowser(models.Model):
    """A browser whose owner chose "trust this browser" after the second factor: until
    ``expires_at`` its sign-ins skip the second step. The browser holds a signed cookie
    with the random key; only the key's SHA-256 is stored, and deleting the row (from
    the account pages, or by ending every session) revokes it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="trusted_browsers"
    )
    key_hash = models.CharField(max_length=64, unique=True)
    user_agent = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "appframework_trusted_browsers"
        verbose_name = _("trusted browser")
        verbose_name_plural = _("trusted browsers")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.user_agent or str(self.pk)
