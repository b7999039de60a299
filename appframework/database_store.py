"""``DatabaseStore``: a Django cache backend over the suite's own table
(``appframework.auth.models.SharedRecord``), the shared record of every process when the
project's cache is per process.

What the suite keeps there is small (True, counters, timestamps, short dicts) and must
hold across processes: ``add`` is one INSERT, so of two racing callers one wins;
``incr`` is one UPDATE of an integer column that answers the new value (``RETURNING`` on
SQLite and PostgreSQL; elsewhere read back in the same transaction), so each caller sees
its own count; ``incr_or_add``, the rate limiter's hit, creates or counts in one
statement. Values are JSON, never pickle: a row written by anyone with
access to the table cannot run code in the process that reads it.

Every operation goes to ``router.db_for_write``: a replica that lags would answer "not
spent yet" for a one-use value just spent. The table comes with ``appframework.auth``'s
migration; nothing else (no ``createcachetable``) is needed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Iterable
from typing import Any

from asgiref.sync import sync_to_async
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import IntegrityError, connections, router, transaction
from django.db.models import F

from .counters import add_then_incr
from .raw_sql import quoted_names

__all__ = ["CULL_BATCH", "CULL_EVERY", "DatabaseStore"]

#: Every this many writes a process deletes up to ``CULL_BATCH`` expired rows: the
#: table stays about as large as what is live, at a bounded cost per call.
CULL_EVERY = 50
CULL_BATCH = 200

# The key column's length; longer keys are stored by their digest.
_KEY_LENGTH = 255
# "No expiry" (timeout None): far in the future, a plain number on every database.
_NEVER = 253402300799.0  # 9999-12-31T23:59:59Z
# The range of the integer column (a BIGINT): a larger int is stored as JSON.
_BIGINT = 2**63


def _record_model() -> Any:
    # Imported on first use: this module is importable before django.setup().
    from .auth.models import SharedRecord

    return SharedRecord


def _quoted_names(wrapper: Any) -> dict[str, str]:
    """The table and its columns, quoted for ``wrapper``'s database, for raw statements:
    ``t``, ``key``, ``value``, ``number``, ``expires``."""
    return quoted_names(_record_model(), wrapper, ("key", "value", "number", "expires"))


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -_BIGINT < value < _BIGINT


class DatabaseStore(BaseCache):
    """A cache backend (``"BACKEND": "appframework.database_store.DatabaseStore"``) on
    the database ``appframework.auth`` migrates; ``LOCATION`` is not used. The suite
    uses one of its own when ``AUTO`` resolves to the database (appframework.stores)."""

    def __init__(self, location: str = "", params: dict[str, Any] | None = None) -> None:
        super().__init__(params or {})
        self._writes = itertools.count(1)

    # -- keys, rows and time -------------------------------------------------------------
    def validate_key(self, key: str) -> None:
        """Any key is stored (a long one by its digest): Memcached's limits, which
        BaseCache warns about, are not this backend's."""

    def _key(self, key: Any, version: int | None) -> str:
        made = self.make_and_validate_key(key, version=version)
        if len(made) <= _KEY_LENGTH:
            return made
        return "#sha256:" + hashlib.sha256(made.encode("utf-8", "surrogatepass")).hexdigest()

    def _expires(self, timeout: Any, now: float) -> float:
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        if timeout is None:
            return _NEVER
        # 0 or less: expired at once (Django's rule for timeout=0).
        return now + timeout if timeout > 0 else now

    def _objects(self) -> Any:
        model = _record_model()
        return model._default_manager.using(router.db_for_write(model))

    def _db(self) -> str:
        return str(router.db_for_write(_record_model()))

    @staticmethod
    def _columns(value: Any) -> dict[str, Any]:
        if _is_integer(value):
            return {"value": None, "number": value}
        return {"value": json.dumps(value, separators=(",", ":")), "number": None}

    @staticmethod
    def _decode(value: str | None, number: int | None) -> Any:
        return number if number is not None else json.loads(value or "null")

    def _live(self, now: float) -> Any:
        return self._objects().filter(expires__gt=now)

    # -- culling -------------------------------------------------------------------------
    def _wrote(self, now: float) -> None:
        if next(self._writes) % CULL_EVERY == 0:
            self.cull(now)

    def cull(self, now: float | None = None) -> int:
        """Delete up to ``CULL_BATCH`` expired rows; how many were deleted."""
        now = time.time() if now is None else now
        objects = self._objects()
        keys = list(objects.filter(expires__lte=now).values_list("key", flat=True)[:CULL_BATCH])
        if not keys:
            return 0
        # Still expired: another process may have replaced a row meanwhile (add()).
        deleted: int = objects.filter(key__in=keys, expires__lte=now).delete()[0]
        return deleted

    # -- the cache API -------------------------------------------------------------------
    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        row = (
            self._live(time.time())
            .filter(key=self._key(key, version))
            .values_list("value", "number")
        )
        found = row.first()
        return default if found is None else self._decode(*found)

    def get_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        names = {self._key(key, version): key for key in keys}
        if not names:
            return {}
        rows = self._live(time.time()).filter(key__in=list(names))
        return {
            names[stored]: self._decode(value, number)
            for stored, value, number in rows.values_list("key", "value", "number")
        }

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        self.set_many({key: value}, timeout, version)

    def set_many(
        self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> list[Any]:
        if not data:
            return []
        now = time.time()
        expires = self._expires(timeout, now)
        model = _record_model()
        rows = {
            self._key(key, version): model(
                key=self._key(key, version), expires=expires, **self._columns(value)
            )
            for key, value in data.items()
        }
        # One INSERT ... ON CONFLICT DO UPDATE (SQLite and PostgreSQL): no read first.
        self._objects().bulk_create(
            list(rows.values()),
            update_conflicts=True,
            unique_fields=["key"],
            update_fields=["value", "number", "expires"],
        )
        self._wrote(now)
        return []

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        now = time.time()
        stored = self._key(key, version)
        expires = self._expires(timeout, now)
        columns = self._columns(value)
        objects = self._objects()
        try:
            # A savepoint: the INSERT that loses leaves the caller's transaction usable.
            with transaction.atomic(using=self._db()):
                objects.create(key=stored, expires=expires, **columns)
        except IntegrityError:
            # Taken: only an expired row may be replaced, and the condition is in the
            # UPDATE itself, so of two callers replacing it one finds it live.
            added = bool(
                objects.filter(key=stored, expires__lte=now).update(expires=expires, **columns)
            )
        else:
            added = True
        if added:
            self._wrote(now)
        return added

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        stored = self._key(key, version)
        now = time.time()
        returning = self._returning()
        if returning is not None:
            # One UPDATE ... RETURNING: atomic, and it answers this call's own count.
            number = returning(
                "UPDATE {t} SET {number} = {number} + %s"
                " WHERE {key} = %s AND {expires} > %s AND {number} IS NOT NULL RETURNING {number}",
                [delta, stored, now],
            )
            if number is not None:
                return int(number)
            self._missing(key, stored, now)
        with transaction.atomic(using=self._db()):
            # The UPDATE locks the row until the transaction ends: the read below sees
            # this call's own increment, not one made after it.
            row = self._live(now).filter(key=stored, number__isnull=False)
            if not row.update(number=F("number") + delta):
                self._missing(key, stored, now)
            found: int = self._objects().filter(key=stored).values_list("number", flat=True)[0]
        return found

    def _missing(self, key: Any, stored: str, now: float) -> None:
        """Why ``incr`` found no live integer under ``key``: raise what Django's caches do."""
        if self._live(now).filter(key=stored).exists():
            raise TypeError(f"The value of key {key!r} is not an integer.")
        raise ValueError(f"Key {key!r} not found")

    def incr_or_add(
        self, key: Any, delta: int = 1, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> int:
        """``incr(key, delta)``, or, when ``key`` is absent or expired, a new counter of
        ``delta`` that expires after ``timeout``; the count after this call. One statement
        on SQLite and PostgreSQL (the rate limiter's hit), else ``add`` then ``incr``."""
        now = time.time()
        stored = self._key(key, version)
        expires = self._expires(timeout, now)
        returning = self._returning()
        if returning is None:
            return add_then_incr(self, key, delta, timeout, version)
        # Live: add to it, keep its expiry. Expired: start again at delta. A live row
        # holding JSON keeps it, and its NULL number answers NULL.
        number = returning(
            "INSERT INTO {t} ({key}, {value}, {number}, {expires}) VALUES (%s, NULL, %s, %s)"
            " ON CONFLICT ({key}) DO UPDATE SET"
            " {number} = CASE WHEN {t}.{expires} > %s THEN {t}.{number} + %s ELSE %s END,"
            " {value} = CASE WHEN {t}.{expires} > %s THEN {t}.{value} ELSE NULL END,"
            " {expires} = CASE WHEN {t}.{expires} > %s THEN {t}.{expires} ELSE %s END"
            " RETURNING {number}",
            [stored, delta, expires, now, delta, delta, now, now, expires],
        )
        self._wrote(now)
        if number is None:
            raise TypeError(f"The value of key {key!r} is not an integer.")
        return int(number)

    def _returning(self) -> Any:
        """Runs one statement with ``RETURNING`` and answers its first column (None for
        no row), or is None where the database cannot (not SQLite >= 3.35 or PostgreSQL)."""
        wrapper = connections[self._db()]
        if wrapper.vendor not in ("sqlite", "postgresql"):
            return None
        if not wrapper.features.can_return_columns_from_insert:
            return None
        quoted = _quoted_names(wrapper)

        def run(sql: str, params: list[Any]) -> Any:
            with wrapper.cursor() as cursor:
                cursor.execute(sql.format(**quoted), params)
                row = cursor.fetchone()
            return None if row is None else row[0]

        return run

    def decr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        return self.incr(key, -delta, version)

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        now = time.time()
        row = self._live(now).filter(key=self._key(key, version))
        return bool(row.update(expires=self._expires(timeout, now)))

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return bool(self._live(time.time()).filter(key=self._key(key, version)).exists())

    def delete(self, key: Any, version: int | None = None) -> bool:
        """True when this call removed a live value (of two racing callers, one)."""
        # An expired row is left to the cull: it is never read, and deleting it too
        # would take a second statement.
        live = self._live(time.time()).filter(key=self._key(key, version))
        return bool(live.delete()[0])

    def delete_many(self, keys: Iterable[Any], version: int | None = None) -> None:
        names = [self._key(key, version) for key in keys]
        if names:
            # The table has no relations or signals: one DELETE, without the transaction
            # Django's deletion collector opens around it.
            wrapper = connections[self._db()]
            marks = ", ".join(["%s"] * len(names))
            with wrapper.cursor() as cursor:
                sql = f"DELETE FROM {{t}} WHERE {{key}} IN ({marks})"
                cursor.execute(sql.format(**_quoted_names(wrapper)), names)

    def clear(self) -> None:
        self._objects().all().delete()

    # -- async: one query each, in a thread (BaseCache's own aincr reads then writes) --
    async def aincr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        return await sync_to_async(self.incr, thread_sensitive=True)(key, delta, version)

    async def adecr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        return await sync_to_async(self.incr, thread_sensitive=True)(key, -delta, version)

    async def aget_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        return await sync_to_async(self.get_many, thread_sensitive=True)(list(keys), version)

    async def aset_many(
        self,
        data: dict[Any, Any],
        timeout: Any = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - the cache API's own parameter
        version: int | None = None,
    ) -> list[Any]:
        return await sync_to_async(self.set_many, thread_sensitive=True)(data, timeout, version)

    async def adelete_many(self, keys: Iterable[Any], version: int | None = None) -> None:
        await sync_to_async(self.delete_many, thread_sensitive=True)(list(keys), version)

    async def ahas_key(self, key: Any, version: int | None = None) -> bool:
        return await sync_to_async(self.has_key, thread_sensitive=True)(key, version)
