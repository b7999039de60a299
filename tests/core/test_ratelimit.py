"""``appframework.ratelimit.RateLimiter``: fixed and sliding windows on a Django cache.

Time comes from an injected fake clock, so every window boundary is exact. The counting
tests run on the test settings' locmem ``default`` alias, named explicitly (the
setting's default, ``AUTO``, is the suite's database store there: tests/stores). The
atomicity tests hammer one key from 8 threads on locmem and on Redis (a real shared
cache); Redis being unreachable skips them locally and fails them on CI.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import caches
from django.test import override_settings

from appframework.ratelimit import RateLimiter, RateLimitResult
from appframework.stores import database_store
from tests.conftest import skip_or_fail_on_ci
from tests.services import redis_url

REDIS_URL = redis_url(0)
REDIS_ALIAS = "redis"

# A moment aligned to every window used here (60 s, 300 s, 3600 s).
START = 3600.0 * 500_000


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def at(self, offset: float) -> FakeClock:
        self.now = START + offset
        return self

    def advance(self, seconds: float) -> None:
        self.now += seconds


# -- Redis: a shared cache, or a skip (a failure on CI) ---------------------------------------------
def require_redis() -> None:
    """Skip (printing why) when Redis is unreachable; on CI (``CI=true``) fail instead."""
    import redis

    try:
        probe = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
        try:
            probe.ping()
        finally:
            probe.close()
    except (redis.RedisError, OSError) as exc:
        skip_or_fail_on_ci(f"Redis unreachable at {REDIS_URL} ({exc.__class__.__name__}: {exc})")


@contextmanager
def redis_cache_alias() -> Iterator[str]:
    """``CACHES`` with a ``"redis"`` alias whose keys carry a prefix unique to this use;
    only those keys are deleted before and after (never FLUSHDB: others share the server)."""
    import redis

    require_redis()
    key_prefix = f"appframework-test-{uuid.uuid4().hex}"
    raw = redis.Redis.from_url(REDIS_URL)

    def purge() -> None:
        for key in raw.scan_iter(match=f"{key_prefix}:*"):
            raw.delete(key)

    cache_settings = {
        **settings.CACHES,
        REDIS_ALIAS: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": key_prefix,
        },
    }
    purge()
    try:
        with override_settings(CACHES=cache_settings):
            yield REDIS_ALIAS
            caches[REDIS_ALIAS].close()
    finally:
        purge()
        raw.close()


@pytest.fixture
def redis_alias() -> Iterator[str]:
    with redis_cache_alias() as alias:
        yield alias


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def limiter(clock: FakeClock, algorithm: Any = "fixed", alias: str | None = "default") -> RateLimiter:
    return RateLimiter(alias, algorithm=algorithm, prefix="test:ratelimit", clock=clock)


def hits(rl: RateLimiter, key: str, n: int, limit: int, window: float) -> list[RateLimitResult]:
    return [rl.hit(key, limit, window) for _ in range(n)]


# -- fixed window ----------------------------------------------------------------------------------
def test_fixed_window_allows_limit_hits_then_refuses_with_time_to_window_end(
    clock: FakeClock,
) -> None:
    rl = limiter(clock.at(10))
    results = hits(rl, "k", 4, limit=3, window=60)
    assert [r.allowed for r in results] == [True, True, True, False]
    assert [r.count for r in results] == [1, 2, 3, 4]
    assert [r.retry_after for r in results] == [0.0, 0.0, 0.0, 50.0]
    assert all(r.limit == 3 for r in results)


def test_fixed_window_retry_after_shrinks_as_the_window_passes(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    hits(rl, "k", 3, limit=3, window=60)
    clock.at(45.5)
    refused = rl.hit("k", 3, 60)
    assert not refused.allowed
    assert refused.retry_after == pytest.approx(14.5)


def test_fixed_window_next_window_starts_fresh(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    refused = hits(rl, "k", 4, limit=3, window=60)[-1]
    assert not refused.allowed
    clock.advance(refused.retry_after)  # exactly the next window's start
    fresh = rl.hit("k", 3, 60)
    assert fresh == RateLimitResult(allowed=True, count=1, limit=3, retry_after=0.0)


def test_fixed_window_still_refuses_just_before_the_window_ends(clock: FakeClock) -> None:
    rl = limiter(clock.at(0))
    hits(rl, "k", 2, limit=2, window=60)
    clock.at(59.999)
    refused = rl.hit("k", 2, 60)
    assert not refused.allowed
    assert refused.retry_after == pytest.approx(0.001, abs=1e-4)


def test_fixed_windows_are_aligned_to_the_epoch_so_a_boundary_allows_a_burst(
    clock: FakeClock,
) -> None:
    """Documented trade-off of "fixed": up to 2 * limit across a window boundary."""
    rl = limiter(clock.at(59))
    assert all(r.allowed for r in hits(rl, "k", 3, limit=3, window=60))
    clock.at(60)
    assert all(r.allowed for r in hits(rl, "k", 3, limit=3, window=60))


def test_keys_and_window_lengths_are_counted_separately(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    hits(rl, "a", 2, limit=2, window=60)
    assert not rl.hit("a", 2, 60).allowed
    assert rl.hit("b", 2, 60).count == 1
    assert rl.hit("a", 2, 3600).count == 1


# -- sliding window --------------------------------------------------------------------------------
def test_sliding_weights_the_previous_window_by_its_remaining_overlap(clock: FakeClock) -> None:
    rl = limiter(clock.at(59), "sliding")
    assert all(r.allowed for r in hits(rl, "k", 10, limit=10, window=60))
    clock.at(90)  # 50% into the next window: the previous 10 weigh 5
    results = hits(rl, "k", 6, limit=10, window=60)
    assert [r.count for r in results] == [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    assert [r.allowed for r in results] == [True] * 5 + [False]


def test_sliding_estimate_falls_as_the_previous_window_slides_out(clock: FakeClock) -> None:
    rl = limiter(clock.at(30), "sliding")
    hits(rl, "k", 10, limit=20, window=60)
    clock.at(60)  # previous weighs 100%
    assert rl.peek("k", 20, 60).count == pytest.approx(11.0)
    clock.at(75)  # 75%
    assert rl.peek("k", 20, 60).count == pytest.approx(8.5)
    clock.at(105)  # 25%
    assert rl.peek("k", 20, 60).count == pytest.approx(3.5)
    clock.at(120)  # two windows on: forgotten
    assert rl.peek("k", 20, 60).count == pytest.approx(1.0)


def test_sliding_within_a_single_window_counts_like_fixed(clock: FakeClock) -> None:
    rl = limiter(clock.at(5), "sliding")
    results = hits(rl, "k", 4, limit=3, window=60)
    assert [r.allowed for r in results] == [True, True, True, False]
    assert [r.count for r in results] == [1.0, 2.0, 3.0, 4.0]


def _refused_within_the_window(rl: RateLimiter, clock: FakeClock) -> RateLimitResult:
    """Refused while this window's own count is below the limit: the wait is inside it."""
    clock.at(59)
    hits(rl, "k", 10, limit=10, window=60)
    clock.at(90)
    return hits(rl, "k", 6, limit=10, window=60)[-1]


def _refused_with_the_window_full(rl: RateLimiter, clock: FakeClock) -> RateLimitResult:
    """Refused with this window's own count past the limit: the wait runs into the next."""
    clock.at(10)
    return hits(rl, "k", 11, limit=10, window=60)[-1]


REFUSALS: list[Any] = [
    pytest.param(_refused_within_the_window, id="within-window"),
    pytest.param(_refused_with_the_window_full, id="into-next-window"),
]


@pytest.mark.parametrize("refuse", REFUSALS)
def test_sliding_refusal_has_a_positive_retry_after(
    clock: FakeClock, refuse: Callable[[RateLimiter, FakeClock], RateLimitResult]
) -> None:
    refused = refuse(limiter(clock, "sliding"), clock)
    assert not refused.allowed
    assert refused.retry_after > 0


@pytest.mark.parametrize(
    "refuse", [_refused_within_the_window, _refused_with_the_window_full], ids=["within", "next"]
)
def test_sliding_hit_after_waiting_retry_after_is_allowed(
    clock: FakeClock, refuse: Callable[[RateLimiter, FakeClock], RateLimitResult]
) -> None:
    rl = limiter(clock, "sliding")
    refused = refuse(rl, clock)
    assert not refused.allowed
    clock.advance(refused.retry_after)
    assert rl.hit("k", 10, 60).allowed


def test_sliding_retry_after_is_not_shorter_than_needed(clock: FakeClock) -> None:
    rl = limiter(clock, "sliding")
    refused = _refused_with_the_window_full(rl, clock)
    clock.advance(refused.retry_after - 1)
    assert not rl.peek("k", 10, 60).allowed


# -- peek, refund, reset ---------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_peek_does_not_count(clock: FakeClock, algorithm: str) -> None:
    rl = limiter(clock.at(10), algorithm)
    for _ in range(5):
        assert rl.peek("k", 1, 60) == RateLimitResult(True, 1, 1, 0.0)
    assert rl.hit("k", 1, 60).allowed
    assert not rl.hit("k", 1, 60).allowed


def test_peek_answers_for_the_next_hit(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    hits(rl, "k", 2, limit=3, window=60)
    assert rl.peek("k", 3, 60) == RateLimitResult(True, 3, 3, 0.0)
    rl.hit("k", 3, 60)
    assert rl.peek("k", 3, 60) == RateLimitResult(False, 4, 3, 50.0)


@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_refund_takes_one_hit_back(clock: FakeClock, algorithm: str) -> None:
    rl = limiter(clock.at(10), algorithm)
    hits(rl, "k", 2, limit=2, window=60)
    rl.refund("k", 60)
    assert rl.hit("k", 2, 60).allowed
    assert not rl.hit("k", 2, 60).allowed


def test_refund_of_an_unknown_key_is_a_no_op(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    rl.refund("never-hit", 60)
    assert rl.hit("never-hit", 1, 60).count == 1


def test_refund_never_takes_the_count_below_zero(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    rl.hit("k", 2, 60)
    for _ in range(3):
        rl.refund("k", 60)
    assert [r.count for r in hits(rl, "k", 3, limit=2, window=60)] == [1, 2, 3]


@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_reset_forgets_the_key(clock: FakeClock, algorithm: str) -> None:
    rl = limiter(clock.at(50), algorithm)
    hits(rl, "k", 5, limit=5, window=60)
    assert not rl.peek("k", 5, 60).allowed
    rl.reset("k", 60)
    assert rl.hit("k", 5, 60) == RateLimitResult(True, 1, 5, 0.0)


def test_reset_forgets_the_previous_window_of_a_sliding_count(clock: FakeClock) -> None:
    rl = limiter(clock.at(50), "sliding")
    hits(rl, "k", 5, limit=5, window=60)
    clock.at(70)  # the previous window's 5 still weigh 5 * 50/60
    assert not rl.peek("k", 5, 60).allowed
    rl.reset("k", 60)
    assert rl.hit("k", 5, 60) == RateLimitResult(True, 1.0, 5, 0.0)


def test_reset_leaves_other_keys_alone(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    hits(rl, "a", 2, limit=2, window=60)
    hits(rl, "b", 2, limit=2, window=60)
    rl.reset("a", 60)
    assert rl.hit("a", 2, 60).allowed
    assert not rl.hit("b", 2, 60).allowed


async def test_async_twins_count_peek_refund_and_reset(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    assert (await rl.ahit("k", 2, 60)).count == 1
    assert (await rl.apeek("k", 2, 60)).count == 2
    assert (await rl.ahit("k", 2, 60)).allowed
    refused = await rl.ahit("k", 2, 60)
    assert not refused.allowed
    assert refused.retry_after == 50.0
    await rl.arefund("k", 60)
    assert (await rl.apeek("k", 2, 60)).count == 3
    await rl.areset("k", 60)
    assert await rl.ahit("k", 2, 60) == RateLimitResult(True, 1, 2, 0.0)


# -- keys, configuration ---------------------------------------------------------------------------
ODD_KEYS = {
    "email": "alice+tag@example.com",
    "ipv6": "2001:db8::ff00:42:8329",
    "ipv6-bracketed-port": "[2001:db8::1]:443",
    "unicode": "ключ-鍵-ñ-🔑",
    "whitespace-and-control": "a b\tc\nd\r\x00\x7f",
    "memcached-unsafe": "key with spaces:and:colons" + "\x01" * 5,
    "lone-surrogate": "user\ud800@example.com",
    "10kb": "x" * 10_240,
    "empty": "",
}


@pytest.mark.parametrize("key", ODD_KEYS.values(), ids=ODD_KEYS.keys())
def test_any_string_is_a_usable_key(clock: FakeClock, key: str) -> None:
    rl = limiter(clock.at(10))
    assert [r.allowed for r in hits(rl, key, 3, limit=2, window=60)] == [True, True, False]
    assert rl.hit(key + "-other", 2, 60).count == 1
    rl.refund(key, 60)
    assert rl.peek(key, 2, 60).count == 3
    rl.reset(key, 60)
    assert rl.hit(key, 2, 60).count == 1


def test_long_keys_sharing_a_prefix_are_distinct(clock: FakeClock) -> None:
    rl = limiter(clock.at(10))
    base = "y" * 10_240
    hits(rl, base + "a", 1, limit=1, window=60)
    assert rl.hit(base + "b", 1, 60).allowed


def test_unknown_algorithm_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="token-bucket"):
        RateLimiter(algorithm="token-bucket")  # type: ignore[arg-type]


def test_cache_alias_defaults_to_the_rate_limit_setting(clock: FakeClock) -> None:
    cache_settings = {
        **settings.CACHES,
        "limits": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "rl"},
    }
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    app["RATE_LIMIT"] = {"CACHE": "limits"}
    with override_settings(CACHES=cache_settings, APPFRAMEWORK=app):
        rl = limiter(clock.at(10), alias=None)
        assert rl.cache is caches["limits"]
        rl.hit("k", 1, 60)
        caches["limits"].clear()
        assert rl.hit("k", 1, 60).count == 1
    # The setting's default, AUTO: the test settings' "default" is a LocMemCache.
    assert limiter(clock, alias=None).cache is database_store()


# -- atomicity: N threads, one key ------------------------------------------------------------------
THREADS = 8
PER_THREAD = 50
LIMIT = 100


def hammer(rl: RateLimiter, key: str) -> list[bool]:
    """THREADS threads each hit ``key`` PER_THREAD times, all released at once."""
    barrier = threading.Barrier(THREADS)
    outcomes: list[bool] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            mine = [rl.hit(key, LIMIT, 3600).allowed for _ in range(PER_THREAD)]
            with lock:
                outcomes.extend(mine)
        except BaseException as exc:  # surfaced in the test thread
            errors.append(exc)
        finally:
            if rl.cache_alias == REDIS_ALIAS:
                caches[REDIS_ALIAS].close()

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return outcomes


@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_concurrent_hits_on_locmem_allow_exactly_the_limit(
    clock: FakeClock, algorithm: str
) -> None:
    rl = limiter(clock.at(1800), algorithm)
    outcomes = hammer(rl, "shared")
    assert len(outcomes) == THREADS * PER_THREAD
    assert outcomes.count(True) == LIMIT
    assert rl.peek("shared", LIMIT, 3600).count == THREADS * PER_THREAD + 1


@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_concurrent_hits_on_redis_allow_exactly_the_limit(
    clock: FakeClock, redis_alias: str, algorithm: str
) -> None:
    rl = limiter(clock.at(1800), algorithm, alias=redis_alias)
    assert rl.cache.__class__.__name__ == "RedisCache"
    outcomes = hammer(rl, "shared")
    assert len(outcomes) == THREADS * PER_THREAD
    assert outcomes.count(True) == LIMIT
    assert rl.peek("shared", LIMIT, 3600).count == THREADS * PER_THREAD + 1


def test_redis_counts_refunds_and_resets_like_locmem(clock: FakeClock, redis_alias: str) -> None:
    rl = limiter(clock.at(10), alias=redis_alias)
    key = ODD_KEYS["unicode"] + ODD_KEYS["10kb"]
    assert [r.allowed for r in hits(rl, key, 3, limit=2, window=60)] == [True, True, False]
    rl.refund(key, 60)
    assert rl.peek(key, 2, 60).count == 3
    rl.reset(key, 60)
    assert rl.hit(key, 2, 60) == RateLimitResult(True, 1, 2, 0.0)
    clock.at(70)
    assert rl.hit(key, 2, 60).count == 1


# -- "anchored": the window opens at the first hit ------------------------------------------
def test_anchored_window_opens_at_the_first_hit_not_at_the_clocks_edge(clock: FakeClock) -> None:
    rl = limiter(clock.at(9.5), "anchored")  # half a second before a 10-s clock edge
    assert [r.allowed for r in hits(rl, "k", 3, 2, 10)] == [True, True, False]
    clock.at(10.5)  # past the clock's edge, 1 s after the first hit: still the same window
    blocked = rl.hit("k", 2, 10)
    assert not blocked.allowed and blocked.retry_after == pytest.approx(9)
    clock.at(19.5)  # 10 s after the first hit: a new window
    assert rl.hit("k", 2, 10).allowed


def test_anchored_refund_and_reset(clock: FakeClock) -> None:
    rl = limiter(clock, "anchored")
    hits(rl, "k", 2, 2, 60)
    assert not rl.peek("k", 2, 60).allowed
    rl.refund("k", 60)
    assert rl.peek("k", 2, 60).allowed
    hits(rl, "k", 1, 2, 60)
    rl.reset("k", 60)
    assert rl.hit("k", 2, 60).count == 1


def test_using_keeps_the_cache_prefix_and_clock(clock: FakeClock) -> None:
    rl = limiter(clock, "sliding")
    anchored = rl.using("anchored")
    assert (anchored.algorithm, anchored.prefix, anchored._clock) == ("anchored", rl.prefix, rl._clock)
