"""Runs every benchmark and prints one table of their ratios against the targets.

    .venv/bin/python benchmarks/run_all.py [--quick | --smoke] [--only NAME,...] [--strict]

``scripts/bench`` installs what they need first (``.[all,bench]`` into .venv, the
GraphQL virtualenvs) and then runs this. The benchmarks run one after the other (side by
side they would measure each other), each as its own process with ``--json`` (and
``--quick``): its report streams through stderr and its ratios come back as one JSON
object on stdout (see benchlib.py). The GraphQL benchmark runs through
``benchmarks/graphql/run.sh``, in its own virtualenvs.

``--smoke`` is the form CI runs: every benchmark once in its quickest form, to show that
each still runs and still produces all its ratios; the ratios it prints are rough.

Exit status: 0 when every benchmark ran, MISSED ratios included (they are readings of a
noisy machine, not failures); 1 when a benchmark failed to run or gave no result, or,
with ``--strict``, when a target was missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import benchlib

HERE = Path(__file__).resolve().parent
BENCHMARKS: dict[str, list[str]] = {
    "middleware_stack": [sys.executable, str(HERE / "middleware_stack.py")],
    "gate": [sys.executable, str(HERE / "gate.py")],
    "hash_password": [sys.executable, str(HERE / "hash_password.py")],
    "tenancy": [sys.executable, str(HERE / "tenancy.py")],
    "tenancy_rls": [sys.executable, str(HERE / "tenancy_rls.py")],
    "api_frameworks": [sys.executable, str(HERE / "api_frameworks.py")],
    "webhooks": [sys.executable, str(HERE / "webhooks.py")],
    "mfa": [sys.executable, str(HERE / "mfa.py")],
    "passkeys": [sys.executable, str(HERE / "passkeys.py")],
    "headless": [sys.executable, str(HERE / "headless.py")],
    "cluster": [sys.executable, str(HERE / "cluster.py")],
    "graphql": ["bash", str(HERE / "graphql" / "run.sh")],
}


def run(name: str, form: list[str]) -> tuple[list[benchlib.Ratio], str | None]:
    """Run one benchmark; returns its ratios, or an error message."""
    cmd = [*BENCHMARKS[name], "--json", *form]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=HERE.parent)
    if done.returncode != 0:
        return [], f"exit status {done.returncode}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        result = json.loads(lines[-1])
        return [benchlib.Ratio.from_json(r) for r in result["ratios"]], None
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        return [], f"no JSON result on stdout ({type(exc).__name__})"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    forms = parser.add_mutually_exclusive_group()
    forms.add_argument("--quick", action="store_true", help="fewer rounds: a rougher reading")
    forms.add_argument(
        "--smoke", action="store_true", help="each benchmark in its quickest form (what CI runs)"
    )
    parser.add_argument(
        "--only", help=f"comma-separated subset of: {', '.join(BENCHMARKS)} (default: all)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",")] if args.only else list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")

    form = ["--smoke"] if args.smoke else ["--quick"] if args.quick else []
    label = f" ({form[0]})" if form else ""
    started = time.monotonic()
    rows: list[tuple[str, benchlib.Ratio]] = []
    errors: dict[str, str] = {}
    took: dict[str, float] = {}
    for name in names:
        print(f"\n===== {name}{label}", flush=True)
        t0 = time.monotonic()
        ratios, error = run(name, form)
        took[name] = time.monotonic() - t0
        rows += [(name, r) for r in ratios]
        if error:
            errors[name] = error
    total = time.monotonic() - started

    print(f"\n===== all benchmarks{label}")
    print("\n".join(benchlib.table(rows)))
    for name, error in errors.items():
        print(benchlib.table_row(name, f"(no result: {error})", "-", "-", "ERROR"))
    print(
        "\n"
        + ", ".join(f"{n} {t:.0f} s" for n, t in took.items())
        + f"; total {total:.0f} s. Ratios are medians of per-round paired ratios; "
        "on a busy machine they move by about +-0.1 between runs"
        + (" (more in the smoke form: a MISSED there is not a failure)." if args.smoke else ".")
    )
    missed = [r for _, r in rows if not r.ok]
    if errors:
        return 1
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
