"""Per-call cost of ``Gate.allows_sync`` / ``await Gate.allows`` vs django-rules.

Run from the repository root:

    .venv/bin/python benchmarks/gate.py [--rounds 15] [--calls 20000] [--clock wall|cpu] [--quick] [--json]

One ability, the same predicate for every contender, plain objects (no database):

    lambda user, post: post.author_id == user.id

* gate        - ``Gate().define("delete-post", pred)``; ``gate.allows_sync(user, "delete-post", post)``
* gate async  - the same Gate; ``await gate.allows(user, "delete-post", post)`` inside one
                running asyncio loop (the loop is entered once per batch, not per call)
* rules       - ``rules.add_perm("delete_post", rules.predicate(pred))``;
                ``rules.has_perm("delete_post", user, post)`` (django-rules 3.5)
* direct      - ``pred(user, post)``: the predicate alone, for reference

Each contender runs in interleaved rounds (the order is rotated every round), each
round timing ``--calls`` calls per contender, half with an allowed post and half with a
denied one (wall clock by default: a batch is a few milliseconds). Reported: the median
over rounds of the per-call time, and the median of the per-round ratios rules/Gate
(django-rules ``has_perm`` time / ``Gate.allows_sync`` time: above 1.0 means the Gate is
faster). No receiver is connected to ``gate_evaluated``, as in a project that does not
audit. ``--quick``: 7 rounds x 10000 calls. ``--json``: see benchlib.py.
Target: rules/Gate >= 1.0 for allows_sync.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import benchlib

TARGET = 1.0


def configure() -> None:
    # Minimal settings: neither contender needs a database or the project's apps.
    benchlib.configure_django(
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "rules"],
        DATABASES={},
    )


def build() -> dict[str, Any]:
    import rules

    from appframework.authorization.gate import Gate

    def pred(user: Any, post: Any) -> bool:
        return post.author_id == user.id

    gate = Gate()
    gate.define("delete-post", pred)
    if rules.perm_exists("delete_post"):
        rules.remove_perm("delete_post")
    rules.add_perm("delete_post", rules.predicate(pred))

    user = SimpleNamespace(id=1, pk=1)
    own = SimpleNamespace(author_id=1)
    other = SimpleNamespace(author_id=2)

    # Sanity: all contenders agree on both posts.
    for post, expected in ((own, True), (other, False)):
        assert pred(user, post) is expected
        assert gate.allows_sync(user, "delete-post", post) is expected
        assert asyncio.run(gate.allows(user, "delete-post", post)) is expected
        assert rules.has_perm("delete_post", user, post) is expected
    return {"gate": gate, "rules": rules, "pred": pred, "user": user, "own": own, "other": other}


def sync_batch(
    call: Callable[[Any, Any], Any],
    user: Any,
    own: Any,
    other: Any,
    n: int,
    clock: Callable[[], float],
) -> float:
    half = n // 2
    start = clock()
    for _ in range(half):
        call(user, own)
        call(user, other)
    return (clock() - start) / (2 * half)


def async_batch(
    gate: Any,
    user: Any,
    own: Any,
    other: Any,
    n: int,
    clock: Callable[[], float],
    loop: asyncio.AbstractEventLoop,
) -> float:
    allows = gate.allows
    half = n // 2

    async def run() -> float:
        start = clock()
        for _ in range(half):
            await allows(user, "delete-post", own)
            await allows(user, "delete-post", other)
        return (clock() - start) / (2 * half)

    return loop.run_until_complete(run())


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled("--calls", int, 20000, 10000, "calls per contender per round", smoke=2000)
    parser.add_clock("wall")
    args = parser.parse_args()
    clock = args.timer

    configure()
    env = build()
    gate, rules, pred = env["gate"], env["rules"], env["pred"]
    user, own, other = env["user"], env["own"], env["other"]

    allows_sync = gate.allows_sync
    has_perm = rules.has_perm

    def gate_call(u: Any, p: Any) -> Any:
        return allows_sync(u, "delete-post", p)

    def rules_call(u: Any, p: Any) -> Any:
        return has_perm("delete_post", u, p)

    loop = asyncio.new_event_loop()
    contenders: dict[str, Callable[[int], float]] = {
        "gate": partial(sync_batch, gate_call, user, own, other, clock=clock),
        "gate async": partial(async_batch, gate, user, own, other, clock=clock, loop=loop),
        "rules": partial(sync_batch, rules_call, user, own, other, clock=clock),
        "direct": partial(sync_batch, pred, user, own, other, clock=clock),
    }

    # Warm-up.
    for batch in contenders.values():
        batch(max(1000, args.calls // 10))

    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        samples = benchlib.interleave(
            {name: partial(batch, args.calls) for name, batch in contenders.items()},
            args.rounds,
            after_round=gc.collect,
        )
    finally:
        if gc_was_enabled:
            gc.enable()
        loop.close()

    def ratio(a: str, b: str) -> float:
        return benchlib.median_ratio(samples[a], samples[b])

    print(f"django-rules {getattr(rules, 'VERSION', '?')}, {benchlib.platform()}")
    print(
        f"{args.rounds} rounds x {args.calls} calls per contender, clock={args.clock}; per-call medians:"
    )
    for name, values in samples.items():
        med = statistics.median(values) * 1e6
        print(
            f"  {name:<11} {med:7.3f} us/call   (min {min(values) * 1e6:.3f}, max {max(values) * 1e6:.3f})"
        )
    info = {
        "rules/Gate async": ratio("rules", "gate async"),
        "Gate async/Gate": ratio("gate async", "gate"),
        "Gate/direct": ratio("gate", "direct"),
    }
    print(
        f"  rules/Gate async  = {info['rules/Gate async']:5.2f}x   (sync rules vs awaited Gate.allows)"
    )
    print(f"  Gate async/Gate   = {info['Gate async/Gate']:5.2f}x")
    print(
        f"  Gate/direct       = {info['Gate/direct']:5.2f}x   (Gate overhead over the bare predicate)"
    )
    ratios = [
        benchlib.Ratio("rules/Gate (has_perm/allows_sync)", ratio("rules", "gate"), ">=", TARGET)
    ]
    return benchlib.finish(args, "gate", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
