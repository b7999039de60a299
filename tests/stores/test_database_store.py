"""``appframework.database_store.DatabaseStore``: the cache API on the suite's own table.

Expiry is tested with the store's clock moved (``database_store.time``); the atomicity
tests run 8 threads on one key on PostgreSQL, each thread on its own connection, as
worker processes would be (SQLite's in-memory test database locks whole tables between
connections; the two-process test runs on a SQLite file).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from appframework import database_store as store_module
from appframework.auth.models import SharedRecord
from appframework.database_store import CULL_BATCH, CULL_EVERY, DatabaseStore
from appframework.ratelimit import RateLimiter

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now


@pytest.fixture
def store() -> DatabaseStore:
    return DatabaseStore()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock()
    monkeypatch.setattr(store_module, "time", moved)
    return moved


# -- values ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [True, False, 0, -7, 2**62, 2**70, 1.5, "", "ünïcødé ✓", {"p": "idp", "n": None}, [1, "a"]],
)
def test_a_value_comes_back_as_it_was_set(store: DatabaseStore, value: Any) -> None:
    store.set("k", value, 60)
    assert store.get("k") == value
    assert type(store.get("k")) is type(value)


def test_values_are_stored_as_json_never_pickle(store: DatabaseStore) -> None:
    store.set("k", {"user": "alice", "when": 1.5}, 60)
    row = SharedRecord.objects.get()
    assert row.value == '{"user":"alice","when":1.5}'
    with pytest.raises(TypeError):
        store.set("k", object(), 60)


def test_an_integer_lives_in_the_integer_column(store: DatabaseStore) -> None:
    store.set("k", 41, 60)
    assert SharedRecord.objects.values_list("value", "number").get() == (None, 41)


def test_a_missing_key_gives_the_default(store: DatabaseStore) -> None:
    assert store.get("nothing") is None
    assert store.get("nothing", "fallback") == "fallback"
    assert store.has_key("nothing") is False


def test_set_replaces_the_value_and_its_expiry(store: DatabaseStore, clock: Clock) -> None:
    store.set("k", 1, 10)
    store.set("k", "two", 100)
    clock.now += 50
    assert store.get("k") == "two"
    assert SharedRecord.objects.count() == 1


def test_a_key_longer_than_the_column_is_kept_by_its_digest(store: DatabaseStore) -> None:
    long_a, long_b = "a" * 300 + "1", "a" * 300 + "2"
    store.set(long_a, 1, 60)
    store.set(long_b, 2, 60)
    assert (store.get(long_a), store.get(long_b)) == (1, 2)
    assert all(len(key) <= 255 for key in SharedRecord.objects.values_list("key", flat=True))


def test_versions_and_prefixes_are_separate_keys() -> None:
    plain, prefixed = DatabaseStore(), DatabaseStore(params={"KEY_PREFIX": "other"})
    plain.set("k", 1, 60)
    plain.set("k", 2, 60, version=2)
    prefixed.set("k", 3, 60)
    assert (plain.get("k"), plain.get("k", version=2), prefixed.get("k")) == (1, 2, 3)


# -- expiry ---------------------------------------------------------------------------------------
def test_an_expired_value_is_never_read(store: DatabaseStore, clock: Clock) -> None:
    store.set("k", True, 10)
    store.set("n", 5, 10)
    clock.now += 9.9
    assert store.get("k") is True
    clock.now += 0.2
    assert store.get("k") is None
    assert store.get_many(["k", "n"]) == {}
    assert store.has_key("k") is False
    assert store.touch("k", 100) is False
    with pytest.raises(ValueError):
        store.incr("n")


def test_timeout_none_never_expires_and_zero_expires_at_once(
    store: DatabaseStore, clock: Clock
) -> None:
    store.set("forever", 1, None)
    store.set("gone", 1, 0)
    clock.now += 100 * 365 * 24 * 3600
    assert store.get("forever") == 1
    assert store.get("gone") is None


def test_touch_moves_the_expiry_of_a_live_key(store: DatabaseStore, clock: Clock) -> None:
    store.set("k", 1, 10)
    assert store.touch("k", 100) is True
    clock.now += 50
    assert store.get("k") == 1


def test_expired_rows_are_culled_a_bounded_batch_at_a_time(
    store: DatabaseStore, clock: Clock
) -> None:
    store.set_many({f"old-{i}": i for i in range(CULL_BATCH + 10)}, 10)
    clock.now += 20
    assert store.cull() == CULL_BATCH
    assert store.cull() == 10
    assert store.cull() == 0


def test_writes_cull_now_and_then(store: DatabaseStore, clock: Clock) -> None:
    store.set_many({f"old-{i}": i for i in range(5)}, 10)
    clock.now += 20
    for i in range(CULL_EVERY):
        store.set(f"new-{i}", i, 60)
    assert not SharedRecord.objects.filter(key__contains="old-").exists()
    assert SharedRecord.objects.count() == CULL_EVERY


# -- add, incr, delete ----------------------------------------------------------------------------
def test_add_only_when_absent_or_expired(store: DatabaseStore, clock: Clock) -> None:
    assert store.add("k", "first", 10) is True
    assert store.add("k", "second", 10) is False
    assert store.get("k") == "first"
    clock.now += 11
    assert store.add("k", "third", 10) is True
    assert store.get("k") == "third"


def test_a_lost_add_leaves_the_callers_transaction_usable(store: DatabaseStore) -> None:
    """The INSERT that loses runs in a savepoint: on PostgreSQL an error outside one
    would abort the request's whole transaction."""
    from django.db import transaction

    with transaction.atomic():
        store.add("k", 1, 60)
        assert store.add("k", 2, 60) is False
        assert store.get("k") == 1


def test_incr_and_decr_count_and_answer_the_new_value(store: DatabaseStore) -> None:
    store.add("n", 0, 60)
    assert [store.incr("n") for _ in range(3)] == [1, 2, 3]
    assert store.incr("n", 10) == 13
    assert store.decr("n", 4) == 9
    assert store.get("n") == 9


def test_incr_of_a_missing_key_is_a_value_error_and_of_text_a_type_error(
    store: DatabaseStore,
) -> None:
    with pytest.raises(ValueError):
        store.incr("missing")
    store.set("text", "abc", 60)
    with pytest.raises(TypeError):
        store.incr("text")


def test_incr_or_add_starts_a_counter_then_adds_to_it_keeping_its_expiry(
    store: DatabaseStore, clock: Clock
) -> None:
    assert store.incr_or_add("n", 1, 60) == 1
    clock.now += 30
    assert store.incr_or_add("n", 2, 60) == 3
    # The expiry is the first call's: 30 s later the counter is gone.
    clock.now += 31
    assert store.get("n") is None


def test_incr_or_add_starts_again_on_an_expired_counter(store: DatabaseStore, clock: Clock) -> None:
    store.incr_or_add("n", 5, 10)
    clock.now += 11
    assert store.incr_or_add("n", 1, 10) == 1
    clock.now += 9
    assert store.get("n") == 1


def test_incr_or_add_of_a_live_text_value_is_a_type_error_and_keeps_it(
    store: DatabaseStore, clock: Clock
) -> None:
    store.set("text", "abc", 60)
    with pytest.raises(TypeError):
        store.incr_or_add("text", 1, 60)
    assert store.get("text") == "abc"
    clock.now += 61
    assert store.incr_or_add("text", 1, 60) == 1  # expired text: a new counter


def test_a_count_and_an_increment_are_one_statement_each(
    store: DatabaseStore, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        store.incr_or_add("n", 1, 60)
    with django_assert_num_queries(1):
        assert store.incr("n") == 2
    with django_assert_num_queries(1):
        store.delete_many(["n", "other"])
    assert store.get("n") is None


def test_a_rate_limit_hit_on_the_store_is_one_statement(
    django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process-wide store has counted the earlier tests' writes: its every-50th-write
    # cull (a statement of its own, tested above) must not fall inside the count.
    monkeypatch.setattr(store_module, "CULL_EVERY", 10**9)
    limiter = RateLimiter(algorithm="fixed", prefix="test:one")
    assert isinstance(limiter.cache, DatabaseStore)
    for expected in (1, 2):
        with django_assert_num_queries(1):
            assert limiter.hit("k", 10, 60).count == expected


def test_delete_says_whether_it_removed_a_live_value(store: DatabaseStore) -> None:
    store.set("k", 1, 60)
    assert store.delete("k") is True
    assert store.delete("k") is False


def test_many_at_once(store: DatabaseStore) -> None:
    store.set_many({"a": 1, "b": {"x": 1}, "c": "three"}, 60)
    assert store.get_many(["a", "b", "missing"]) == {"a": 1, "b": {"x": 1}}
    store.delete_many(["a", "b"])
    assert store.get_many(["a", "b", "c"]) == {"c": "three"}


def test_clear_empties_the_table(store: DatabaseStore) -> None:
    store.set_many({"a": 1, "b": 2}, 60)
    store.clear()
    assert not SharedRecord.objects.exists()


# -- async ----------------------------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
async def test_the_async_api_reaches_the_same_rows(store: DatabaseStore) -> None:
    assert await store.aadd("n", 0, 60) is True
    assert await store.aadd("n", 5, 60) is False
    assert [await store.aincr("n") for _ in range(2)] == [1, 2]
    assert await store.adecr("n") == 1
    await store.aset_many({"a": True, "b": "x"}, 60)
    assert await store.aget_many(["a", "b", "n"]) == {"a": True, "b": "x", "n": 1}
    assert await store.ahas_key("a") is True
    assert await store.atouch("a", 120) is True
    assert await store.adelete("a") is True
    await store.adelete_many(["b"])
    assert await store.aget("b", "gone") == "gone"
    await store.aclear()
    assert await store.aget("n") is None


# -- atomicity: 8 threads, one key, PostgreSQL ----------------------------------------------------
THREADS = 8
PER_THREAD = 50


def race(work: Callable[[], Any]) -> list[Any]:
    """``work()`` PER_THREAD times in each of THREADS threads, all released at once;
    every result."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            barrier.wait()
            mine = [work() for _ in range(PER_THREAD)]
            with lock:
                results.extend(mine)
        except BaseException as exc:  # surfaced in the test thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_adds_of_one_key_let_exactly_one_win(store: DatabaseStore) -> None:
    outcomes = race(lambda: store.add("spent", 1, 60))
    assert outcomes.count(True) == 1
    assert len(outcomes) == THREADS * PER_THREAD


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_adds_replacing_an_expired_row_let_exactly_one_win(
    store: DatabaseStore,
) -> None:
    store.set("spent", "old", 0)  # there, and expired
    outcomes = race(lambda: store.add("spent", "new", 60))
    assert outcomes.count(True) == 1


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_each_see_their_own_count(store: DatabaseStore) -> None:
    store.add("n", 0, 60)
    counts = race(lambda: store.incr("n"))
    assert sorted(counts) == list(range(1, THREADS * PER_THREAD + 1))
    assert store.get("n") == THREADS * PER_THREAD


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_counts_of_one_new_key_each_see_their_own(store: DatabaseStore) -> None:
    counts = race(lambda: store.incr_or_add("n", 1, 60))
    assert sorted(counts) == list(range(1, THREADS * PER_THREAD + 1))


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("algorithm", ["fixed", "sliding"])
def test_concurrent_hits_on_the_store_allow_exactly_the_limit(algorithm: Any) -> None:
    limiter = RateLimiter(algorithm=algorithm, prefix="test:store")
    assert isinstance(limiter.cache, DatabaseStore)
    outcomes = race(lambda: limiter.hit("shared", 100, 3600).allowed)
    assert outcomes.count(True) == 100
