"""The webhook jobs' database connections, kept from one task to the next in a worker.

Celery's Django fix-up (what every worker started with ``DJANGO_SETTINGS_MODULE`` gets)
closes every database connection before and after each task unless the project sets
``CELERY_DB_REUSE_MAX``, whatever ``CONN_MAX_AGE`` says. A delivery then opens a new
PostgreSQL connection (a new server process, authentication included) for about a
millisecond of work: that halves a worker's throughput, and nothing warns.

The jobs therefore hold a connection of their own per database alias and thread, put in
place of the thread's connection only while the job runs, so the fix-up never sees it:

* kept while it works, for ``CONN_MAX_AGE`` seconds when that is a positive number
  (a task is not a request: ``0`` does not mean "close after each task" here);
* checked (``is_usable``) before use when it sat idle longer than ``IDLE_CHECK``;
* closed after any database error, so the next job starts on a fresh one.

Inside a transaction (an eager task in a test or a view) the thread's own connection is
used as is.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = ["IDLE_CHECK", "close_kept_connections", "kept_connection", "relax_commit"]

#: Seconds a kept connection may sit idle before it is checked before use (servers,
#: proxies and firewalls drop idle connections).
IDLE_CHECK = 30.0

_local = threading.local()


def _held() -> dict[str, tuple[BaseDatabaseWrapper, float]]:
    held: dict[str, tuple[BaseDatabaseWrapper, float]] | None = getattr(_local, "held", None)
    if held is None:
        held = _local.held = {}
    return held


def _fresh_enough(wrapper: BaseDatabaseWrapper, last_used: float) -> bool:
    if wrapper.connection is None:
        return True  # connects on first use
    max_age = wrapper.settings_dict.get("CONN_MAX_AGE") or 0
    if max_age and wrapper.close_at is not None and time.monotonic() >= wrapper.close_at:
        return False
    if time.monotonic() - last_used > IDLE_CHECK:
        return wrapper.is_usable()
    return True


@contextmanager
def kept_connection(alias: str, *, keep: bool = True) -> Iterator[BaseDatabaseWrapper]:
    """The connection to use for ``alias`` during one job. ``keep=False`` (an eager or
    directly called task) and an open transaction give the thread's own connection."""
    current = connections[alias]
    if not keep or current.in_atomic_block:
        yield current
        return
    held = _held()
    wrapper, last_used = held.get(alias, (None, 0.0))
    if wrapper is None:
        wrapper = connections.create_connection(alias)
    elif not _fresh_enough(wrapper, last_used):
        wrapper.close()
    connections[alias] = wrapper
    try:
        yield wrapper
    except DatabaseError:
        with suppress(DatabaseError):
            wrapper.close()
        raise
    finally:
        connections[alias] = current
        held[alias] = (wrapper, time.monotonic())


def close_kept_connections() -> None:
    """Close this thread's kept connections (worker shutdown, tests)."""
    held = _held()
    for wrapper, _ in held.values():
        with suppress(DatabaseError):
            wrapper.close()
    held.clear()


#: The PostgreSQL sessions already switched to asynchronous commit (by their driver
#: connection: a reconnect is a new session, which starts durable again).
_relaxed: weakref.WeakSet[object] = weakref.WeakSet()


def relax_commit(wrapper: BaseDatabaseWrapper) -> None:
    """``SET synchronous_commit = off`` on a kept PostgreSQL connection, once per
    session (``DELIVERY_LOG_SYNCHRONOUS_COMMIT = False``): its commits no longer wait
    for the WAL flush, and a crash of PostgreSQL itself can lose the last ones. Never
    on a connection inside a transaction (the caller's own), nor on another database."""
    if wrapper.vendor != "postgresql" or wrapper.in_atomic_block:
        return
    wrapper.ensure_connection()
    raw = wrapper.connection
    if raw is None or raw in _relaxed:
        return
    with wrapper.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")
    _relaxed.add(raw)
