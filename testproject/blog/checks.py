"""The demo project's own deployment check (``blog.E001``; docs/checks.md).

Registered when ``BlogConfig.ready()`` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db import DatabaseError

from appframework.checks import _error


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
        _error(
            "blog.E001",
            f"The seeded demo account {', '.join(found)} exists; its password is "
            "published in this repository and it is a superuser.",
            "Delete it (in the admin, or User.objects.filter(email=...).delete() in "
            "manage.py shell) and never run seed_demo against a production database.",
        )
    ]
