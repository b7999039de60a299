"""The demo's login page per request: this checkout / the baseline, the last commit
before the account pages became forms, class-based views and element templates.

    .venv/bin/python benchmarks/login_page.py [--baseline COMMIT] [--rounds 9]
        [--batch-seconds 0.2] [--quick | --smoke] [--json]

Needs git history holding the baseline (a worktree of it is made in a temporary folder
and removed at the end) and Redis (``REDIS_URL``; its database 12 is flushed). Each tree
runs in a process of its own (``login_page_child.py``): the demo's settings, middleware
and templates, in-memory SQLite, Redis as the cache (as docs/deploy.md advises: the
login throttle then costs both trees the same), PBKDF2 at 1,000 iterations (hashing
would otherwise be most of a login and tell nothing). Three requests, each a full WSGI
round trip as a fresh anonymous browser: ``GET /login``; a right password (a new
session, 302); a wrong one (the page again, with its error). CPU time; the trees take
turns in every round; ratios are medians of the per-round ratios. Target: <= 1.05.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import benchlib

HERE = Path(__file__).resolve().parent
#: "Accounts a project can make its own" started after this commit: its login page is
#: the one the account pages must not be slower than.
BASELINE = "76b519c0966f36b22727497015ccc15175818896"
TARGET = 1.05
SCENARIOS = {"get": "GET /login", "good": "right password", "wrong": "wrong password"}


class Side:
    """One tree's child process."""

    def __init__(self, tree: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "login_page_child.py"), str(tree)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.ask(None)
        assert line == "ready", line

    def ask(self, command: str | None) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if command is not None:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"the login page's child exited ({self.proc.wait()})")
        return line

    def batch(self, scenario: str, n: int) -> float:
        return float(self.ask(f"{scenario} {n}"))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def worktree(commit: str) -> Any:
    folder = Path(tempfile.mkdtemp(prefix="login-page-baseline-"))
    git = ["git", "-C", str(HERE.parent)]
    subprocess.run([*git, "worktree", "add", "--detach", str(folder), commit], check=True,
                   capture_output=True)  # fmt: skip
    try:
        yield folder
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(folder)], check=False)


def main() -> int:
    parser = benchlib.Parser(__doc__.split("\n")[0])
    parser.add_scaled("--rounds", int, 9, 5, smoke=2)
    parser.add_scaled("--batch-seconds", float, 0.2, 0.1, smoke=0.02)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        old = stack.enter_context(worktree(args.baseline))
        sides = {"now": Side(HERE.parent), "baseline": Side(old)}
        for side in sides.values():
            stack.callback(side.close)
        for name, side in sides.items():
            statuses = json.loads(side.ask("check"))
            expected = {"get": "200", "good": "302", "wrong": ("200", "400", "401", "422")}
            for key, status in statuses.items():
                assert status[:3] in expected[key], (name, key, status)
        print(
            f"{benchlib.platform()}; baseline {args.baseline[:12]}; {args.rounds} rounds, CPU time"
        )
        print(f"{'request':<18}{'N':>6}{'baseline us':>13}{'now us':>10}{'ratio':>8}")
        ratios: list[benchlib.Ratio] = []
        info: dict[str, float] = {}
        for key, label in SCENARIOS.items():
            warm = max(side.batch(key, 20) for side in sides.values())
            n = max(5, round(args.batch_seconds / warm))
            samples = benchlib.interleave(
                {name: partial(side.batch, key, n) for name, side in sides.items()},
                args.rounds,
                rotate=False,
            )
            ratio = benchlib.median_ratio(samples["now"], samples["baseline"])
            us = {name: sorted(v)[len(v) // 2] * 1e6 for name, v in samples.items()}
            print(f"{label:<18}{n:>6}{us['baseline']:>13.0f}{us['now']:>10.0f}{ratio:>8.3f}")
            ratios.append(benchlib.Ratio(f"now/baseline {label}", ratio, "<=", TARGET))
            info.update({f"{key} baseline us": us["baseline"], f"{key} now us": us["now"]})
    return benchlib.finish(args, "login_page", ratios, info)


if __name__ == "__main__":
    raise SystemExit(main())
