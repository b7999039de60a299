"""Load test of the demo over real HTTP: gunicorn with 2 workers, driven by wrk.

Run from the repository root (needs ``wrk``, a Debian package: ``apt-get install wrk``;
gunicorn comes with the ``bench`` extra):

    .venv/bin/python benchmarks/load.py [--duration 60] [--connections 8] [--threads 2]
        [--email reader@example.com --password reader-password] [--database-url URL]
        [--quick] [--json]

Set-up: a temporary directory holding the SQLite database (``SQLITE_PATH``); the server's
environment gets ``DJANGO_SETTINGS_MODULE=testproject.settings``, a random
``APP_SECRET_KEY``, ``DEBUG=0`` and no ``DATABASE_URL`` unless ``--database-url`` is
given (then that PostgreSQL database is migrated and seeded: use a scratch one). ``manage.py migrate`` and ``manage.py seed_demo``, then
``gunicorn -w 2 testproject.wsgi:application`` (sync workers, this Python) on a free
port of 127.0.0.1, polled until it answers.

Login over HTTP as a seeded user (default reader@example.com, a reader of tenant Acme):
GET /login (the ``csrf_token`` cookie and the form's ``csrfmiddlewaretoken``), POST /login, a 302 and
a session cookie; GET /account/mfa with that cookie must then answer 200.

Two scenarios, one after the other, each a wrk run of ``--duration`` seconds (60; 10
with --quick) with ``--connections`` (8) connections on ``--threads`` (2) threads, every
request carrying the session cookie and the CSRF cookie:

* ``graphql`` - POST /graphql, a JSON body with a query for the newest 20 posts with
  their authors and ``me { email }``, headers ``X-CSRF-Token`` and ``Origin`` (what a
  browser's fetch sends). A 2xx response counts as unexpected unless its body has
  ``"data":{"posts":`` and no ``"errors"``.
* ``page`` - GET /account/mfa, a page behind ``auth_required`` (401 without a session,
  so a session lost under load shows up as a non-2xx). A 2xx response counts as
  unexpected unless its body names the signed-in email.

Both requests are first sent once and checked (status 200; the GraphQL answer has data,
no errors, and ``me.email`` is the signed-in user). During the runs the wrk script
``benchmarks/load/scenario.lua`` counts every response whose status is not 2xx (3xx
included: wrk's own "Non-2xx or 3xx responses" counts only statuses above 399) and every
2xx with an unexpected body, per thread, summed in ``done()``.

Reported per scenario: requests, throughput (requests/s over wrk's measured duration),
latency p50/p90/p99/max (wrk's histogram, ms), non-2xx responses, unexpected bodies,
socket errors (connect/read/write/timeout; wrk gives up on a request after 2 s). wrk's
own output is printed verbatim too. Target: 0 non-2xx, 0 unexpected bodies and 0 socket
errors in each scenario.

Exit status: 0 when both scenarios ran and met the target; 1 when any response was
non-2xx or unexpected, or a socket error occurred; 2 when wrk or gunicorn is missing or
the set-up failed. ``--json``: the report goes to stderr, and stdout carries one JSON
object ``{"benchmark": "load", "ratios": [...], "scenarios": [...], "info": {...}}``
(``ratios``: one "non-2xx + unexpected + socket errors <= 0" entry per scenario, the
shape ``run_all.py`` reads; see benchlib.py). To look into a failed run:
``LOAD_BENCH_KEEP=1`` keeps the temporary directory (gunicorn's log, the database).

The numbers are those of the whole machine: wrk, both workers and the database share
its CPUs, so run it on an otherwise idle machine (the load average is printed).
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import benchlib

from testproject.prepare import DemoSetupError, demo_environment, free_port, prepare_database

HERE = Path(__file__).resolve().parent
ROOT = benchlib.ROOT
LUA_SCRIPT = HERE / "load" / "scenario.lua"
WORKERS = 2
CSRF_COOKIE = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
DEFAULT_EMAIL = "reader@example.com"
DEFAULT_PASSWORD = "reader-password"
PAGE_PATH = "/account/mfa"
GRAPHQL_QUERY = """query Front {
  posts(limit: 20) { id title body author { id name email } }
  me { email }
}"""


class SetupError(Exception):
    """The run could not start (a tool missing, the server not answering, login failed)."""


# -- the server ---------------------------------------------------------------------------
def _die_with_parent() -> None:
    # Linux: SIGTERM to gunicorn when this script dies, however it dies (PR_SET_PDEATHSIG).
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def server_env(tmpdir: Path, database_url: str | None) -> dict[str, str]:
    env = demo_environment(
        # The demo's own settings, even when started from pytest (which exports the
        # test settings' module).
        DJANGO_SETTINGS_MODULE="testproject.settings",
        SQLITE_PATH=str(tmpdir / "load.sqlite3"),
        APP_SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="0",
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    base_url: str
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the gunicorn master (it stops its workers), SIGKILL to its whole
        process group after ``grace`` seconds."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # workers left behind, if any
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)


def start_gunicorn(env: dict[str, str], tmpdir: Path, timeout: float = 30.0) -> Server:
    port = free_port()
    log = tmpdir / "gunicorn.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-w",
                str(WORKERS),
                "-b",
                f"127.0.0.1:{port}",
                *control_socket_off(),
                "testproject.wsgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    server = Server(proc, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise SetupError(f"gunicorn exited with status {proc.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.base_url + "/login", timeout=2) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise SetupError(
                f"gunicorn did not answer within {timeout:.0f} s:\n{server.log_tail()}"
            )
        time.sleep(0.2)


def control_socket_off() -> list[str]:
    """``--no-control-socket`` where gunicorn has one: by default it listens on
    ~/.gunicorn/gunicorn.ctl, shared by every gunicorn of the user. Older releases (the
    extra allows >= 22) have no control socket and refuse the option."""
    done = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--help"], capture_output=True, text=True
    )
    return ["--no-control-socket"] if "--no-control-socket" in done.stdout else []


# -- the session --------------------------------------------------------------------------
class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the login's 302 is the answer we check, not the page behind it


@dataclass
class Session:
    cookie_header: str
    csrf_token: str
    email: str


def _form_token(html: str) -> str:
    # The login page renders Django's {% csrf_token %} field.
    marker = 'name="csrfmiddlewaretoken" value="'
    start = html.find(marker)
    if start < 0:
        raise SetupError("GET /login: no csrfmiddlewaretoken field in the form")
    start += len(marker)
    return html[start : html.index('"', start)]


def log_in(base_url: str, email: str, password: str) -> Session:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), _NoRedirect)
    with opener.open(base_url + "/login", timeout=10) as response:
        token = _form_token(response.read().decode())
    form = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token, "email": email, "password": password}
    )
    request = urllib.request.Request(
        base_url + "/login", data=form.encode(), headers={"Origin": base_url}, method="POST"
    )
    try:
        with opener.open(request, timeout=10) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    if status != 302:
        raise SetupError(
            f"POST /login as {email}: status {status}, expected 302 "
            "(wrong --email/--password, or a seed without that user?)"
        )
    cookies = {cookie.name: cookie.value or "" for cookie in jar}
    if CSRF_COOKIE not in cookies or len(cookies) < 2:
        raise SetupError(
            f"POST /login: expected a session and a {CSRF_COOKIE} cookie, got {sorted(cookies)}"
        )
    return Session(
        cookie_header="; ".join(f"{name}={value}" for name, value in cookies.items()),
        csrf_token=cookies[CSRF_COOKIE],
        email=email,
    )


# -- the scenarios ------------------------------------------------------------------------
@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    path: str
    headers: dict[str, str]
    body: str
    expect: str  # a 2xx body must contain it
    reject: str  # ... and must not contain this one ("" = no check)

    def describe(self) -> str:
        return f"{self.method} {self.path}"


def scenarios(base_url: str, session: Session) -> list[Scenario]:
    common = {"Cookie": session.cookie_header}
    return [
        Scenario(
            name="graphql",
            method="POST",
            path="/graphql",
            headers={
                **common,
                "Content-Type": "application/json",
                "Accept": "application/json",
                CSRF_HEADER: session.csrf_token,
                "Origin": base_url,
            },
            body=json.dumps({"query": GRAPHQL_QUERY, "operationName": "Front"}),
            expect='"data":{"posts":',
            reject='"errors"',
        ),
        Scenario(
            name="page",
            method="GET",
            path=PAGE_PATH,
            headers={**common, "Accept": "text/html"},
            body="",
            expect=session.email,
            reject="",
        ),
    ]


def check_once(base_url: str, scenario: Scenario, email: str) -> None:
    """One request as wrk will send it: 200 and the expected body, before any timing."""
    request = urllib.request.Request(
        base_url + scenario.path,
        data=scenario.body.encode() if scenario.body else None,
        headers=scenario.headers,
        method=scenario.method,
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, body = response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode(errors="replace")
    where = f"{scenario.name}: {scenario.describe()}"
    if status != 200:
        raise SetupError(f"{where}: status {status}, expected 200:\n{body[:500]}")
    if scenario.expect not in body or (scenario.reject and scenario.reject in body):
        raise SetupError(f"{where}: unexpected body:\n{body[:500]}")
    if scenario.name == "graphql":
        data = json.loads(body)
        answer = data.get("data") or {}
        if data.get("errors") or not answer.get("posts"):
            raise SetupError(f"{where}: no posts, or errors:\n{body[:500]}")
        if (answer.get("me") or {}).get("email") != email:
            raise SetupError(
                f"{where}: me.email is not {email} (the session did not count):\n{body[:500]}"
            )


@dataclass
class Result:
    scenario: Scenario
    command: list[str]
    output: str
    numbers: dict[str, Any]

    @property
    def requests(self) -> int:
        return int(self.numbers["requests"])

    @property
    def seconds(self) -> float:
        return float(self.numbers["duration_us"]) / 1e6

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def socket_errors(self) -> int:
        return sum(int(v) for v in self.numbers["socket_errors"].values())

    @property
    def failures(self) -> int:
        return (
            int(self.numbers["non_2xx"]) + int(self.numbers["unexpected_body"]) + self.socket_errors
        )

    def ms(self, key: str) -> float:
        return float(self.numbers["latency_us"][key]) / 1000

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.scenario.name,
            "request": self.scenario.describe(),
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "throughput": round(self.throughput, 1),
            "latency_ms": {k: round(self.ms(k), 2) for k in ("mean", "p50", "p90", "p99", "max")},
            "non_2xx": int(self.numbers["non_2xx"]),
            "unexpected_body": int(self.numbers["unexpected_body"]),
            "socket_errors": self.numbers["socket_errors"],
            "first_bad_response": self.numbers.get("first_bad", ""),
        }


def run_wrk(base_url: str, scenario: Scenario, args: Any) -> Result:
    command = [
        "wrk",
        f"--threads={args.threads}",
        f"--connections={args.connections}",
        f"--duration={args.duration}s",
        "--latency",
        f"--script={LUA_SCRIPT}",
        base_url + scenario.path,
    ]
    env = dict(
        os.environ,
        LOAD_METHOD=scenario.method,
        LOAD_BODY=scenario.body,
        LOAD_HEADERS="\n".join(f"{k}: {v}" for k, v in scenario.headers.items()),
        LOAD_EXPECT=scenario.expect,
        LOAD_REJECT=scenario.reject,
    )
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=args.duration + 60
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SetupError(f"wrk exited with status {done.returncode}:\n{output}")
    for line in output.splitlines():
        if line.startswith("LOAD_RESULT "):
            numbers = json.loads(line.removeprefix("LOAD_RESULT "))
            break
    else:
        raise SetupError(f"wrk printed no LOAD_RESULT line:\n{output}")
    # Shown verbatim, minus the line that only carries the numbers to this script.
    shown = "\n".join(line for line in output.splitlines() if not line.startswith("LOAD_RESULT "))
    return Result(scenario, command, shown, numbers)


# -- report -------------------------------------------------------------------------------
_ROW = "{:<9}{:<20}{:>9}{:>10}{:>9}{:>9}{:>9}{:>9}{:>10}{:>8}"


def report(results: list[Result]) -> None:
    print()
    print(
        _ROW.format(
            "scenario",
            "request",
            "requests",
            "req/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "non-2xx",
            "bad body",
            "socket",
        )
    )
    for r in results:
        print(
            _ROW.format(
                r.scenario.name,
                r.scenario.describe(),
                r.requests,
                f"{r.throughput:.1f}",
                f"{r.ms('p50'):.1f}",
                f"{r.ms('p90'):.1f}",
                f"{r.ms('p99'):.1f}",
                r.numbers["non_2xx"],
                r.numbers["unexpected_body"],
                r.socket_errors,
            )
        )
    print()
    for r in results:
        verdict = "ok" if r.failures == 0 else "FAILED"
        print(
            f"{r.scenario.name}: non-2xx + unexpected bodies + socket errors = {r.failures} (target 0) {verdict}"
        )
        if r.failures and r.numbers.get("first_bad"):
            print(f"  first bad response: {r.numbers['first_bad']}")


def tool_versions() -> dict[str, str]:
    import django

    versions = {"python": sys.version.split()[0], "django": django.get_version()}
    with contextlib.suppress(Exception):
        import gunicorn

        versions["gunicorn"] = str(gunicorn.__version__)
    with contextlib.suppress(Exception):
        done = subprocess.run(["wrk", "--version"], capture_output=True, text=True)
        versions["wrk"] = (done.stdout + done.stderr).splitlines()[0].split(" Copyright")[0]
    return versions


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--duration", int, 60, 10, "seconds per scenario", smoke=2)
    parser.add_argument("--connections", type=int, default=8, help="open connections (default 8)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument(
        "--email", default=DEFAULT_EMAIL, help=f"seeded user (default {DEFAULT_EMAIL})"
    )
    parser.add_argument("--password", default=DEFAULT_PASSWORD, help="their password")
    parser.add_argument(
        "--database-url",
        help="serve from this PostgreSQL database (migrated and seeded: use a scratch one) "
        "instead of a temporary SQLite file",
    )
    args = parser.parse_args()
    if args.connections < args.threads:
        parser.error("--connections must be at least --threads (wrk opens them per thread)")

    if shutil.which("wrk") is None:
        print("wrk is not installed: `apt-get install wrk` (Debian/Ubuntu).", file=sys.stderr)
        return 2
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        print(
            f"gunicorn is not installed in {sys.executable}: "
            '`.venv/bin/pip install -e ".[all,bench]"`.',
            file=sys.stderr,
        )
        return 2

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)  # run the finally blocks: no stray gunicorn

    signal.signal(signal.SIGTERM, terminate)

    versions = tool_versions()
    tmpdir = Path(tempfile.mkdtemp(prefix="load-bench-"))
    server: Server | None = None
    results: list[Result] = []
    try:
        env = server_env(tmpdir, args.database_url)
        try:
            prepare_database(env)
        except DemoSetupError as exc:
            raise SetupError(str(exc)) from None
        server = start_gunicorn(env, tmpdir)
        session = log_in(server.base_url, args.email, args.password)
        plan = scenarios(server.base_url, session)
        for scenario in plan:
            check_once(server.base_url, scenario, session.email)
        print(
            f"{benchlib.platform()}, gunicorn {versions.get('gunicorn', '?')} "
            f"({WORKERS} sync workers), {versions.get('wrk', 'wrk')}; {os.cpu_count()} CPUs, "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
            f"{'PostgreSQL' if args.database_url else 'SQLite file'}; signed in as {session.email}"
        )
        print(
            f"{len(plan)} scenarios x {args.duration} s, {args.connections} connections, "
            f"{args.threads} wrk threads",
            flush=True,
        )
        for scenario in plan:
            print(f"\n== {scenario.name}: {scenario.describe()}")
            result = run_wrk(server.base_url, scenario, args)
            print("$ " + " ".join(result.command))
            print(result.output, flush=True)
            results.append(result)
        if server.proc.poll() is not None:
            raise SetupError(f"gunicorn died during the run:\n{server.log_tail()}")
    except SetupError as exc:
        print(f"load: {exc}", file=sys.stderr)
        if server is not None and "gunicorn" not in str(exc):
            print(f"gunicorn's log (last lines):\n{server.log_tail()}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.stop()
        if os.environ.get("LOAD_BENCH_KEEP"):
            print(f"kept {tmpdir}", file=sys.stderr)
        else:
            shutil.rmtree(tmpdir, ignore_errors=True)

    report(results)
    failed = any(r.failures for r in results)
    if getattr(args, "json", False):
        out = {
            "benchmark": "load",
            "ratios": [
                benchlib.Ratio(f"{r.scenario.name} failed responses", r.failures, "<=", 0).to_json()
                for r in results
            ],
            "scenarios": [r.to_json() for r in results],
            "info": {
                **versions,
                "cpus": os.cpu_count(),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "duration": args.duration,
                "connections": args.connections,
                "threads": args.threads,
                "workers": WORKERS,
                "database": "postgresql" if args.database_url else "sqlite",
                "user": args.email,
            },
        }
        print(json.dumps(out), file=args.json_out, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
