"""The demo's login page per request: this checkout / the baseline, the last commit
before the account pages became forms, class-based views and element templates.

    .venv/bin/python benchmarks/login_page.py [--baseline COMMIT] [--rounds 9]
        [--batch-seconds 0.2] [--quick | --smoke] [--json] [--peer] [--no-baseline]

Needs git history holding the baseline (a worktree of it is made in a temporary folder
and removed at the end) and Redis (``REDIS_URL``; its database 12 is flushed). Each tree
runs in a process of its own (``login_page_child.py``): the demo's settings, middleware
and templates, in-memory SQLite, Redis as the cache (as docs/deploy.md advises: the
login throttle then costs both trees the same), PBKDF2 at 1,000 iterations (hashing
would otherwise be most of a login and tell nothing). Three requests, each a full WSGI
round trip as a fresh anonymous browser: ``GET /login``; a right password (a new
session, 302); a wrong one (the page again, with its error). CPU time; the trees take
turns in every round; ratios are medians of the per-round ratios. Target: <= 1.05.

``--peer`` adds a third process, django-allauth's own login page (``login_peers/``: its
virtualenv from ``bash benchmarks/login_peers/setup_env.sh``) on the same terms, and a
now/allauth ratio per request: where a page that does what ours does stands, to read
ours against, not a target. ``--no-baseline`` leaves the baseline out (no worktree).
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
PEER_PYTHON = HERE.parent / ".venvs" / "bench-login-peers" / "bin" / "python"
PEER_SETUP = "bash benchmarks/login_peers/setup_env.sh"
#: "Accounts a project can make its own" started after this commit: its login page is
#: the one the account pages must not be slower than.
BASELINE = "76b519c0966f36b22727497015ccc15175818896"
TARGET = 1.05
SCENARIOS = {"get": "GET /login", "good": "right password", "wrong": "wrong password"}


class Side:
    """One login page's child process: a tree's (``login_page_child.py``), or allauth's
    (``login_peers/allauth_child.py``, in its own virtualenv); both answer alike."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            command,
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


def tree_side(tree: Path) -> Side:
    return Side([sys.executable, str(HERE / "login_page_child.py"), str(tree)])


def peer_side() -> tuple[Side, str] | None:
    """allauth's side and its version, or None (and why, printed) without its virtualenv:
    the peer is a reading beside ours, not a reason to stop."""
    if not PEER_PYTHON.exists():
        print(f"--peer: no {PEER_PYTHON.relative_to(HERE.parent)}; run {PEER_SETUP}; skipped")
        return None
    version = subprocess.run(
        [str(PEER_PYTHON), "-c", "import allauth; print(allauth.__version__)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return Side([str(PEER_PYTHON), str(HERE / "login_peers" / "allauth_child.py")]), version


def main() -> int:
    parser = benchlib.Parser(__doc__.split("\n")[0])
    parser.add_scaled("--rounds", int, 9, 5, smoke=2)
    parser.add_scaled("--batch-seconds", float, 0.2, 0.1, smoke=0.02)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument(
        "--peer",
        action="store_true",
        help=f"also django-allauth's login page, informational (its virtualenv: {PEER_SETUP})",
    )
    parser.add_argument(
        "--no-baseline", action="store_true", help="leave the baseline out (no worktree)"
    )
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        sides = {"now": tree_side(HERE.parent)}
        stack.callback(sides["now"].close)
        if not args.no_baseline:
            old = stack.enter_context(worktree(args.baseline))
            sides["baseline"] = tree_side(old)
            stack.callback(sides["baseline"].close)
        peer = peer_side() if args.peer else None
        if peer is not None:
            sides["allauth"] = peer[0]
            stack.callback(peer[0].close)
            # This checkout in the middle: back to back with each side it is read against,
            # in every round (the order only reverses).
            order = [name for name in ("baseline", "now", "allauth") if name in sides]
            sides = {name: sides[name] for name in order}
        for name, side in sides.items():
            statuses = json.loads(side.ask("check"))
            expected = {"get": "200", "good": "302", "wrong": ("200", "400", "401", "422")}
            for key, status in statuses.items():
                assert status[:3] in expected[key], (name, key, status)
        about = [benchlib.platform()]
        if "baseline" in sides:
            about.append(f"baseline {args.baseline[:12]}")
        if peer is not None:
            about.append(f"django-allauth {peer[1]}")
        print(f"{'; '.join(about)}; {args.rounds} rounds, CPU time")
        # The columns after request and N: (cell, heading, width, decimals).
        columns: list[tuple[str, str, int, int]] = []
        if "baseline" in sides:
            columns += [("baseline", "baseline us", 13, 0), ("now", "now us", 10, 0)]
            columns.append(("ratio", "ratio", 8, 3))
        else:
            columns.append(("now", "now us", 10, 0))
        if "allauth" in sides:
            columns += [("allauth", "allauth us", 12, 0), ("peer", "now/allauth", 13, 3)]
        print(f"{'request':<18}{'N':>6}" + "".join(f"{h:>{w}}" for _, h, w, _ in columns))
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
            cells = {name: sorted(v)[len(v) // 2] * 1e6 for name, v in samples.items()}
            info.update({f"{key} {name} us": us for name, us in cells.items()})
            if "baseline" in sides:
                ratio = benchlib.median_ratio(samples["now"], samples["baseline"])
                ratios.append(benchlib.Ratio(f"now/baseline {label}", ratio, "<=", TARGET))
                cells["ratio"] = ratio
            if "allauth" in sides:
                cells["peer"] = benchlib.median_ratio(samples["now"], samples["allauth"])
                info[f"{key} now/allauth"] = cells["peer"]
            row = "".join(f"{cells[name]:>{w}.{d}f}" for name, _, w, d in columns)
            print(f"{label:<18}{n:>6}{row}")
        if "allauth" in sides:
            print("now/allauth: informational, no target")
    return benchlib.finish(args, "login_page", ratios, info)


if __name__ == "__main__":
    raise SystemExit(main())
