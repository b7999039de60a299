"""The account app's tables: ``SharedRecord`` (one row of the suite's database store,
``appframework.database_store``, where ended sessions, throttle counters and one-use
values live when no shared cache is configured), ``EmailAddress`` (addresses and whether
they are confirmed), ``TrustedBrowser`` (browsers that skip the second step),
``UserSession`` (sessions a user can see and end) and ``PersonalAccessToken``."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = [
    "EmailAddress",
    "PersonalAccessToken",
    "SharedRecord",
    "TrustedBrowser",
    "UserSession",
]


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


class UserSession(models.Model):
    """A signed-in session the user can see and end: a browser's cookie session
    (``kind="browser"``, keyed by its nonce, with the engine's session key when it has
    one) or an app's header session (``kind="app"``), whose contents live here: ``data``,
    found by the SHA-256 of the token the app holds."""

    BROWSER = "browser"
    APP = "app"
    KINDS = [(BROWSER, _("browser")), (APP, _("app"))]

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="user_sessions",
        null=True,
        blank=True,
    )
    kind = models.CharField(max_length=10, choices=KINDS)
    #: The cookie session's nonce; for an app session, the SHA-256 of its token.
    key = models.CharField(max_length=64, unique=True)
    #: The session engine's key, for engines that keep sessions server-side.
    session_key = models.CharField(max_length=255, blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "appframework_user_sessions"
        verbose_name = _("session")
        verbose_name_plural = _("sessions")
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk}"


class PersonalAccessToken(models.Model):
    """A named API token a user made: shown once, stored as its SHA-256, with an
    expiry, optional scopes the Gate can check, its last use, revocable one by one."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens"
    )
    name = models.CharField(_("name"), max_length=100)
    #: The first characters of the token, shown in lists to tell tokens apart.
    prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "appframework_personal_access_tokens"
        verbose_name = _("personal access token")
        verbose_name_plural = _("personal access tokens")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
