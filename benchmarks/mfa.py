"""Per-call cost of ``appframework.mfa``'s code checks vs pyotp's own ``TOTP.verify``.

Run from the repository root:

    .venv/bin/python benchmarks/mfa.py [--rounds 15] [--calls 3000] [--db-calls 300] [--clock wall|cpu] [--quick] [--json]

One base32 secret of 160 bits (``generate_secret()``), the code of the current
30-second step as the valid code, six digits that match no step within one of now as
the invalid one:

* ours valid / ours invalid   - ``verify_totp(secret, code)`` (valid_window=1: the
                                step before, now, the step after)
* pyotp valid / pyotp invalid - ``pyotp.TOTP(secret).verify(code, valid_window=1)``:
                                the floor, same input (a secret string and a code),
                                same window
* pyotp prebuilt              - the same with one ``TOTP`` object built beforehand
                                (reference only)

and, on an in-memory SQLite database with a minimal user model
(``BenchUser(MfaEnrollable)``, created with the schema editor):

* consume live      - ``verify_and_consume(user, code)`` with a live code: each call
                      is a new 30-second step (the clock the TOTP check reads is moved
                      on by one step per call, codes precomputed), so each is accepted
                      and records ``mfa_last_counter``: a transaction, SELECT ... FOR
                      UPDATE (a plain SELECT on SQLite), one UPDATE
* consume recovery miss - a well-formed recovery code that is not stored: the TOTP
                      check fails fast, then all 10 stored hashes are checked; no write

Interleaved rounds (order rotated every round), ``--calls`` calls per round for the
pure checks and ``--db-calls`` for the database ones, wall clock by default; medians
over rounds. Ratios ours/pyotp are medians of the per-round paired ratios. Target
verify_totp/pyotp verify <= 1.5 for the valid and the invalid code; the database
calls are reported in microseconds (no target). ``--quick``: 7 rounds x 2000 calls
(200 database calls). ``--json``: see benchlib.py.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from importlib import metadata
from typing import Any

import benchlib

TARGET = 1.5
RECOVERY_CODES = 10


def configure() -> None:
    benchlib.configure_django(
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    )


def build() -> dict[str, Any]:
    import pyotp
    from django.db import connection, models

    from appframework.mfa import generate_recovery_codes, generate_secret, verify_totp
    from appframework.mfa.flows import verify_and_consume
    from appframework.mfa.models import MfaEnrollable
    from appframework.mfa.recovery import hash_recovery_code

    class BenchUser(MfaEnrollable, models.Model):
        class Meta:
            app_label = "auth"

        def __str__(self) -> str:
            return f"bench user {self.pk}"

    with connection.schema_editor() as editor:
        editor.create_model(BenchUser)

    secret = generate_secret()
    totp = pyotp.TOTP(secret)
    now = time.time()
    live = {totp.at(now + 30 * k) for k in (-2, -1, 0, 1, 2)}
    invalid = next(f"{n:06d}" for n in range(0, 1_000_000, 7919) if f"{n:06d}" not in live)
    codes = generate_recovery_codes(RECOVERY_CODES)
    missing = next(c for c in generate_recovery_codes(5) if c not in codes)
    user = BenchUser.objects.create(
        mfa_secret=secret,
        mfa_enabled=True,
        mfa_recovery_codes=[hash_recovery_code(c) for c in codes],
    )

    # Sanity: both sides agree, and the database paths answer as timed.
    valid = totp.now()
    assert verify_totp(secret, valid) is True
    assert pyotp.TOTP(secret).verify(valid, valid_window=1) is True
    assert verify_totp(secret, invalid) is False
    assert pyotp.TOTP(secret).verify(invalid, valid_window=1) is False
    assert verify_and_consume(user, missing) is False
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == RECOVERY_CODES
    return {
        "pyotp": pyotp,
        "secret": secret,
        "totp": totp,
        "invalid": invalid,
        "missing": missing,
        "user": user,
        "verify_totp": verify_totp,
        "verify_and_consume": verify_and_consume,
    }


def check_batch(
    call: Callable[[str], Any], codes: Callable[[], str], n: int, clock: Callable[[], float]
) -> float:
    code = codes()
    start = clock()
    for _ in range(n):
        call(code)
    return (clock() - start) / n


class SteppingClock:
    """What ``appframework.mfa.totp`` reads as ``time``: ``time()`` is ``t``, moved on
    by one 30-second step per consumed call, so every call has a fresh live code."""

    def __init__(self, start: float) -> None:
        self.t = start

    def time(self) -> float:
        return self.t


def consume_live_batch(
    env: dict[str, Any], clock_: SteppingClock, n: int, clock: Callable[[], float]
) -> float:
    from appframework.mfa import totp as totp_module

    consume, user, totp = env["verify_and_consume"], env["user"], env["totp"]
    steps = [clock_.t + 30 * (k + 1) for k in range(n)]
    codes = [totp.at(t) for t in steps]
    accepted = 0
    real_time, totp_module.time = totp_module.time, clock_  # type: ignore[assignment]
    try:
        start = clock()
        for t, code in zip(steps, codes, strict=True):
            clock_.t = t
            accepted += consume(user, code)
        elapsed = clock() - start
    finally:
        totp_module.time = real_time
    assert accepted == n, f"{n - accepted} live codes refused"
    return elapsed / n


def consume_miss_batch(env: dict[str, Any], n: int, clock: Callable[[], float]) -> float:
    consume, user, missing = env["verify_and_consume"], env["user"], env["missing"]
    refused = 0
    start = clock()
    for _ in range(n):
        refused += not consume(user, missing)
    elapsed = clock() - start
    assert refused == n
    return elapsed / n


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled("--calls", int, 3000, 2000, "verify calls per contender per round", smoke=300)
    parser.add_scaled("--db-calls", int, 300, 200, "verify_and_consume calls per round", smoke=30)
    parser.add_clock("wall")
    args = parser.parse_args()
    clock = args.timer

    configure()
    env = build()
    pyotp, secret, totp = env["pyotp"], env["secret"], env["totp"]
    verify_totp, invalid = env["verify_totp"], env["invalid"]
    TOTP = pyotp.TOTP

    def ours(code: str) -> bool:
        return verify_totp(secret, code)

    def floor(code: str) -> bool:
        return TOTP(secret).verify(code, valid_window=1)

    def prebuilt(code: str) -> bool:
        return totp.verify(code, valid_window=1)

    def valid() -> str:
        return totp.now()

    def wrong() -> str:
        return invalid

    stepping = SteppingClock(time.time())
    contenders: dict[str, Callable[[], float]] = {
        "ours valid": partial(check_batch, ours, valid, args.calls, clock),
        "pyotp valid": partial(check_batch, floor, valid, args.calls, clock),
        "ours invalid": partial(check_batch, ours, wrong, args.calls, clock),
        "pyotp invalid": partial(check_batch, floor, wrong, args.calls, clock),
        "pyotp prebuilt": partial(check_batch, prebuilt, valid, args.calls, clock),
        "consume live": partial(consume_live_batch, env, stepping, args.db_calls, clock),
        "consume miss": partial(consume_miss_batch, env, args.db_calls, clock),
    }

    # Warm-up.
    for batch in contenders.values():
        batch()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        samples = benchlib.interleave(contenders, args.rounds, after_round=gc.collect)
    finally:
        if gc_was_enabled:
            gc.enable()

    def ratio(a: str, b: str) -> float:
        return benchlib.median_ratio(samples[a], samples[b])

    def us(name: str) -> float:
        return statistics.median(samples[name]) * 1e6

    print(f"pyotp {metadata.version('pyotp')}, SQLite :memory:, {benchlib.platform()}")
    print(
        f"{args.rounds} rounds x {args.calls} verify calls / {args.db_calls} database calls "
        f"per contender, clock={args.clock}; per-call medians:"
    )
    for name, values in samples.items():
        print(
            f"  {name:<15} {us(name):8.2f} us/call   "
            f"(min {min(values) * 1e6:.2f}, max {max(values) * 1e6:.2f})"
        )
    info = {
        "verify_totp valid us": us("ours valid"),
        "verify_totp invalid us": us("ours invalid"),
        "pyotp verify valid us": us("pyotp valid"),
        "pyotp verify invalid us": us("pyotp invalid"),
        "ours valid/pyotp prebuilt": ratio("ours valid", "pyotp prebuilt"),
        "verify_and_consume live us": us("consume live"),
        "verify_and_consume recovery miss us": us("consume miss"),
    }
    print(
        f"  ours valid/pyotp prebuilt = {info['ours valid/pyotp prebuilt']:5.2f}x   "
        "(against a TOTP object built once)"
    )
    print(
        f"  verify_and_consume: live code {info['verify_and_consume live us']:.1f} us, "
        f"recovery-code miss over {RECOVERY_CODES} hashes "
        f"{info['verify_and_consume recovery miss us']:.1f} us (no target)"
    )
    ratios = [
        benchlib.Ratio(
            "verify_totp/pyotp verify (valid)", ratio("ours valid", "pyotp valid"), "<=", TARGET
        ),
        benchlib.Ratio(
            "verify_totp/pyotp verify (invalid)",
            ratio("ours invalid", "pyotp invalid"),
            "<=",
            TARGET,
        ),
    ]
    return benchlib.finish(args, "mfa", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
