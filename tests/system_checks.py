"""Django's system checks as ``manage.py check`` runs them without ``--database``.

From Django 6.1, ``run_checks()`` with no ``databases`` argument runs the model checks
against every configured database (a JSONField asks the connection whether it supports
JSON). The suite's checks read only settings, so the tests run them with no database, as
Django 5.2 did: a test then never depends on whether an earlier test in the same worker
happened to open the connection.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core import checks
from django.core.checks import CheckMessage

__all__ = ["celery_worker_checks_skipped", "run_checks"]


def run_checks(**kwargs: Any) -> list[CheckMessage]:
    kwargs.setdefault("databases", [])
    return list(checks.run_checks(**kwargs))


@contextmanager
def celery_worker_checks_skipped() -> Iterator[None]:
    """Start a test's Celery worker without Django's system checks. The demo's Celery app
    installs Celery's Django fix-up, whose handler runs the checks when any worker starts
    (``CELERY_SKIP_CHECKS`` is its switch); from Django 6.1 they ask the database, which
    a worker fixture started outside a test's database access may not use."""
    before = os.environ.get("CELERY_SKIP_CHECKS")
    os.environ["CELERY_SKIP_CHECKS"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["CELERY_SKIP_CHECKS"]
        else:
            os.environ["CELERY_SKIP_CHECKS"] = before
