"""Webhook delivery throughput: a keep-alive HTTP loop (the floor) vs deliveries through
Celery on Redis, where the time goes, and what ``fire()`` to 1,000 endpoints costs its
caller.

Run from the repository root (Redis must listen on 127.0.0.1:6379; its database 12 is
flushed before and after):

    .venv/bin/python benchmarks/webhooks.py [--deliveries 1000] [--endpoints 10] [--rounds 3]
        [--pool prefork:4] [--other-pools threads:8,prefork:2] [--quick] [--json]

Set-up: ``appframework_webhooks`` with ``django.contrib.contenttypes``/``auth`` and
``appframework`` (``settings.configure``), a SQLite file in a temporary directory (WAL,
synchronous=NORMAL, as several processes share it) or, with ``DATABASE_URL=postgres://...``,
a scratch PostgreSQL database created next to the named one and dropped at the end;
``ALLOWED_NETWORKS`` 127.0.0.0/8. The receiver is ``webhooks_receiver.py`` in a process of
its own: asyncio, raw HTTP/1.1, keep-alive, ``200`` with an empty body, under 0.1 ms of CPU
per request (printed), so it is never the bottleneck. Every endpoint has a secret: each
delivery carries both signatures, and one received delivery is checked with
``verify_signature`` / ``verify_webhook``.

1. Floor - a ``requests.Session`` keep-alive loop POSTing the same JSON body, signed per
   request with ``appframework_webhooks.signing.sign``: deliveries/s.
2. End to end - ``--deliveries`` deliveries (1000; 300 with --quick) as N events x
   ``--endpoints`` M endpoints (10; below the fan-out threshold, so fire() publishes the M
   jobs itself) with ``WebhookManager().fire_sync``, outside any transaction, consumed
   by a real worker (``python -m celery -A webhooks:celery_app worker --pool P -c C``,
   without gossip, mingle and heartbeat; Celery's Django fix-up installed, as a project's
   celery.py gets it from DJANGO_SETTINGS_MODULE: database connections are closed
   around every task). Time from just before the first fire() to the moment the receiver
   got the last of the N x M POSTs: deliveries/s, with the delivery log on (default) and
   off (``DELIVERY_LOG`` False). Each round of the ``--pool`` worker with the log on also
   runs the floor, back to back: the ratio celery/floor is the median of the per-round
   ratios. With the same pool the script also measures, to see where the time goes:
   a no-op task (Celery's own per-task cost), a task that runs only the library's HTTP
   attempt (``deliver_once``), and the log on with database connections kept across
   tasks. ``--other-pools`` (threads:8,prefork:2; none with --quick) adds the log on/off
   runs of other pools. The default ``--pool``, prefork:4, was the fastest of prefork:2,
   prefork:4, threads:4, threads:8 and solo on a 2-core machine: the threads pool runs the
   tasks' Python under one GIL, i.e. on one core. CPU per delivery of each process (this one, which publishes;
   the worker and its children; the receiver; redis-server) is read for every run.
   In-process, without Celery: the floor loop, ``deliver_once``, and the job called
   directly (log off, log on, log on with a new connection per call), interleaved.
3. fire() to 1,000 endpoints (``--fire-rounds`` 21; 7): the caller's wall time and its
   queries (CaptureQueriesContext; exactly one is asserted), inside
   ``transaction.atomic()`` (the publish waits for the commit, timed apart) and outside
   (on_commit runs at once and publishes one FanOutWebhookJob: counted in the caller's
   time; one message on the queue is asserted). No worker runs; the queue is purged after.
   For comparison, publishing the 1,000 jobs one by one (what the fan-out job does in a
   worker) is timed once.

Times are wall clock (several processes work together). Targets: celery/floor >= 0.5
(the ``--pool`` worker, log on); fire() <= 50 ms and 1 query, in and outside a
transaction. ``--json``: see benchlib.py. To look into a stalled or odd run:
``WEBHOOKS_BENCH_LOGLEVEL=INFO`` (the workers' log level; logging costs worker CPU) and
``WEBHOOKS_BENCH_KEEP=1`` (keep the temporary directory: workers' logs, SQLite file).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import benchlib

HERE = Path(__file__).resolve().parent
BROKER_URL = "redis://127.0.0.1:6379/12"
QUEUE = "celery"  # Celery's default queue: the Redis list of that name
WORKER_CONFIG = "WEBHOOKS_BENCH_WORKER"  # environment variable: the worker's settings, JSON
EVENT = "bench.delivered"
FANOUT_EVENT = "bench.fanout"
FANOUT_ENDPOINTS = 1000
SECRET = "benchmark-webhook-secret"
NOOP_COUNT, NOOP_LAST = "webhooks-bench:noop", "webhooks-bench:noop-last"
TARGET_RATIO = 0.5
TARGET_FIRE_MS = 50.0
TARGET_QUERIES = 1


# -- settings (this process and the worker) ------------------------------------------------
def database_from_env(tmpdir: Path) -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL")
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(tmpdir / "webhooks-bench.sqlite3"),
            "OPTIONS": {
                "timeout": 30,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
            },
        }
    from testproject.settings import database_from_url  # the demo's one URL parser

    try:
        database: dict[str, Any] = dict(database_from_url(url))
    except ValueError as exc:
        raise SystemExit(f"DATABASE_URL: {exc}") from None
    # A scratch database of our own, dropped at the end (never the named one's tables).
    database["TEST"] = {"NAME": f"webhooks_bench_{os.getpid()}"}
    return database


def configure(database: dict[str, Any], delivery_log: bool = True) -> None:
    benchlib.configure_django(
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "appframework",
            "appframework_webhooks",
        ],
        DATABASES={"default": database},
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        APPFRAMEWORK={
            "WEBHOOKS": {"ALLOWED_NETWORKS": ["127.0.0.0/8"], "DELIVERY_LOG": delivery_log}
        },
        LOGGING={"version": 1, "disable_existing_loggers": False},
    )


def _redis() -> Any:
    import redis

    return redis.Redis.from_url(BROKER_URL)


def make_app(*, django_fixup: bool = False, keep_connections: bool = False) -> Any:
    """The Celery app, on Django settings already configured; the bench-only probe tasks
    registered. ``django_fixup``: what DJANGO_SETTINGS_MODULE gives a project's worker."""
    from celery import Celery

    app = Celery("webhooks_bench", set_as_current=True)
    app.conf.update(
        broker_url=BROKER_URL,
        broker_connection_retry_on_startup=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        worker_hijack_root_logger=True,
    )
    if django_fixup:
        from celery.fixups.django import DjangoFixup

        fixup = DjangoFixup(app).install()
        if keep_connections:
            # CELERY_DB_REUSE_MAX: the fix-up then keeps each connection across tasks.
            fixup.worker_fixup.db_reuse_max = 10**9
    register_probes(app)
    app.set_default()
    return app


def register_probes(app: Any) -> dict[str, Any]:
    """Two bench-only tasks, with DeliverWebhookJob's reliability options: ``noop``
    (counts in Redis: Celery's own per-task cost) and ``http_only`` (the library's HTTP
    attempt alone: no endpoint fetch, no log)."""
    options = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}
    counter: list[Any] = []

    @app.task(name="webhooks_bench.noop", **options)
    def noop() -> None:
        if not counter:
            counter.append(_redis())
        pipe = counter[0].pipeline(transaction=False)
        pipe.incr(NOOP_COUNT)
        pipe.set(NOOP_LAST, repr(time.monotonic()))
        pipe.execute()

    @app.task(name="webhooks_bench.http_only", **options)
    def http_only(url: str, event: str, body: str, delivery_id: str) -> bool:
        from appframework_webhooks.delivery import deliver_once

        return deliver_once(url, event, body.encode(), SECRET, delivery_id).success

    return {"noop": noop, "http_only": http_only}


def _worker_app() -> Any:
    config = json.loads(os.environ[WORKER_CONFIG])
    configure(config["database"], config["delivery_log"])
    return make_app(django_fixup=True, keep_connections=config["keep_connections"])


def __getattr__(name: str) -> Any:
    # ``celery -A webhooks:celery_app``: the worker's app, built on first access (running
    # this file as a script never touches it).
    if name == "celery_app":
        app = _worker_app()
        globals()["celery_app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- processes -----------------------------------------------------------------------------
def _die_with_parent() -> None:
    # Linux: SIGTERM when this benchmark dies, however it dies (prctl PR_SET_PDEATHSIG).
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def stop_group(proc: subprocess.Popen[Any], grace: float = 15.0) -> None:
    """SIGTERM to the process we started (a Celery worker then finishes its tasks and
    stops its pool), then SIGKILL to its whole process group after ``grace`` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # pool children left behind, if any
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


_TICK = os.sysconf("SC_CLK_TCK")


def session_cpu(sid: int) -> float:
    """CPU seconds (user + system) of the live processes of session ``sid``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # state ppid pgrp session ...
            total += int(fields[11]) + int(fields[12])  # utime stime
    return total / _TICK


def session_states(sid: int) -> list[str]:
    """``pid state wchan`` of each live process of session ``sid``."""
    states = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) != sid:
                continue
            with open(f"/proc/{entry.name}/wchan") as f:
                wchan = f.read().strip()
        except OSError:
            continue
        states.append(f"  pid {entry.name} state {fields[0]} wchan {wchan}")
    return states


class Receiver:
    """webhooks_receiver.py in its own process; ``url``, ``count()``, ``reset()``."""

    def __init__(self) -> None:
        import requests

        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "webhooks_receiver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            stop_group(self.proc)
            raise RuntimeError(f"the receiver did not start: {line!r}")
        self.base = f"http://127.0.0.1:{int(line)}"
        self.url = f"{self.base}/hook"
        self.session = requests.Session()
        self.session.trust_env = False

    def stats(self) -> tuple[int, float, float, float]:
        """POSTs so far, monotonic time of the first and last one, receiver CPU s."""
        posts, first, last, cpu = self.session.get(f"{self.base}/count", timeout=5).text.split()
        return int(posts), float(first), float(last), float(cpu)

    def reset(self) -> None:
        self.session.get(f"{self.base}/reset", timeout=5)

    def last_request(self) -> dict[str, Any]:
        result: dict[str, Any] = self.session.get(f"{self.base}/last", timeout=5).json()
        return result

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.session.close()
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        stop_group(self.proc, grace=5)


@dataclass
class Worker:
    pool: str
    concurrency: int
    delivery_log: bool
    keep_connections: bool = False
    proc: subprocess.Popen[Any] | None = None
    log_path: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.pool} -c{self.concurrency}"

    def start(self, database: dict[str, Any], tmpdir: Path) -> None:
        config = {
            "database": database,
            "delivery_log": self.delivery_log,
            "keep_connections": self.keep_connections,
        }
        env = {**os.environ, WORKER_CONFIG: json.dumps(config)}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.log_path = tmpdir / f"worker-{self.pool}-{self.concurrency}-{time.time_ns()}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "webhooks:celery_app",
                    "worker",
                    "--pool",
                    self.pool,
                    "--concurrency",
                    str(self.concurrency),
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "--loglevel",
                    os.environ.get("WEBHOOKS_BENCH_LOGLEVEL", "WARNING"),
                    "--hostname",
                    f"webhooks-bench-{os.getpid()}@%h",
                ],
                cwd=HERE,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def cpu(self) -> float:
        return session_cpu(self.proc.pid) if self.proc is not None else 0.0

    def check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError(f"the worker ({self.label}) exited:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)


# -- measuring -----------------------------------------------------------------------------
@dataclass
class Run:
    """One timed batch: deliveries/s from just before the first publish to the last
    arrival, and CPU seconds per delivery of each process."""

    name: str
    count: int
    seconds: float
    publish_seconds: float
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.count / self.seconds


class Bench:
    def __init__(self, args: Any, receiver: Receiver, database: dict[str, Any], tmpdir: Path):
        self.args = args
        self.receiver = receiver
        self.database = database
        self.tmpdir = tmpdir
        self.redis = _redis()
        self.body = ""
        self.endpoint_id = 0

    # ---- set-up
    def create_endpoints(self) -> None:
        from appframework_webhooks.manager import serialize
        from appframework_webhooks.models import WebhookEndpoint

        endpoints = WebhookEndpoint.objects.bulk_create(
            WebhookEndpoint(url=f"{self.receiver.url}/{i}", event=EVENT, secret=SECRET)
            for i in range(self.args.endpoints)
        )
        self.endpoint_id = endpoints[0].pk or WebhookEndpoint.objects.filter(event=EVENT)[0].pk
        self.body = serialize(EVENT, {"n": 0, "note": "benchmark"})

    # ---- waiting for arrivals
    def wait_receiver(self, target: int, worker: Worker | None, timeout: float) -> float:
        """Poll until the receiver got ``target`` POSTs; the monotonic time of the last."""
        deadline = time.monotonic() + timeout
        while True:
            posts, _, last, _ = self.receiver.stats()
            if posts >= target:
                if posts > target:
                    raise RuntimeError(f"the receiver got {posts} POSTs, expected {target}")
                return last
            if worker is not None:
                worker.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"timeout: {posts}/{target} POSTs after {timeout:.0f} s; {self.stuck(worker)}"
                )
            time.sleep(0.02)

    def wait_noop(self, target: int, worker: Worker, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while True:
            done = int(self.redis.get(NOOP_COUNT) or 0)
            if done >= target:
                return float(self.redis.get(NOOP_LAST))
            worker.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"timeout: {done}/{target} no-op tasks; {self.stuck(worker)}")
            time.sleep(0.02)

    def stuck(self, worker: Worker | None) -> str:
        """What a stalled run leaves behind: the queue, the unacknowledged messages,
        the state of the worker's processes and the end of its log."""
        lines = [
            f"queued {self.redis.llen(QUEUE)}, unacked {self.redis.hlen('unacked')}",
        ]
        if worker is not None and worker.proc is not None:
            lines += session_states(worker.proc.pid)
            lines.append(worker.log_tail())
        return "\n".join(lines)

    def timeout(self, count: int) -> float:
        return 60.0 + count / 10.0

    # ---- what is timed
    def publish_fires(self, count: int) -> None:
        from appframework_webhooks.manager import WebhookManager

        manager = WebhookManager()
        events = count // self.args.endpoints
        for i in range(events):
            ids = manager.fire_sync(EVENT, {"n": i, "note": "benchmark"})
            if len(ids) != self.args.endpoints:
                raise RuntimeError(
                    f"fire() queued {len(ids)} deliveries, not {self.args.endpoints}"
                )

    def publish_http_only(self, count: int, probes: dict[str, Any]) -> None:
        for i in range(count):
            probes["http_only"].apply_async(
                args=(f"{self.receiver.url}/{i % self.args.endpoints}", EVENT, self.body, f"h{i}")
            )

    def publish_noop(self, count: int, probes: dict[str, Any]) -> None:
        for _ in range(count):
            probes["noop"].apply_async()

    def timed(
        self, name: str, count: int, worker: Worker, publish: Callable[[int], None], noop: bool
    ) -> Run:
        if noop:
            self.redis.delete(NOOP_COUNT, NOOP_LAST)
        else:
            self.receiver.reset()
        cpu0 = self.cpu_readings(worker)
        t0 = time.monotonic()
        publish(count)
        published = time.monotonic() - t0
        if noop:
            last = self.wait_noop(count, worker, self.timeout(count))
        else:
            last = self.wait_receiver(count, worker, self.timeout(count))
        cpu1 = self.cpu_readings(worker)
        cpu = {k: (cpu1[k] - cpu0[k]) / count for k in cpu0}
        return Run(name, count, last - t0, published, cpu)

    def cpu_readings(self, worker: Worker | None) -> dict[str, float]:
        info = self.redis.info("cpu")
        return {
            "publisher": time.process_time(),
            "worker": worker.cpu() if worker is not None else 0.0,
            "receiver": self.receiver.stats()[3],
            "redis": float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        }

    def floor(self, count: int) -> Run:
        """A keep-alive requests.Session loop, each body signed with signing.sign."""
        import requests

        from appframework_webhooks.signing import sign

        body = self.body.encode()
        session = requests.Session()
        session.trust_env = False
        url = f"{self.receiver.url}/0"
        self.receiver.reset()
        cpu0 = self.cpu_readings(None)
        t0 = time.monotonic()
        for _ in range(count):
            headers = {
                "Content-Type": "application/json",
                "X-Webhook-Event": EVENT,
                "X-Webhook-Signature": sign(SECRET, body),
            }
            response = session.post(url, data=body, headers=headers, timeout=10)
            if response.status_code != 200:
                raise RuntimeError(f"floor: HTTP {response.status_code}")
        seconds = time.monotonic() - t0
        cpu1 = self.cpu_readings(None)
        session.close()
        cpu = {k: (cpu1[k] - cpu0[k]) / count for k in cpu0 if k != "worker"}
        return Run("floor", count, seconds, seconds, cpu)

    # ---- workers
    @contextlib.contextmanager
    def worker(self, pool: str, concurrency: int, **options: Any) -> Iterator[Worker]:
        self.redis.flushdb()
        worker = Worker(pool, concurrency, **options)
        worker.start(self.database, self.tmpdir)
        try:
            # Warm-up: the worker is up, its pool started, its connections open.
            self.receiver.reset()
            warm = 2 * self.args.endpoints
            self.publish_fires(warm)
            self.wait_receiver(warm, worker, 90)
            yield worker
        finally:
            worker.stop()
            self.redis.flushdb()


def delivery_rows() -> tuple[int, int]:
    """(rows, successful rows) of the delivery log."""
    from appframework_webhooks.models import WebhookDelivery

    return WebhookDelivery.objects.count(), WebhookDelivery.objects.filter(success=True).count()


def parse_pool(text: str) -> tuple[str, int]:
    pool, _, concurrency = text.strip().partition(":")
    if pool not in ("threads", "prefork", "solo", "gevent", "eventlet") or (
        concurrency and not concurrency.isdigit()
    ):
        raise SystemExit(f"--pool: expected POOL:CONCURRENCY (threads:8, prefork:2), got {text!r}")
    return pool, int(concurrency or 1)


# -- part 2: end to end --------------------------------------------------------------------
def end_to_end(bench: Bench) -> dict[str, Any]:
    args = bench.args
    count = args.deliveries - args.deliveries % args.endpoints
    pool, concurrency = parse_pool(args.pool)
    results: dict[str, Any] = {"floor": [], "pairs": [], "runs": {}}
    app = _main_app()
    probes = {name: app.tasks[f"webhooks_bench.{name}"] for name in ("noop", "http_only")}

    def record(key: str, run: Run) -> None:
        results["runs"].setdefault(key, []).append(run)
        print(
            f"  {key:<40} {run.rate:8.1f} deliveries/s  ({run.count} in {run.seconds:.2f} s; "
            f"published in {run.publish_seconds:.2f} s)",
            flush=True,
        )

    label = f"{pool} -c{concurrency}"
    print(f"\n== end to end: {count} deliveries per round, {args.rounds} round(s), {label}")
    rows0 = delivery_rows()
    # One row per attempt, all successful: the warm-up's and the rounds'.
    expected = 2 * args.endpoints + args.rounds * count
    with bench.worker(pool, concurrency, delivery_log=True) as worker:
        for r in range(args.rounds):
            order = ["floor", "celery"] if r % 2 == 0 else ["celery", "floor"]
            pair: dict[str, Run] = {}
            for what in order:
                if what == "floor":
                    pair["floor"] = bench.floor(count)
                    record("floor (Session keep-alive)", pair["floor"])
                else:
                    pair["celery"] = bench.timed(
                        "log on", count, worker, bench.publish_fires, noop=False
                    )
                    record(f"celery {label}, log on", pair["celery"])
            results["pairs"].append(pair["celery"].rate / pair["floor"].rate)
            results["floor"].append(pair["floor"])
        # A row is written just after its POST: give the last ones a moment.
        deadline = time.monotonic() + 10
        while delivery_rows()[0] - rows0[0] < expected and time.monotonic() < deadline:
            time.sleep(0.05)
    rows1 = delivery_rows()
    results["log_rows"] = (rows1[0] - rows0[0], rows1[1] - rows0[1], expected)

    with bench.worker(pool, concurrency, delivery_log=False) as worker:
        for _ in range(args.rounds):
            record(
                f"celery {label}, log off",
                bench.timed("log off", count, worker, bench.publish_fires, noop=False),
            )
        # Where the time goes: Celery alone, then the HTTP attempt alone.
        bench.timed("warm", 50, worker, partial(bench.publish_noop, probes=probes), noop=True)
        for _ in range(args.rounds):
            record(
                f"celery {label}, no-op task",
                bench.timed(
                    "noop", count, worker, partial(bench.publish_noop, probes=probes), noop=True
                ),
            )
        for _ in range(args.rounds):
            record(
                f"celery {label}, deliver_once only",
                bench.timed(
                    "http", count, worker, partial(bench.publish_http_only, probes=probes), False
                ),
            )
    rows2 = delivery_rows()
    results["log_off_rows"] = rows2[0] - rows1[0]

    with bench.worker(pool, concurrency, delivery_log=True, keep_connections=True) as worker:
        for _ in range(args.rounds):
            record(
                f"celery {label}, log on, kept conn.",
                bench.timed("log on kept", count, worker, bench.publish_fires, noop=False),
            )

    for other in [p for p in args.other_pools.split(",") if p.strip() not in ("", "none")]:
        opool, oconc = parse_pool(other)
        olabel = f"{opool} -c{oconc}"
        for log in (True, False):
            with bench.worker(opool, oconc, delivery_log=log) as worker:
                for _ in range(args.rounds):
                    record(
                        f"celery {olabel}, log {'on' if log else 'off'}",
                        bench.timed("other", count, worker, bench.publish_fires, noop=False),
                    )
    return results


_APP: list[Any] = []


def _main_app() -> Any:
    if not _APP:
        _APP.append(make_app())
    return _APP[0]


# -- in-process profile ---------------------------------------------------------------------
def in_process(bench: Bench) -> dict[str, list[float]]:
    """Seconds per delivery without Celery: the floor loop, deliver_once, the job called
    directly with the log off, on, and on with a new database connection per call."""
    import requests
    from django.db import connections
    from django.test import override_settings

    from appframework_webhooks.delivery import deliver_once
    from appframework_webhooks.signing import sign
    from appframework_webhooks.tasks import DeliverWebhookJob

    n = bench.args.profile_batch
    body = bench.body.encode()
    url = f"{bench.receiver.url}/0"
    session = requests.Session()
    session.trust_env = False

    def floor() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            headers = {
                "Content-Type": "application/json",
                "X-Webhook-Event": EVENT,
                "X-Webhook-Signature": sign(SECRET, body),
            }
            session.post(url, data=body, headers=headers, timeout=10)
        return (time.perf_counter() - t0) / n

    def library_http() -> float:
        t0 = time.perf_counter()
        for i in range(n):
            outcome = deliver_once(url, EVENT, body, SECRET, f"p{i}")
            assert outcome.success, outcome
        return (time.perf_counter() - t0) / n

    def job(log: bool, reconnect: bool = False) -> float:
        webhooks = {"ALLOWED_NETWORKS": ["127.0.0.0/8"], "DELIVERY_LOG": log}
        with override_settings(APPFRAMEWORK={"WEBHOOKS": webhooks}):
            t0 = time.perf_counter()
            for i in range(n):
                if reconnect:
                    connections.close_all()
                outcome = DeliverWebhookJob(bench.endpoint_id, EVENT, bench.body, f"j{i}")
                assert outcome == "delivered", outcome
                if reconnect:
                    connections.close_all()
            return (time.perf_counter() - t0) / n

    batches = {
        "floor: Session loop": floor,
        "deliver_once (library HTTP)": library_http,
        "job, log off": partial(job, False),
        "job, log on": partial(job, True),
        "job, log on, new connection": partial(job, True, True),
    }
    for batch in batches.values():  # warm-up
        batch()
    samples = benchlib.interleave(batches, bench.args.profile_rounds)
    session.close()
    return samples


# -- part 3: fire() to 1,000 endpoints -------------------------------------------------------
def fan_out(bench: Bench) -> dict[str, Any]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from appframework_webhooks.manager import WebhookManager, publish_jobs, serialize
    from appframework_webhooks.models import WebhookEndpoint

    _main_app()
    WebhookEndpoint.objects.bulk_create(
        WebhookEndpoint(url=f"{bench.receiver.url}/fan/{i}", event=FANOUT_EVENT, secret=SECRET)
        for i in range(FANOUT_ENDPOINTS)
    )
    manager = WebhookManager()
    data = {"order": 12345, "note": "fan-out"}
    redis = bench.redis
    redis.flushdb()
    for _ in range(3):  # warm-up: the broker connection, the statement
        manager.fire_sync(FANOUT_EVENT, data)
    redis.flushdb()

    times: dict[str, list[float]] = {"inside": [], "commit": [], "outside": []}
    queries: dict[str, set[int]] = {"inside": set(), "outside": set()}
    sql: list[str] = []
    for r in range(bench.args.fire_rounds):
        for mode in ("inside", "outside") if r % 2 == 0 else ("outside", "inside"):
            before = redis.llen(QUEUE)
            if mode == "inside":
                with transaction.atomic():
                    with CaptureQueriesContext(connection) as ctx:
                        t0 = time.perf_counter()
                        ids = manager.fire_sync(FANOUT_EVENT, data)
                        times["inside"].append(time.perf_counter() - t0)
                    if redis.llen(QUEUE) != before:
                        raise RuntimeError("fire() published before the commit")
                    t1 = time.perf_counter()
                times["commit"].append(time.perf_counter() - t1)
            else:
                with CaptureQueriesContext(connection) as ctx:
                    t0 = time.perf_counter()
                    ids = manager.fire_sync(FANOUT_EVENT, data)
                    times["outside"].append(time.perf_counter() - t0)
            queries[mode].add(len(ctx.captured_queries))
            sql = [q["sql"] for q in ctx.captured_queries]
            published = redis.llen(QUEUE) - before
            assert len(ids) == FANOUT_ENDPOINTS, len(ids)
            assert published == 1, f"{mode}: {published} messages published, expected 1"
    for mode, counts in queries.items():
        assert counts == {TARGET_QUERIES}, f"fire() {mode} a transaction ran {counts} queries"
    redis.flushdb()

    # What the fan-out spares the caller: the 1,000 publishes one by one.
    body = serialize(FANOUT_EVENT, data)
    jobs = [(i + 1, f"direct{i}") for i in range(FANOUT_ENDPOINTS)]
    t0 = time.perf_counter()
    queued = publish_jobs(FANOUT_EVENT, body, jobs)
    direct = time.perf_counter() - t0
    assert queued == FANOUT_ENDPOINTS and redis.llen(QUEUE) == FANOUT_ENDPOINTS
    redis.flushdb()
    return {"times": times, "queries": queries, "sql": sql, "direct": direct}


# -- reporting -------------------------------------------------------------------------------
def cpu_line(runs: list[Run]) -> str:
    keys = ["publisher", "worker", "receiver", "redis"]
    parts = []
    total = 0.0
    for key in keys:
        values = [run.cpu[key] for run in runs if key in run.cpu]
        if values:
            total += statistics.median(values)
            parts.append(f"{key} {statistics.median(values) * 1000:.2f}")
    # With every CPU busy all the time, this machine could do no more than cpus/total.
    cpus = os.cpu_count() or 1
    return ", ".join(parts) + f"; total {total * 1000:.2f} (CPU-bound at {cpus / total:.0f}/s)"


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--deliveries", int, 1000, 300, "deliveries per timed round")
    parser.add_argument("--endpoints", type=int, default=10, help="M endpoints (default 10)")
    parser.add_scaled("--rounds", int, 3, 1, "rounds per worker configuration")
    parser.add_argument(
        "--pool", default="prefork:4", help="the worker pool measured in full (default prefork:4)"
    )
    parser.add_scaled(
        "--other-pools", str, "threads:8,prefork:2", "none", "more pools, log on and off"
    )
    parser.add_scaled("--fire-rounds", int, 21, 7, "fire() calls per mode")
    parser.add_scaled("--profile-rounds", int, 5, 3, "rounds of the in-process profile")
    parser.add_scaled("--profile-batch", int, 200, 100, "deliveries per in-process batch")
    args = parser.parse_args()
    if args.endpoints > 20:
        parser.error("--endpoints: at most 20 (above, fire() hands the publishing to a worker)")
    args.deliveries = max(args.deliveries, args.endpoints)

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)  # run the finally blocks: no stray processes

    signal.signal(signal.SIGTERM, terminate)

    tmpdir = Path(tempfile.mkdtemp(prefix="webhooks-bench-"))
    receiver: Receiver | None = None
    database = database_from_env(tmpdir)
    created_test_db: str | None = None
    redis = _redis()
    try:
        try:
            redis.ping()
        except Exception as exc:
            raise SystemExit(f"Redis at {BROKER_URL} is not reachable: {exc}") from exc
        redis.flushdb()
        configure(database)
        from django.core.management import call_command
        from django.db import connection

        if database["ENGINE"].endswith("postgresql"):
            created_test_db = connection.settings_dict["NAME"]
            connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
            database = {k: v for k, v in connection.settings_dict.items() if k != "TEST"}
        else:
            call_command("migrate", verbosity=0)
        database = {
            k: database[k]
            for k in ("ENGINE", "NAME", "USER", "PASSWORD", "HOST", "PORT", "OPTIONS")
            if k in database
        }
        receiver = Receiver()
        bench = Bench(args, receiver, database, tmpdir)
        bench.create_endpoints()
        _main_app()
        engine = "PostgreSQL" if "postgresql" in database["ENGINE"] else "SQLite file (WAL)"
        print(
            f"{benchlib.platform()}, Celery {_celery_version()}, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.2f}; {engine}; broker {BROKER_URL}"
        )

        # 3. fire() to 1,000 endpoints (no worker yet: the queue only fills, then is purged)
        fan = fan_out(bench)
        # In-process profile (no worker either)
        profile = in_process(bench)
        # 1 + 2. floor and end to end
        e2e = end_to_end(bench)
        check = receiver.last_request()
    finally:
        if receiver is not None:
            receiver.close()
        with contextlib.suppress(Exception):
            redis.flushdb()
        if created_test_db is not None:
            from django.db import connection

            with contextlib.suppress(Exception):
                connection.close()
                connection.creation.destroy_test_db(created_test_db, verbosity=0)
        if not os.environ.get("WEBHOOKS_BENCH_KEEP"):
            shutil.rmtree(tmpdir, ignore_errors=True)

    return report(args, fan, profile, e2e, check)


def _celery_version() -> str:
    import celery

    return str(celery.__version__)


def report(
    args: Any,
    fan: dict[str, Any],
    profile: dict[str, list[float]],
    e2e: dict[str, Any],
    check: dict[str, Any],
) -> int:
    from appframework_webhooks.signing import verify_signature, verify_webhook

    info: dict[str, float] = {}
    # Signature of a delivered request (the last one of the last run).
    headers, body = check["headers"], check["body"]
    v1 = verify_signature(SECRET, body.encode(), headers.get("X-Webhook-Signature"))
    v2 = verify_webhook(SECRET, headers, body.encode())
    print(
        f"\nlast delivery received: signature {'ok' if v1 else 'BAD'}, v2 {'ok' if v2 else 'BAD'}"
    )
    assert v1 and v2, headers

    print(f"\n== in process, no Celery ({args.profile_rounds} rounds x {args.profile_batch})")
    med = {name: statistics.median(s) * 1000 for name, s in profile.items()}
    previous = None
    for name, ms in med.items():
        delta = f"  (+{ms - previous:.3f} ms)" if previous is not None else ""
        print(f"  {name:<32} {ms:7.3f} ms/delivery  {1000 / ms:7.1f}/s{delta}")
        previous = ms
        info[f"in-process {name} ms"] = ms

    runs: dict[str, list[Run]] = e2e["runs"]
    rates = {key: statistics.median(r.rate for r in rs) for key, rs in runs.items()}
    print("\n== deliveries/s (median of rounds) and CPU ms per delivery by process")
    for key, rs in runs.items():
        print(f"  {key:<40} {rates[key]:8.1f}/s   cpu ms: {cpu_line(rs)}")
        info[f"{key} /s"] = rates[key]
    rows, ok_rows, expected = e2e["log_rows"]
    print(
        f"  delivery log: {rows} rows written ({ok_rows} successful, {expected} expected) "
        f"with the log on; {e2e['log_off_rows']} with it off"
    )
    assert rows == ok_rows == expected and e2e["log_off_rows"] == 0

    floor = statistics.median(r.rate for r in e2e["floor"])
    ratio = statistics.median(e2e["pairs"])
    label = f"{parse_pool(args.pool)[0]} -c{parse_pool(args.pool)[1]}"
    log_off = rates[f"celery {label}, log off"]
    info["floor /s"] = floor
    info["celery/floor log off"] = log_off / floor
    print(
        f"\n  celery/floor, {label}: log on {ratio:.3f} (median of per-round ratios), "
        f"log off {log_off / floor:.3f}"
    )
    per = {key: 1000 / rate for key, rate in rates.items()}
    noop = per[f"celery {label}, no-op task"]
    http = per[f"celery {label}, deliver_once only"]
    off = per[f"celery {label}, log off"]
    on = per[f"celery {label}, log on"]
    kept = per[f"celery {label}, log on, kept conn."]
    print(f"  where a delivery's {on:.2f} ms (wall, {label}, throughput) go:")
    for text, ms in (
        ("Celery's own per-task cost (no-op task)", f"{noop:6.2f}"),
        ("+ the HTTP attempt (deliver_once)", f"{http - noop:+6.2f}"),
        ("+ endpoint re-fetch, on a new connection per task", f"{off - http:+6.2f}"),
        ("+ log insert, then closing a connection that wrote", f"{on - off:+6.2f}"),
        ("log on, connections kept across tasks (instead)", f"{kept:6.2f}"),
        ("floor (Session loop)", f"{1000 / floor:6.2f}"),
    ):
        print(f"    {text:<52}{ms} ms")

    times, queries = fan["times"], fan["queries"]
    fire_ms = {mode: statistics.median(ts) * 1000 for mode, ts in times.items()}
    print(f"\n== fire() to {FANOUT_ENDPOINTS} endpoints ({args.fire_rounds} calls per mode)")
    print(f"  query: {fan['sql'][0] if fan['sql'] else '-'}")
    for mode, label_ in (
        ("inside", "inside atomic(): fire()"),
        ("commit", "inside atomic(): commit + publish"),
        ("outside", "outside: fire() incl. publish"),
    ):
        ts = [t * 1000 for t in times[mode]]
        q = f", {sorted(queries[mode])[0]} query" if mode in queries else ""
        print(
            f"  {label_:<36} median {fire_ms[mode]:6.2f} ms (min {min(ts):.2f}, "
            f"max {max(ts):.2f}){q}"
        )
        info[f"fire() {mode} ms"] = fire_ms[mode]
    print(
        f"  for comparison, {FANOUT_ENDPOINTS} jobs published one by one: {fan['direct'] * 1000:.0f} ms"
    )
    info["publish 1000 jobs one by one ms"] = fan["direct"] * 1000

    ratios = [
        benchlib.Ratio("celery/floor", ratio, ">=", TARGET_RATIO),
        benchlib.Ratio(
            "fire() 1k endpoints ms, in atomic", fire_ms["inside"], "<=", TARGET_FIRE_MS
        ),
        benchlib.Ratio("fire() 1k endpoints ms, outside", fire_ms["outside"], "<=", TARGET_FIRE_MS),
        benchlib.Ratio(
            "fire() queries, in atomic", float(max(queries["inside"])), "<=", TARGET_QUERIES
        ),
        benchlib.Ratio(
            "fire() queries, outside", float(max(queries["outside"])), "<=", TARGET_QUERIES
        ),
    ]
    return benchlib.finish(args, "webhooks", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
