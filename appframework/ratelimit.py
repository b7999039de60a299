"""``RateLimiter``: counts per key and time window on a Django cache alias.

Counting is one atomic ``incr`` per hit, so the limit holds across threads and, on a
shared store (Redis, Memcached, the suite's database store), across processes and
machines. A hit is counted
*before* the caller does the guarded work: of N concurrent callers at most ``limit``
are ever let through, which a read-then-write counter cannot promise.

Two algorithms:

- ``"fixed"``: the count of the current window (``window`` seconds, aligned to the
  epoch). Cheapest; a burst of ``2 * limit`` is possible across a window boundary.
- ``"sliding"``: the current window's count plus the previous window's count weighted
  by how much of it still overlaps the last ``window`` seconds — a close estimate of a
  true sliding window at the cost of one more cache read.
- ``"anchored"``: a window that opens at the key's first hit and closes ``window``
  seconds later, whatever the clock says: "at most ``limit`` tries, then wait until
  ``window`` seconds have passed since the first".
- ``"backoff"``: ``limit`` tries at once, then each further try waits twice as long as
  the one before (``window`` seconds first, at most ``max_wait``), counted from the
  key's first try until :meth:`RateLimiter.reset` (a success) — the second factor's
  rule: it bounds the guesses of a whole month, not of a minute (docs/mfa.md).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from asgiref.sync import sync_to_async
from django.core.cache import BaseCache

from .counters import count

__all__ = ["BACKOFF_MEMORY", "RateLimitResult", "RateLimiter", "backoff_schedule"]

Algorithm = Literal["fixed", "sliding", "anchored", "backoff"]
_ALGORITHMS = ("fixed", "sliding", "anchored", "backoff")

#: How long a backoff streak is remembered without a try (then it starts afresh).
BACKOFF_MEMORY = 31 * 24 * 3600


def backoff_schedule(tries: int, free: int, first_wait: float, max_wait: float) -> float:
    """Seconds after a streak's first try at which try number ``tries`` is allowed:
    ``free`` tries at once, then waits of ``first_wait``, twice that, ... each at most
    ``max_wait``, added up."""
    extra = tries - free
    total, wait = 0.0, float(first_wait)
    while extra > 0 and wait < max_wait:
        total += wait
        wait *= 2
        extra -= 1
    return total + max(0, extra) * float(max_wait)


@dataclass(frozen=True)
class RateLimitResult:
    """``allowed``: the hit is within the limit. ``count``: hits counted in the window
    (weighted for ``sliding``). ``retry_after``: seconds until a hit would be allowed
    again (0 when allowed)."""

    allowed: bool
    count: float
    limit: int
    retry_after: float


class RateLimiter:
    """``hit(key, limit, window)`` counts one and answers; ``peek`` answers without
    counting; ``reset`` forgets the key; ``refund`` takes one hit back.

    ``cache_alias`` defaults to ``APPFRAMEWORK["RATE_LIMIT"]["CACHE"]`` (``AUTO``: a
    store every process shares, appframework.stores). Keys are hashed,
    so any string (an e-mail address, an IPv6 address) is a valid key on every backend.
    The async twins are ``ahit``, ``apeek``, ``areset`` and ``arefund``.
    """

    def __init__(
        self,
        cache_alias: str | None = None,
        *,
        algorithm: Algorithm = "fixed",
        prefix: str = "appframework:ratelimit",
        clock: Callable[[], float] | None = None,
        max_wait: float = 4 * 3600.0,
    ) -> None:
        if algorithm not in _ALGORITHMS:
            raise ValueError(
                f"Unknown rate-limit algorithm {algorithm!r}: one of {', '.join(_ALGORITHMS)}."
            )
        self.cache_alias = cache_alias
        self.algorithm = algorithm
        self.prefix = prefix
        self.max_wait = max_wait
        self._clock: Callable[[], float] = clock or time.time

    def using(self, algorithm: Algorithm, *, max_wait: float | None = None) -> RateLimiter:
        """This limiter (same cache, prefix and clock) counting with ``algorithm``."""
        return RateLimiter(
            self.cache_alias,
            algorithm=algorithm,
            prefix=self.prefix,
            clock=self._clock,
            max_wait=self.max_wait if max_wait is None else max_wait,
        )

    @property
    def cache(self) -> BaseCache:
        from .conf import app_settings
        from .stores import shared_store

        return shared_store(self.cache_alias or app_settings.RATE_LIMIT.CACHE)

    def _bucket_key(self, key: str, window: float, bucket: int) -> str:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"{self.prefix}:{digest}:{window:g}:{bucket}"

    def _increment(self, cache: BaseCache, bucket_key: str, timeout: int) -> int:
        return count(cache, bucket_key, 1, timeout)

    def _answer(
        self, current: int, previous: int, limit: int, window: float, now: float
    ) -> RateLimitResult:
        start = math.floor(now / window) * window
        elapsed = now - start
        if self.algorithm == "fixed":
            count: float = current
            allowed = current <= limit
            retry_after = 0.0 if allowed else start + window - now
        else:
            weight = 1.0 - elapsed / window
            count = current + previous * weight
            allowed = count <= limit
            retry_after = (
                0.0 if allowed else self._sliding_wait(current, previous, limit, window, elapsed)
            )
        return RateLimitResult(allowed, count, limit, max(0.0, retry_after))

    @staticmethod
    def _sliding_wait(
        current: int, previous: int, limit: int, window: float, elapsed: float
    ) -> float:
        # The next hit makes ``current + 1``. Within this window the estimate falls as the
        # previous window's weight (1 - elapsed/window) does: wait until
        # current + 1 + previous * weight <= limit.
        rest = window - elapsed
        if previous and current + 1 <= limit:
            at = window * (1.0 - (limit - current - 1) / previous)
            if at - elapsed < rest:
                return max(0.0, at - elapsed) + 1e-6
        # Otherwise in the next window, where this window's count is the "previous" one:
        # 1 + current * (1 - t/window) <= limit.
        later = window * (1.0 - (limit - 1) / current) if current else 0.0
        return rest + max(0.0, later) + 1e-6

    def _counts(self, key: str, window: float, now: float, *, count: bool) -> tuple[int, int]:
        cache = self.cache
        bucket = math.floor(now / window)
        current_key = self._bucket_key(key, window, bucket)
        # The counter outlives its window by one more for the sliding estimate.
        timeout = math.ceil(window * (2 if self.algorithm == "sliding" else 1)) + 1
        if count:
            current = self._increment(cache, current_key, timeout)
        else:
            current = int(cache.get(current_key) or 0)
        previous = 0
        if self.algorithm == "sliding":
            previous = int(cache.get(self._bucket_key(key, window, bucket - 1)) or 0)
        return current, previous

    # -- "anchored": the window opens at the first hit -----------------------------------
    def _anchor_keys(self, key: str, window: float) -> tuple[str, str]:
        base = self._bucket_key(key, window, -1)
        return f"{base}:start", f"{base}:count"

    def _anchored(self, key: str, limit: int, window: float, *, count: bool) -> RateLimitResult:
        cache = self.cache
        now = self._clock()
        start_key, count_key = self._anchor_keys(key, window)
        timeout = math.ceil(window) + 1
        start = cache.get(start_key)
        if start is None or now - float(start) >= window:
            if not count:
                return RateLimitResult(True, 1, limit, 0.0)
            # The last window is over (its keys may outlive it by the cache's rounding):
            # this hit opens a new one. add() lets one of racing callers open it.
            cache.delete_many([start_key, count_key])
            start = now if cache.add(start_key, now, timeout) else cache.get(start_key, now)
        start = float(start)
        if count:
            current = self._increment(cache, count_key, timeout)
        else:
            current = int(cache.get(count_key) or 0) + 1
        allowed = current <= limit
        retry_after = 0.0 if allowed else max(0.0, start + window - now)
        return RateLimitResult(allowed, current, limit, retry_after)

    # -- "backoff": free tries, then doubling waits from the streak's first try ---------
    def _backoff_keys(self, key: str) -> tuple[str, str]:
        base = self._bucket_key(key, 0, -2)
        return f"{base}:start", f"{base}:count"

    def _backoff(self, key: str, limit: int, window: float, *, count: bool) -> RateLimitResult:
        cache = self.cache
        now = self._clock()
        start_key, count_key = self._backoff_keys(key)
        start = cache.get(start_key)
        if start is None:
            if not count:
                return RateLimitResult(True, 1, limit, 0.0)
            start = now if cache.add(start_key, now, BACKOFF_MEMORY) else cache.get(start_key, now)
        else:
            cache.touch(start_key, BACKOFF_MEMORY)
        # The try's number comes from one atomic increment: of concurrent tries each has
        # its own place in the schedule, so a burst gets no more through than a queue.
        if count:
            tries = self._increment(cache, count_key, BACKOFF_MEMORY)
        else:
            tries = int(cache.get(count_key) or 0) + 1
        opens = float(start) + backoff_schedule(tries, limit, window, self.max_wait)
        allowed = now >= opens
        return RateLimitResult(allowed, tries, limit, 0.0 if allowed else opens - now)

    def hit(self, key: str, limit: int, window: float) -> RateLimitResult:
        """Count one hit for ``key`` and say whether it is within ``limit`` per ``window``
        seconds."""
        if self.algorithm == "backoff":
            return self._backoff(key, limit, window, count=True)
        if self.algorithm == "anchored":
            return self._anchored(key, limit, window, count=True)
        now = self._clock()
        current, previous = self._counts(key, window, now, count=True)
        return self._answer(current, previous, limit, window, now)

    def peek(self, key: str, limit: int, window: float) -> RateLimitResult:
        """Whether one more hit would be allowed, without counting it."""
        if self.algorithm == "backoff":
            return self._backoff(key, limit, window, count=False)
        if self.algorithm == "anchored":
            return self._anchored(key, limit, window, count=False)
        now = self._clock()
        current, previous = self._counts(key, window, now, count=False)
        return self._answer(current + 1, previous, limit, window, now)

    def refund(self, key: str, window: float) -> None:
        """Take back one hit of the current window (work that turned out fine)."""
        timeout = math.ceil(window) + 1
        if self.algorithm == "backoff":
            bucket_key, timeout = self._backoff_keys(key)[1], BACKOFF_MEMORY
        elif self.algorithm == "anchored":
            bucket_key = self._anchor_keys(key, window)[1]
        else:
            bucket_key = self._bucket_key(key, window, math.floor(self._clock() / window))
        try:
            if int(self.cache.decr(bucket_key)) < 0:
                self.cache.set(bucket_key, 0, timeout)
        except ValueError:
            pass  # expired meanwhile: nothing to take back

    def reset(self, key: str, window: float) -> None:
        """Forget ``key``'s counts (the current and the previous window, a backoff streak)."""
        bucket = math.floor(self._clock() / window)
        self.cache.delete_many(
            [
                self._bucket_key(key, window, bucket),
                self._bucket_key(key, window, bucket - 1),
                *self._anchor_keys(key, window),
                *self._backoff_keys(key),
            ]
        )

    async def ahit(self, key: str, limit: int, window: float) -> RateLimitResult:
        return await sync_to_async(self.hit)(key, limit, window)

    async def apeek(self, key: str, limit: int, window: float) -> RateLimitResult:
        return await sync_to_async(self.peek)(key, limit, window)

    async def arefund(self, key: str, window: float) -> None:
        await sync_to_async(self.refund)(key, window)

    async def areset(self, key: str, window: float) -> None:
        await sync_to_async(self.reset)(key, window)
