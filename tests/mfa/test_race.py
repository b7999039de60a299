"""A code is spent once even when several requests spend it at the same moment.

``verify_and_consume`` re-reads the user row with ``SELECT ... FOR UPDATE`` in a
transaction: of eight threads presenting the same recovery code, or the same TOTP code,
at once, exactly one succeeds. Row locks are PostgreSQL's; SQLite serialises whole
writes and is not measured here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pyotp
import pytest
from django.db import connections

from appframework.mfa import verify_and_consume
from appframework.mfa.recovery import generate_recovery_codes, hash_recovery_code
from testproject.blog.models import User
from tests.conftest import enable_totp

THREADS = 8
TRIALS = 50


def race(prepare: Callable[[int], str], user_id: int) -> list[list[bool]]:
    """TRIALS rounds; before each, ``prepare(trial)`` (main thread) resets the row and
    returns the code; then THREADS threads spend that code at once. Each round's
    results, one per thread."""
    results: list[list[bool]] = [[] for _ in range(TRIALS)]
    errors: list[BaseException] = []
    codes: list[str] = [""] * TRIALS
    lock = threading.Lock()
    ready = threading.Barrier(THREADS + 1, timeout=60)
    go = threading.Barrier(THREADS, timeout=60)
    done = threading.Barrier(THREADS + 1, timeout=60)

    def worker() -> None:
        try:
            for trial in range(TRIALS):
                ready.wait()
                user = User.objects.get(pk=user_id)  # each thread its own instance
                go.wait()
                ok = verify_and_consume(user, codes[trial])
                with lock:
                    results[trial].append(ok)
                done.wait()
        except BaseException as exc:
            errors.append(exc)
            for barrier in (ready, go, done):
                barrier.abort()
        finally:
            connections.close_all()

    workers = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in workers:
        thread.start()
    try:
        for trial in range(TRIALS):
            codes[trial] = prepare(trial)
            ready.wait()
            done.wait()
    except threading.BrokenBarrierError:
        pass
    finally:
        for thread in workers:
            thread.join(timeout=60)
    assert not errors, errors
    return results


@pytest.fixture
def enabled(user: Any) -> tuple[Any, str]:
    return user, enable_totp(user)[0]


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_one_recovery_code_spent_by_eight_threads_at_once_succeeds_exactly_once(
    enabled: tuple[Any, str],
) -> None:
    user, _ = enabled
    spare = [hash_recovery_code(c) for c in generate_recovery_codes(3)]

    def prepare(trial: int) -> str:
        fresh = generate_recovery_codes(1)[0]
        User.objects.filter(pk=user.pk).update(
            mfa_recovery_codes=[spare[0], hash_recovery_code(fresh), *spare[1:]]
        )
        return fresh

    results = race(prepare, user.pk)
    wins = [r.count(True) for r in results]
    assert all(len(r) == THREADS for r in results)
    assert wins == [1] * TRIALS, (
        f"trials with more than one success: {sum(w > 1 for w in wins)} of {TRIALS}; "
        f"successes: {sum(wins)}"
    )
    assert User.objects.get(pk=user.pk).mfa_recovery_codes == spare


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_one_totp_code_spent_by_eight_threads_at_once_succeeds_exactly_once(
    enabled: tuple[Any, str],
) -> None:
    user, secret = enabled
    totp = pyotp.TOTP(secret)

    def prepare(trial: int) -> str:
        User.objects.filter(pk=user.pk).update(mfa_last_counter=None)
        return totp.now()

    results = race(prepare, user.pk)
    wins = [r.count(True) for r in results]
    assert all(len(r) == THREADS for r in results)
    assert wins == [1] * TRIALS, (
        f"trials with more than one success: {sum(w > 1 for w in wins)} of {TRIALS}; "
        f"successes: {sum(wins)}"
    )
