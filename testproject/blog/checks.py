"""The demo project's own deployment checks (``blog.E001`` to ``blog.E003``; docs/checks.md).

Registered when ``BlogConfig.ready()`` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.db import DatabaseError
from django.utils.crypto import constant_time_compare

from appframework.checks import check_error


@checks.register(checks.Tags.security, deploy=True)
def check_no_seeded_demo_user(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """blog.E001: an account created by ``seed_demo`` (a published password) exists."""
    from .management.commands.seed_demo import SEEDED_EMAILS
    from .models import User

    try:
        found = sorted(User.objects.filter(email__in=SEEDED_EMAILS).values_list("email", flat=True))
    except DatabaseError:
        # Not migrated yet, or the database is unreachable: nothing seeded to find
        # (`migrate` and the first request report a missing database better than this).
        return []
    if not found:
        return []
    return [
        check_error(
            "blog.E001",
            f"Seeded demo accounts exist: {', '.join(found)}. Their passwords are "
            "published in this repository (and admin@example.com is a superuser).",
            "Delete them (in the admin, or User.objects.filter(email=...).delete() in "
            "manage.py shell) and never run seed_demo against a production database.",
        )
    ]


def _demo_file_key() -> str | None:
    """The key in ``settings.DEMO_SECRET_KEY_FILE`` (the demo's per-machine key), if any."""
    path = getattr(settings, "DEMO_SECRET_KEY_FILE", None)
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


@checks.register(checks.Tags.security, deploy=True)
def check_demo_secret_key_file(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """blog.E002: SECRET_KEY is the demo's per-machine key from ``.demo-secret-key``."""
    secret = getattr(settings, "SECRET_KEY", "")
    demo_key = _demo_file_key()
    if not secret or demo_key is None or not constant_time_compare(secret, demo_key):
        return []
    return [
        check_error(
            "blog.E002",
            f"SECRET_KEY is the demo's local key (read from {settings.DEMO_SECRET_KEY_FILE}): "
            "it sits in a file on a developer machine, not in a secret store.",
            "Set APP_SECRET_KEY to a long random value kept out of the repository.",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_mailbox_page_off(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """blog.E003: /mailbox, which shows anyone every mail the site sent, is on."""
    if not getattr(settings, "DEMO_MAILBOX_PAGE", False):
        return []
    return [
        check_error(
            "blog.E003",
            "The demo's /mailbox is on (DEMO_MAILBOX_PAGE): anyone can read every "
            "password reset link, confirmation link and sign-in code the site mails.",
            "Turn DEBUG off and leave DEMO_MAILBOX_PAGE unset (or set it to 0).",
        )
    ]
