"""Per-call cost of ``Gate.allows_sync`` / ``await Gate.allows`` vs django-rules.

Run from the repository root:

    .venv/bin/python benchmarks/gate.py [--rounds 15] [--calls 20000] [--clock wall|cpu]

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
denied one. Reported: the median over rounds of the per-call time, and the median of the
per-round ratios rules/gate (above 1.0 means the Gate is faster). No receiver is
connected to ``gate_evaluated``, as in a project that does not audit.
Target: rules/gate >= 1.0 for allows_sync.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import django  # noqa: E402
from django.conf import settings  # noqa: E402

TARGET = 1.0


def configure() -> None:
    # Minimal settings: neither contender needs a database or the project's apps.
    settings.configure(
        DEBUG=False,
        SECRET_KEY="benchmark-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "rules"],
        DATABASES={},
        USE_TZ=True,
    )
    django.setup()


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20000, help="calls per contender per round")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time

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
        "gate": lambda n: sync_batch(gate_call, user, own, other, n, clock),
        "gate async": lambda n: async_batch(gate, user, own, other, n, clock, loop),
        "rules": lambda n: sync_batch(rules_call, user, own, other, n, clock),
        "direct": lambda n: sync_batch(pred, user, own, other, n, clock),
    }
    names = list(contenders)

    # Warm-up.
    for name in names:
        contenders[name](max(1000, args.calls // 10))

    samples: dict[str, list[float]] = {name: [] for name in names}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            if r % 2:
                order.reverse()
            for name in order:
                samples[name].append(contenders[name](args.calls))
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()
        loop.close()

    def ratio(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(samples[a], samples[b], strict=True))

    print(
        f"django-rules {getattr(rules, 'VERSION', '?')}, Django {django.get_version()}, Python {sys.version.split()[0]}"
    )
    print(
        f"{args.rounds} rounds x {args.calls} calls per contender, clock={args.clock}; per-call medians:"
    )
    for name in names:
        med = statistics.median(samples[name]) * 1e6
        spread = (min(samples[name]) * 1e6, max(samples[name]) * 1e6)
        print(f"  {name:<11} {med:7.3f} us/call   (min {spread[0]:.3f}, max {spread[1]:.3f})")
    sync_ratio = ratio("rules", "gate")
    async_ratio = ratio("rules", "gate async")
    print(
        f"  rules/gate        = {sync_ratio:5.2f}x   (target >= {TARGET:.1f}: {'OK' if sync_ratio >= TARGET else 'MISSED'})"
    )
    print(f"  rules/gate async  = {async_ratio:5.2f}x   (sync rules vs awaited Gate.allows)")
    print(f"  gate async/gate   = {ratio('gate async', 'gate'):5.2f}x")
    print(
        f"  gate/direct       = {ratio('gate', 'direct'):5.2f}x   (Gate overhead over the bare predicate)"
    )


if __name__ == "__main__":
    main()
