"""Counting on a cache: create a counter with its expiry, or add to it, atomically on
every backend that shares state between processes."""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.base import BaseCache

__all__ = ["add_then_incr", "count"]


def add_then_incr(
    cache: BaseCache, key: str, delta: int, timeout: Any, version: int | None = None
) -> int:
    """``add()`` the counter at 0 with its expiry, then ``incr()`` it (atomic on every
    backend that shares state); if it expired in between, create it again."""
    for _ in range(3):
        cache.add(key, 0, timeout, version)
        try:
            return int(cache.incr(key, delta, version))
        except ValueError:
            continue
    raise RuntimeError(f"Counter {key!r} could not be incremented.")


def count(cache: BaseCache, key: str, delta: int, timeout: Any) -> int:
    """The counter after adding ``delta``: in one call on a store that offers
    ``incr_or_add(key, delta, timeout)`` (the suite's database store: one statement),
    else :func:`add_then_incr`."""
    incr_or_add = getattr(cache, "incr_or_add", None)
    if incr_or_add is not None:
        return int(incr_or_add(key, delta, timeout))
    return add_then_incr(cache, key, delta, timeout)
