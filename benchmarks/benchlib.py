"""What the benchmark scripts share: the repository on ``sys.path``, the common options,
interleaved rounds, paired ratios, and the closing table of ratios against targets.

Every script parses its options with :class:`Parser` (``--quick``, ``--smoke``,
``--json``, and ``--rounds`` & co. whose default depends on the first two), times its
contenders with :func:`interleave`, and ends with :func:`finish`, which prints one line
per targeted ratio (``ok`` or ``MISSED``). With ``--json`` the human-readable report
goes to stderr and stdout carries only one JSON object::

    {"benchmark": "gate", "ratios": [{"name": "rules/Gate", "value": 5.8, "op": ">=",
     "target": 1.0, "ok": true}], "info": {"gate/direct": 5.6}}

which ``benchmarks/run_all.py`` collects into one table. Standard library only: the
GraphQL benchmark imports it inside its own virtualenvs too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # The scripts run as ``python benchmarks/x.py``: put the repository root on the path
    # for ``testproject`` (not an installed package) and the packages themselves.
    sys.path.insert(0, str(ROOT))

SECRET_KEY = "benchmark-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz"


def configure_django(**settings_: Any) -> None:
    """``settings.configure()`` (DEBUG off, a fixed SECRET_KEY, USE_TZ, then the
    benchmark's own settings) and ``django.setup()``: no settings module, no environment
    variables."""
    import django
    from django.conf import settings

    settings.configure(**{"DEBUG": False, "SECRET_KEY": SECRET_KEY, "USE_TZ": True, **settings_})
    django.setup()


def platform() -> str:
    import django

    return f"Django {django.get_version()}, Python {sys.version.split()[0]}"


# -- options ------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """ArgumentParser with the options every benchmark shares.

    ``measures`` adds ``--quick`` and ``--smoke`` (the values of the options added with
    :meth:`add_scaled` switch to their quick or smoke ones); ``reports`` adds ``--json``.
    ``--smoke`` implies ``--quick``: what a script does differently when quick it also
    does in its smoke form.
    """

    def __init__(self, doc: str, *, measures: bool = True, reports: bool = True) -> None:
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
        self._scaled: dict[str, tuple[Any, Any, Any]] = {}
        self.stdout: TextIO = sys.stdout
        if measures:
            self.add_argument(
                "--quick",
                action="store_true",
                help="fewer rounds / shorter batches: a rougher reading in a fraction of the time",
            )
            self.add_argument(
                "--smoke",
                action="store_true",
                help="the quickest form (for CI): every ratio once, from the smallest runs that "
                "still produce it; a reading of whether it runs, not of how fast",
            )
        if reports:
            self.add_argument(
                "--json",
                action="store_true",
                help="print only one JSON object with the ratios on stdout; the report goes to stderr",
            )

    def add_scaled(
        self,
        flag: str,
        type_: type,
        default: Any,
        quick: Any,
        help_: str = "",
        *,
        smoke: Any = None,
    ) -> None:
        """An option whose default is ``default``, ``quick`` with --quick, and ``smoke``
        (``quick`` if not given) with --smoke."""
        smoke = quick if smoke is None else smoke
        self._scaled[flag.lstrip("-").replace("-", "_")] = (default, quick, smoke)
        self.add_argument(
            flag,
            type=type_,
            default=None,
            help=f"{help_} (default {default}; {quick} with --quick, {smoke} with --smoke)",
        )

    def add_clock(self, default: str) -> None:
        self.add_argument(
            "--clock",
            choices=("cpu", "wall"),
            default=default,
            help=f"cpu = this process's CPU time (time.process_time: robust to other load), "
            f"wall = time.perf_counter (default {default})",
        )

    def parse_args(self, args: Sequence[str] | None = None) -> argparse.Namespace:  # type: ignore[override]
        ns = super().parse_args(args)
        if getattr(ns, "smoke", False):
            ns.quick = True
        form = 2 if getattr(ns, "smoke", False) else 1 if getattr(ns, "quick", False) else 0
        for dest, values in self._scaled.items():
            if getattr(ns, dest) is None:
                setattr(ns, dest, values[form])
        if hasattr(ns, "clock"):
            ns.timer = time.process_time if ns.clock == "cpu" else time.perf_counter
        if getattr(ns, "json", False):
            ns.json_out = sys.stdout
            sys.stdout = sys.stderr  # every print() of the report; the JSON goes to json_out
        return ns


# -- measuring ----------------------------------------------------------------------------
def interleave(
    batches: dict[str, Callable[[], float]],
    rounds: int,
    *,
    rotate: bool = True,
    after_round: Callable[[], object] | None = None,
) -> dict[str, list[float]]:
    """Run ``rounds`` rounds of every batch (each returns seconds per operation) and
    return the samples by name. The order is reversed every other round and, with
    ``rotate``, also rotated by one more each round, so that no contender always runs
    first or next to the same neighbour. Without ``rotate`` neighbours in ``batches``
    stay back to back (only who goes first alternates): use it for pairs."""
    names = list(batches)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names) if rotate else 0
        order = names[k:] + names[:k]
        if r % 2:
            order.reverse()
        for name in order:
            samples[name].append(batches[name]())
        if after_round is not None:
            after_round()
    return samples


def median_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of the per-round ratios ``a[i] / b[i]``: both sides of a round ran back to
    back, so load from other processes hits them alike."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def instructions(argv: Sequence[str]) -> int:
    """Instructions valgrind's callgrind counts while ``python argv...`` runs: the same
    number on a quiet or a busy machine."""
    import re

    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    done = subprocess.run([*cmd, *argv], capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", done.stderr)
    assert match, done.stderr[-2000:]
    return int(match.group(1))


def instructions_by_side(
    script: str, scenario: str, sides: Sequence[str], *, high: int = 300, low: int = 100
) -> dict[str, float]:
    """Instructions per request of each side of ``scenario``, from a script that serves
    ``n`` requests of one side when run as ``script --_count SIDE SCENARIO n``: a run of
    ``high`` requests minus a run of ``low``, over ``high - low``, so that start-up and
    set-up cancel out."""

    def run(side: str, n: int) -> int:
        return instructions([script, "--_count", side, scenario, str(n)])

    return {side: (run(side, high) - run(side, low)) / (high - low) for side in sides}


# -- reporting ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Ratio:
    name: str
    value: float
    op: str  # "<=" or ">="
    target: float

    @property
    def ok(self) -> bool:
        return self.value <= self.target if self.op == "<=" else self.value >= self.target

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ratio:
        return cls(data["name"], float(data["value"]), data["op"], float(data["target"]))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "op": self.op,
            "target": self.target,
            "ok": self.ok,
        }


_ROW = "{:<18}{:<36}{:>9}  {:<9}{}"


def table_row(benchmark: str, name: str, measured: str, target: str, verdict: str) -> str:
    return _ROW.format(benchmark, name, measured, target, verdict)


def table(rows: Iterable[tuple[str, Ratio]]) -> list[str]:
    """Lines of the ratio table: benchmark | ratio | measured | target | ok/MISSED."""
    lines = [table_row("benchmark", "ratio", "measured", "target", "verdict")]
    for benchmark, r in rows:
        lines.append(
            table_row(
                benchmark,
                r.name,
                f"{r.value:.3f}",
                f"{r.op} {r.target}",
                "ok" if r.ok else "MISSED",
            )
        )
    return lines


def finish(
    args: argparse.Namespace,
    benchmark: str,
    ratios: list[Ratio],
    info: dict[str, float] | None = None,
) -> int:
    """Print the targeted ratios (and, with --json, the JSON object); returns 0: a
    benchmark that ran has done its job, a missed target is a reading, not a failure."""
    print()
    print("\n".join(table((benchmark, r) for r in ratios)), flush=True)
    if getattr(args, "json", False):
        result = {
            "benchmark": benchmark,
            "ratios": [r.to_json() for r in ratios],
            "info": info or {},
        }
        print(json.dumps(result), file=args.json_out, flush=True)
    return 0


# -- child processes (Linux) ------------------------------------------------------------------
def die_with_parent() -> None:
    """``preexec_fn`` of a child: SIGTERM when the benchmark dies, however it dies
    (prctl PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def stop_group(proc: subprocess.Popen[Any], grace: float = 15.0) -> None:
    """SIGTERM to the process we started (a Celery worker then finishes its tasks and
    stops its pool), then SIGKILL to its process group after ``grace`` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # pool children left behind, if any
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
