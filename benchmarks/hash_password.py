"""appframework's password hashing vs Django's, at the same PBKDF2 iteration count.

Run from the repository root:

    .venv/bin/python benchmarks/hash_password.py [--rounds 11] [--calls 1] [--clock cpu|wall] [--quick] [--json]

Compares
  * ``appframework.auth.hash_password(pw)``      vs ``django...hashers.make_password(pw)``
  * ``appframework.auth.verify_password(pw, h)`` vs ``django...hashers.check_password(pw, h)``
with Django's default ``PBKDF2PasswordHasher`` (PASSWORD_HASHERS left at Django's default,
APPFRAMEWORK["AUTH"]["PASSWORD_ITERATIONS"] left at 0 = Django's default count). Both
verifiers check the same Django-made hash. In every round each appframework function and
its Django counterpart run back to back (which goes first alternates by round), timing
``--calls`` calls each; ms is the median of the per-round means and the ratio is the
median of the per-round paired ratios, so load from other processes on the machine
hits both sides alike. A last section times both with 1-iteration hashes, which shows
the only code that differs (the Python around the PBKDF2 call) without the noise. Times
are this process's CPU time by default (``--clock wall`` for perf_counter): on a shared
2-core machine wall time mostly measures the neighbours. ``--quick``: 7 rounds.
``--json``: see benchlib.py.
Target: hash_password/make_password <= 1.05 and verify_password/check_password <= 1.05.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from collections.abc import Callable
from functools import partial

import benchlib

TARGET = 1.05
PASSWORD = "correct horse battery staple"


def configure() -> None:
    benchlib.configure_django(
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes"],
        DATABASES={},
        APPFRAMEWORK={},
    )


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 11, 7, smoke=2)
    parser.add_argument("--calls", type=int, default=1, help="calls per operation per round")
    parser.add_clock("cpu")
    args = parser.parse_args()
    clock = args.timer

    configure()
    from django.contrib.auth.hashers import PBKDF2PasswordHasher, check_password, make_password

    from appframework.auth import hash_password, verify_password

    ours = hash_password(PASSWORD)
    theirs = make_password(PASSWORD)
    iterations = PBKDF2PasswordHasher.iterations
    # Same format, same cost, and each side verifies the other's hash.
    assert ours.split("$")[:2] == ["pbkdf2_sha256", str(iterations)], ours
    assert theirs.split("$")[:2] == ["pbkdf2_sha256", str(iterations)], theirs
    assert verify_password(PASSWORD, theirs) and check_password(PASSWORD, ours)
    assert not verify_password("wrong", theirs) and not check_password("wrong", ours)

    ops: dict[str, Callable[[], object]] = {
        "hash_password": lambda: hash_password(PASSWORD),
        "make_password": lambda: make_password(PASSWORD),
        "verify_password": lambda: verify_password(PASSWORD, theirs),
        "check_password": lambda: check_password(PASSWORD, theirs),
    }
    pairs = (("hash_password", "make_password"), ("verify_password", "check_password"))

    def timed(name: str) -> float:
        op = ops[name]
        start = clock()
        for _ in range(args.calls):
            op()
        return (clock() - start) / args.calls

    # Listed pair by pair and not rotated: the two sides of a pair always run back to back,
    # and which side (and which pair) goes first alternates by round.
    samples = benchlib.interleave(
        {name: partial(timed, name) for name in ops}, args.rounds, rotate=False
    )

    med = {n: statistics.median(v) * 1e3 for n, v in samples.items()}
    print(
        f"{benchlib.platform()}; PBKDF2-SHA256, "
        f"{iterations} iterations; {args.rounds} rounds x {args.calls} call(s), {args.clock} clock;\n"
        "ms = median of round means, ratio = median of per-round paired ratios"
    )
    print(f"{'appframework':<18}{'ms':>9}   {'django':<16}{'ms':>9}{'ratio':>8}")
    ratios = []
    for a, d in pairs:
        ratio = benchlib.median_ratio(samples[a], samples[d])
        ratios.append(benchlib.Ratio(f"{a}/{d}", ratio, "<=", TARGET))
        print(f"{a:<18}{med[a]:>9.1f}   {d:<16}{med[d]:>9.1f}{ratio:>8.3f}")
    # Noise-free view of the only code that differs: the Python around the PBKDF2 call.
    # With 1-iteration hashes the key derivation is negligible, so timeit's min shows
    # each function's own overhead (salt generation included on the hashing side).
    one = PBKDF2PasswordHasher().encode(PASSWORD, "benchmarksalt0123456789", iterations=1)
    default_iterations = PBKDF2PasswordHasher.iterations
    PBKDF2PasswordHasher.iterations = 1  # both sides read the class attribute
    try:
        assert hash_password(PASSWORD).startswith("pbkdf2_sha256$1$")
        assert make_password(PASSWORD).startswith("pbkdf2_sha256$1$")
        overhead = {
            name: min(timeit.repeat(fn, number=2000, repeat=7)) / 2000 * 1e6
            for name, fn in (
                ("hash_password", lambda: hash_password(PASSWORD)),
                ("make_password", lambda: make_password(PASSWORD)),
                ("verify_password", lambda: verify_password(PASSWORD, one)),
                ("check_password", lambda: check_password(PASSWORD, one)),
            )
        }
    finally:
        PBKDF2PasswordHasher.iterations = default_iterations
    print("per-call overhead outside PBKDF2 (1-iteration hashes, timeit min):")
    for a, d in pairs:
        delta = overhead[a] - overhead[d]
        print(
            f"  {a} {overhead[a]:.1f} us vs {d} {overhead[d]:.1f} us: {delta:+.1f} us "
            f"= {delta / (med[d] * 1e3):+.6%} of a {iterations}-iteration call"
        )
    return benchlib.finish(args, "hash_password", ratios)


if __name__ == "__main__":
    sys.exit(main())
