"""The webhook jobs' database connection, kept from one task to the next in a worker even
when Celery's Django fix-up closes every connection around each task (its default when
``CELERY_DB_REUSE_MAX`` is not set): one connection for many jobs, checked after it sat
idle, replaced after a database error, and never used inside a caller's transaction."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.fixups.django import DjangoWorkerFixup
from django.db import DatabaseError, connections, transaction

from appframework_webhooks import connection as kept
from appframework_webhooks.connection import close_kept_connections, kept_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _closed_after() -> Iterator[None]:
    yield
    close_kept_connections()


def _backend_pid(wrapper: Any) -> Any:
    with wrapper.cursor() as cursor:
        if wrapper.vendor == "postgresql":
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]
        cursor.execute("SELECT 1")
        return id(wrapper.connection)  # SQLite: the driver connection object


def test_jobs_share_one_connection_that_the_celery_fixup_does_not_close() -> None:
    from celery import current_app

    fixup = DjangoWorkerFixup(current_app)
    assert not fixup.db_reuse_max  # Celery's default: close around every task

    seen = []
    for _ in range(3):
        fixup.on_task_prerun(sender=_worker_task())
        with kept_connection("default") as wrapper:
            assert connections["default"] is wrapper  # what the ORM uses meanwhile
            seen.append(_backend_pid(wrapper))
        fixup.on_task_postrun(sender=_worker_task())
        assert wrapper.connection is not None  # still open after the fix-up's close

    assert len(set(seen)) == 1


def test_the_threads_own_connection_is_back_in_place_after_the_job() -> None:
    own = connections["default"]
    with kept_connection("default") as wrapper:
        assert wrapper is not own
    assert connections["default"] is own


def test_inside_a_transaction_the_callers_connection_is_used() -> None:
    with transaction.atomic(), kept_connection("default") as wrapper:
        assert wrapper is connections["default"]


def test_an_eager_or_direct_call_uses_the_callers_connection() -> None:
    with kept_connection("default", keep=False) as wrapper:
        assert wrapper is connections["default"]


def _count_closes(monkeypatch: Any, wrapper: Any) -> list[bool]:
    # Asserted on the call: Django's SQLite backend keeps an in-memory test database
    # open whatever close() is asked.
    closes: list[bool] = []
    real = wrapper.close

    def close() -> None:
        closes.append(True)
        real()

    monkeypatch.setattr(wrapper, "close", close)
    return closes


def test_a_database_error_closes_the_kept_connection_and_the_next_job_gets_a_new_one(
    monkeypatch: Any,
) -> None:
    with kept_connection("default") as first:
        before = _backend_pid(first)
    closes = _count_closes(monkeypatch, first)
    with (
        pytest.raises(DatabaseError),
        kept_connection("default") as wrapper,
        wrapper.cursor() as cursor,
    ):
        cursor.execute("SELECT * FROM no_such_table_here")
    assert closes == [True]
    with kept_connection("default") as again:
        after = _backend_pid(again)
    if first.vendor == "postgresql":
        assert after != before  # a new server process


def test_a_connection_idle_too_long_is_checked_and_replaced_when_unusable(
    monkeypatch: Any,
) -> None:
    with kept_connection("default") as wrapper:
        _backend_pid(wrapper)
    checked: list[bool] = []

    def is_usable() -> bool:
        checked.append(True)
        return False

    monkeypatch.setattr(wrapper, "is_usable", is_usable)
    monkeypatch.setattr(kept, "IDLE_CHECK", 0.0)
    closes = _count_closes(monkeypatch, wrapper)
    time.sleep(0.01)
    with kept_connection("default") as again:
        assert again is wrapper
        assert closes == [True]  # closed before use: the job connects afresh
        assert _backend_pid(again)
    assert checked == [True]


def test_a_recently_used_connection_is_not_checked(monkeypatch: Any) -> None:
    with kept_connection("default") as wrapper:
        _backend_pid(wrapper)
    monkeypatch.setattr(wrapper, "is_usable", lambda: pytest.fail("checked"))
    with kept_connection("default") as again:
        assert again.connection is not None


def _worker_task() -> Any:
    class Request:
        is_eager = False

    class Task:
        request = Request()

    return Task()
