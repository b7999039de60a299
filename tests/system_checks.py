"""Django's system checks as ``manage.py check`` runs them without ``--database``.

From Django 6.1, ``run_checks()`` with no ``databases`` argument runs the model checks
against every configured database (a JSONField asks the connection whether it supports
JSON). The suite's checks read only settings, so the tests run them with no database, as
Django 5.2 did: a test then never depends on whether an earlier test in the same worker
happened to open the connection.
"""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.core.checks import CheckMessage

__all__ = ["run_checks"]


def run_checks(**kwargs: Any) -> list[CheckMessage]:
    kwargs.setdefault("databases", [])
    return list(checks.run_checks(**kwargs))
