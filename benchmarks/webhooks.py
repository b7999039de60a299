"""Webhook delivery throughput on the production stack, side by side: a keep-alive HTTP
loop (the floor), a no-op Celery task, the suite, and two published peers
(``django-webhook``, ``django-webhook-subscriber``), interleaved in one run; and what
``fire()`` to 1,000 endpoints costs its caller.

Run from the repository root (Redis on 127.0.0.1:6379: this benchmark flushes its
databases 12 and 8-11; PostgreSQL for the peers):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        .venv/bin/python benchmarks/webhooks.py [--scenarios 2000x1,20x100] [--rounds 5]
        [--pool prefork:4] [--peers auto|on|off] [--peer-settings defaults,tuned]
        [--quick] [--json]

``scripts/bench`` creates the peers' virtualenv (``webhooks_peers/setup_env.sh``); without
``DATABASE_URL`` the suite runs on a SQLite file (WAL) and the peers are left out: a
secondary reading.

Set-up: ``appframework_webhooks`` in a scratch database (PostgreSQL: created next to the
named one, dropped at the end), ``ALLOWED_NETWORKS`` 127.0.0.0/8, every endpoint with a
secret (each delivery carries both signatures; the last one received is verified). The
receiver is ``webhooks_receiver.py`` in a process of its own: asyncio, raw HTTP/1.1,
keep-alive, ``200`` with an empty body, under 0.1 ms of CPU per request.

Contenders, each round in a rotating order, per scenario (``EVENTSxENDPOINTS``:
2,000 events to 1 endpoint, 20 events to 100 endpoints; 400x1 and 4x100 with --quick):

* floor - one ``requests.Session`` keep-alive loop POSTing the body, signed per request;
* no-op task (1-endpoint scenario) - a task that only counts in Redis, with the
  delivery job's reliability options, on the suite's "defaults" worker: Celery's own
  per-task cost, the ceiling of any one-task-per-delivery design;
* suite (defaults) - ``WebhookManager().fire_sync`` per event, outside a transaction,
  consumed by ``celery worker --pool prefork -c4`` with Celery's Django fix-up installed
  and nothing else set (it closes the database connection around every task; the jobs
  keep their own), delivery log on;
* suite (tuned) - the same on a worker with ``CELERY_DB_REUSE_MAX=100`` and prefetch 1,
  the settings the peers' "tuned" runs use;
* peers - each in its own virtualenv, database and Redis database, driven by
  ``webhooks_peers/peer_driver.py`` (its docstring says how each fires and delivers),
  with Celery's defaults and with the tuned settings, posting to the same receiver.

Time runs from just before the first event to the receiver's last POST. Ratios are the
median of per-round ratios. Targets: suite (defaults) / no-op task >= 0.55 and suite
(tuned) / django-webhook (tuned) >= 1.5 with 1 endpoint per event; suite (defaults) /
floor >= 1.0 with 100 endpoints per event; ``fire()`` to 1,000 endpoints <= 50 ms and 1
query, inside and outside ``transaction.atomic()`` (``--fire-rounds`` calls per mode; no
worker runs then, the queue is purged after). ``--json``: see benchlib.py. To look into a
stalled or odd run: ``WEBHOOKS_BENCH_LOGLEVEL=INFO`` and ``WEBHOOKS_BENCH_KEEP=1`` (keep
the temporary directory: workers' logs).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import benchlib

HERE = Path(__file__).resolve().parent
BROKER_URL = "redis://127.0.0.1:6379/12"
QUEUE = "celery"  # Celery's default queue: the Redis list of that name (fire() to 1k)
QUEUE_DEFAULTS = "bench-defaults"  # the suite's worker with Celery's defaults
QUEUE_TUNED = "bench-tuned"  # ... with CELERY_DB_REUSE_MAX=100 and prefetch 1
EVENT_ONE, EVENT_MANY = "bench.one", "bench.many"
MANY = 100  # endpoints of EVENT_MANY
PEERS = ("django-webhook", "django-webhook-subscriber")
PEER_ENV = HERE.parent / ".venvs" / "bench-webhook-peers"
PEER_BROKERS = {  # Redis databases of the peers' brokers (this benchmark's is 12)
    ("django-webhook", "defaults"): 11,
    ("django-webhook", "tuned"): 10,
    ("django-webhook-subscriber", "defaults"): 9,
    ("django-webhook-subscriber", "tuned"): 8,
}
WORKER_CONFIG = "WEBHOOKS_BENCH_WORKER"  # environment variable: the worker's settings, JSON
EVENT = "bench.delivered"
FANOUT_EVENT = "bench.fanout"
FANOUT_ENDPOINTS = 1000
SECRET = "benchmark-webhook-secret"
NOOP_COUNT, NOOP_LAST = "webhooks-bench:noop", "webhooks-bench:noop-last"
TARGET_NOOP = 0.55  # 1 endpoint/event: suite / no-op Celery task, same worker
TARGET_PEER = 1.5  # 1 endpoint/event: suite / django-webhook, same settings
TARGET_FLOOR = 1.0  # 100 endpoints/event: suite / keep-alive floor
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


def make_app(*, django_fixup: bool = False, tuned: bool = False, queue: str = QUEUE) -> Any:
    """The Celery app, on Django settings already configured; the bench-only probe tasks
    registered. ``django_fixup``: what DJANGO_SETTINGS_MODULE gives a project's worker;
    ``tuned``: CELERY_DB_REUSE_MAX=100 and prefetch 1, the settings the published
    measurements of the peers used."""
    from celery import Celery

    app = Celery("webhooks_bench", set_as_current=True)
    app.conf.update(
        broker_url=BROKER_URL,
        broker_connection_retry_on_startup=True,
        task_ignore_result=True,
        task_default_queue=queue,
        worker_hijack_root_logger=True,
    )
    if tuned:
        app.conf.worker_prefetch_multiplier = 1
        app.conf.CELERY_DB_REUSE_MAX = 100  # what the fix-up reads, as from settings
    if django_fixup:
        from celery.fixups.django import DjangoFixup

        DjangoFixup(app).install()
    register_probes(app)
    app.set_default()
    return app


def register_probes(app: Any) -> dict[str, Any]:
    """The bench-only ``noop`` task, with DeliverWebhookJob's reliability options: it
    only counts in Redis (Celery's own per-task cost)."""
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

    return {"noop": noop}


def _worker_app() -> Any:
    config = json.loads(os.environ[WORKER_CONFIG])
    configure(config["database"], config["delivery_log"])
    return make_app(django_fixup=True, tuned=config["tuned"], queue=config["queue"])


def __getattr__(name: str) -> Any:
    # ``celery -A webhooks:celery_app``: the worker's app, built on first access (running
    # this file as a script never touches it).
    if name == "celery_app":
        app = _worker_app()
        globals()["celery_app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- processes -----------------------------------------------------------------------------
def session_states(sid: int) -> list[str]:
    """``pid state wchan`` of each live process of session ``sid``."""
    states = []
    for pid, _, fields in benchlib.processes():
        if int(fields[3]) != sid:
            continue
        try:
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read().strip()
        except OSError:
            continue
        states.append(f"  pid {pid} state {fields[0]} wchan {wchan}")
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
            preexec_fn=benchlib.die_with_parent,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            benchlib.stop_group(self.proc)
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
        benchlib.stop_group(self.proc, grace=5)


@dataclass
class Worker:
    pool: str
    concurrency: int
    delivery_log: bool
    queue: str
    tuned: bool = False
    proc: subprocess.Popen[Any] | None = None
    log_path: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.pool} -c{self.concurrency}"

    def start(self, database: dict[str, Any], tmpdir: Path) -> None:
        config = {
            "database": database,
            "delivery_log": self.delivery_log,
            "queue": self.queue,
            "tuned": self.tuned,
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
                preexec_fn=benchlib.die_with_parent,
            )

    def cpu(self) -> float:
        return benchlib.cpu_seconds(session=self.proc.pid) if self.proc is not None else 0.0

    def check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError(f"the worker ({self.label}) exited:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc is not None:
            benchlib.stop_group(self.proc)


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

    # ---- set-up
    def create_endpoints(self) -> None:
        from appframework_webhooks.manager import serialize
        from appframework_webhooks.models import WebhookEndpoint

        WebhookEndpoint.objects.create(
            url=f"{self.receiver.url}/one", event=EVENT_ONE, secret=SECRET
        )
        WebhookEndpoint.objects.bulk_create(
            WebhookEndpoint(url=f"{self.receiver.url}/many/{i}", event=EVENT_MANY, secret=SECRET)
            for i in range(MANY)
        )
        self.body = serialize(EVENT_ONE, {"n": 0, "note": "benchmark"})

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
    def publish_fires(self, count: int, endpoints: int, queue: str) -> None:
        from django.test import override_settings

        from appframework_webhooks.manager import WebhookManager

        manager = WebhookManager()
        event = EVENT_ONE if endpoints == 1 else EVENT_MANY
        webhooks = {"ALLOWED_NETWORKS": ["127.0.0.0/8"], "QUEUE": queue}
        with override_settings(APPFRAMEWORK={"WEBHOOKS": webhooks}):
            for i in range(count // endpoints):
                ids = manager.fire_sync(event, {"n": i, "note": "benchmark"})
                if len(ids) != endpoints:
                    raise RuntimeError(f"fire() queued {len(ids)} deliveries, not {endpoints}")

    def publish_noop(self, count: int, probes: dict[str, Any], queue: str) -> None:
        for _ in range(count):
            probes["noop"].apply_async(queue=queue)

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
            "postgres": benchlib.cpu_seconds(command="postgres"),
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
    def start_worker(self, queue: str, tuned: bool) -> Worker:
        pool, concurrency = parse_pool(self.args.pool)
        worker = Worker(pool, concurrency, delivery_log=True, queue=queue, tuned=tuned)
        worker.start(self.database, self.tmpdir)
        # Warm-up: the worker is up, its pool started, its connections open.
        self.receiver.reset()
        self.publish_fires(2 * MANY, MANY, queue)
        self.publish_fires(8, 1, queue)
        self.wait_receiver(2 * MANY + 8, worker, 90)
        return worker


def parse_pool(text: str) -> tuple[str, int]:
    pool, _, concurrency = text.strip().partition(":")
    if pool not in ("threads", "prefork", "solo", "gevent", "eventlet") or (
        concurrency and not concurrency.isdigit()
    ):
        raise SystemExit(f"--pool: expected POOL:CONCURRENCY (threads:8, prefork:2), got {text!r}")
    return pool, int(concurrency or 1)


def failed_attempts() -> dict[str, int]:
    """The errors of the attempts that failed (retried ones: they arrived in the end),
    by error code and message start."""
    from collections import Counter

    from appframework_webhooks.models import WebhookDelivery

    return dict(
        Counter(
            f"{row.error_code}: {(row.error or '')[:120]}"
            for row in WebhookDelivery.objects.filter(success=False).only("error", "status_code")
        )
    )


def delivery_rows() -> tuple[int, int]:
    """(rows, successful rows) of the delivery log."""
    from django.db.models import Count, Q

    from appframework_webhooks.models import WebhookDelivery

    # One statement: two counts taken apart would race rows being written in between.
    counts = WebhookDelivery.objects.aggregate(
        total=Count("id"), ok=Count("id", filter=Q(success=True))
    )
    return int(counts["total"]), int(counts["ok"])


class Peer:
    """A published webhook library in its own virtualenv, driven by
    ``webhooks_peers/peer_driver.py`` (its worker, its scratch database, its broker),
    posting to the same receiver."""

    def __init__(self, name: str, settings: str, database_url: str, bench: Bench) -> None:
        self.label = f"{name} ({settings})"
        broker = f"redis://127.0.0.1:6379/{PEER_BROKERS[(name, settings)]}"
        self.proc = subprocess.Popen(
            [
                str(PEER_ENV / "bin" / "python"),
                str(HERE / "webhooks_peers" / "peer_driver.py"),
                "--peer",
                name,
                "--database-url",
                database_url,
                "--broker",
                broker,
                "--receiver",
                bench.receiver.base,
                "--settings",
                settings,
                "--concurrency",
                str(parse_pool(bench.args.pool)[1]),
                "--tmpdir",
                str(bench.tmpdir),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=benchlib.die_with_parent,
        )
        self.endpoints = 0

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.label}: the driver exited ({self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"{self.label}: {answer}")
        return answer

    def run(self, events: int, endpoints: int, timeout: float) -> Run:
        if endpoints != self.endpoints:
            self.ask(cmd="setup", endpoints=endpoints)
            self.endpoints = endpoints
        answer = self.ask(cmd="run", events=events, endpoints=endpoints, timeout=timeout)
        cpu = {k: float(v) / answer["deliveries"] for k, v in (answer.get("cpu") or {}).items()}
        return Run(
            self.label,
            int(answer["deliveries"]),
            float(answer["seconds"]),
            float(answer.get("fire_seconds", 0.0)),
            cpu,
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ask(cmd="quit")
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        benchlib.stop_group(self.proc, grace=30)


def parse_scenarios(text: str) -> list[tuple[int, int]]:
    scenarios = []
    for part in text.split(","):
        events, _, endpoints = part.strip().partition("x")
        if not (events.isdigit() and endpoints in ("1", str(MANY))):
            raise SystemExit(f"--scenarios: EVENTSx1 or EVENTSx{MANY}, got {part!r}")
        scenarios.append((int(events), int(endpoints)))
    return scenarios


_APP: list[Any] = []


def _main_app() -> Any:
    if not _APP:
        _APP.append(make_app())
    return _APP[0]


# -- part 2: the contest ------------------------------------------------------------------------
def contest(bench: Bench, peers: list[Peer]) -> dict[str, Any]:
    """Per scenario, ``--rounds`` rounds; each round runs every contender once, in an
    order that rotates from round to round: the floor, the no-op task and the suite on
    the same worker (Celery's defaults), the suite on a worker with the peers' published
    settings, and each peer."""
    args = bench.args
    app = _main_app()
    noop_task = app.tasks["webhooks_bench.noop"]
    results: dict[str, Any] = {}
    workers = {
        "defaults": bench.start_worker(QUEUE_DEFAULTS, tuned=False),
        "tuned": bench.start_worker(QUEUE_TUNED, tuned=True),
    }
    # A batch writes its rows after its last POST: let the warm-ups' rows land first.
    warm_rows = 2 * (2 * MANY + 8)
    deadline = time.monotonic() + 10
    while delivery_rows()[0] < warm_rows and time.monotonic() < deadline:
        time.sleep(0.05)
    rows0 = delivery_rows()
    expected = 0
    try:
        for events, endpoints in parse_scenarios(args.scenarios):
            count = events * endpoints
            key = f"{events}x{endpoints}"
            runs: dict[str, list[Run]] = {}
            pairs: dict[str, list[float]] = {}
            print(
                f"\n== {events} events x {endpoints} endpoint(s) = {count} deliveries, "
                f"{args.rounds} round(s), {args.pool}"
            )

            def suite(kind: str, count: int = count, endpoints: int = endpoints) -> Run:
                worker = workers[kind]
                return bench.timed(
                    f"suite ({kind})",
                    count,
                    worker,
                    partial(
                        bench.publish_fires,
                        endpoints=endpoints,
                        queue=QUEUE_TUNED if kind == "tuned" else QUEUE_DEFAULTS,
                    ),
                    noop=False,
                )

            contenders: dict[str, Callable[[], Run]] = {
                "floor": partial(bench.floor, count),
                "suite (defaults)": partial(suite, "defaults"),
                "suite (tuned)": partial(suite, "tuned"),
            }
            if endpoints == 1:
                contenders["no-op task"] = lambda count=count: bench.timed(
                    "noop",
                    count,
                    workers["defaults"],
                    partial(bench.publish_noop, probes={"noop": noop_task}, queue=QUEUE_DEFAULTS),
                    noop=True,
                )
            for peer in peers:
                contenders[peer.label] = partial(peer.run, events, endpoints, bench.timeout(count))
            names = list(contenders)
            for r in range(args.rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                got: dict[str, Run] = {}
                for name in order:
                    got[name] = contenders[name]()
                    runs.setdefault(name, []).append(got[name])
                    print(
                        f"  {name:<38} {got[name].rate:8.1f} deliveries/s "
                        f"({got[name].count} in {got[name].seconds:.2f} s)",
                        flush=True,
                    )
                for a, b in (
                    ("suite (defaults)", "no-op task"),
                    ("suite (defaults)", "floor"),
                    ("suite (tuned)", "django-webhook (tuned)"),
                    ("suite (defaults)", "django-webhook (defaults)"),
                ):
                    if a in got and b in got:
                        pairs.setdefault(f"{a} / {b}", []).append(got[a].rate / got[b].rate)
            expected += count * args.rounds * 2  # both suite workers, log on
            results[key] = {"runs": runs, "pairs": pairs, "endpoints": endpoints}
        # The last request the receiver keeps (its signatures are checked) is the suite's.
        bench.timed(
            "check",
            1,
            workers["defaults"],
            partial(bench.publish_fires, endpoints=1, queue=QUEUE_DEFAULTS),
            noop=False,
        )
        expected += 1
        # A row is written just after its POST: give the last ones a moment.
        deadline = time.monotonic() + 10
        while delivery_rows()[0] - rows0[0] < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        rows1 = delivery_rows()
        results["log_rows"] = (rows1[0] - rows0[0], rows1[1] - rows0[1], expected)
        results["failed_attempts"] = failed_attempts()
    finally:
        for worker in workers.values():
            worker.stop()
    return results


# -- part 3: fire() to 1,000 endpoints -------------------------------------------------------
def fan_out(bench: Bench) -> dict[str, Any]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from appframework.conf import app_settings
    from appframework_webhooks.manager import WebhookManager
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

    # Batches of BATCH_SIZE, published by the caller (up to FAN_OUT_THRESHOLD of them).
    messages = -(-FANOUT_ENDPOINTS // int(app_settings.WEBHOOKS.BATCH_SIZE))
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
            assert published == messages, f"{mode}: {published} messages, expected {messages}"
    for mode, counts in queries.items():
        assert counts == {TARGET_QUERIES}, f"fire() {mode} a transaction ran {counts} queries"
    redis.flushdb()
    return {"times": times, "queries": queries, "sql": sql, "messages": messages}


# -- reporting -------------------------------------------------------------------------------
def cpu_line(runs: list[Run]) -> str:
    keys = ["publisher", "worker", "caller", "receiver", "redis", "postgres"]
    parts = []
    total = 0.0
    for key in keys:
        values = [run.cpu[key] for run in runs if key in run.cpu]
        if values:
            total += statistics.median(values)
            parts.append(f"{key} {statistics.median(values) * 1000:.2f}")
    return ", ".join(parts) + (f"; total {total * 1000:.2f}" if total else "")


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled(
        "--scenarios",
        str,
        "2000x1,20x100",
        "400x1,4x100",
        "EVENTSxENDPOINTS, comma-separated (endpoints: 1 or 100)",
    )
    parser.add_scaled("--rounds", int, 5, 2, "interleaved rounds per scenario")
    parser.add_argument("--pool", default="prefork:4", help="the workers' pool (default prefork:4)")
    parser.add_argument(
        "--peers",
        default="auto",
        help="auto (when .venvs/bench-webhook-peers exists and the database is PostgreSQL), "
        "on, or off",
    )
    parser.add_argument(
        "--peer-settings",
        default="defaults,tuned",
        help="the peers' settings measured: defaults, tuned or both (default both)",
    )
    parser.add_scaled("--fire-rounds", int, 21, 7, "fire() calls per mode")
    args = parser.parse_args()

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)  # run the finally blocks: no stray processes

    signal.signal(signal.SIGTERM, terminate)

    tmpdir = Path(tempfile.mkdtemp(prefix="webhooks-bench-"))
    receiver: Receiver | None = None
    database = database_from_env(tmpdir)
    created_test_db: str | None = None
    redis = _redis()
    peers: list[Peer] = []
    try:
        try:
            redis.ping()
        except Exception as exc:
            raise SystemExit(f"Redis at {BROKER_URL} is not reachable: {exc}") from exc
        redis.flushdb()
        configure(database)
        from django.core.management import call_command
        from django.db import connection

        postgres = database["ENGINE"].endswith("postgresql")
        if postgres:
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
        engine = "PostgreSQL" if postgres else "SQLite file (WAL)"
        print(
            f"{benchlib.platform()}, Celery {_celery_version()}, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.2f}; {engine}; broker {BROKER_URL}"
        )
        want_peers = args.peers == "on" or (
            args.peers == "auto" and postgres and (PEER_ENV / "bin" / "python").exists()
        )
        if want_peers:
            if not postgres:
                raise SystemExit("--peers on: the peers run on PostgreSQL (DATABASE_URL)")
            for name in PEERS:
                for kind in args.peer_settings.split(","):
                    peers.append(Peer(name, kind.strip(), os.environ["DATABASE_URL"], bench))
        else:
            print("peers: not measured (--peers, or no PostgreSQL / peers' virtualenv)")

        # 3. fire() to 1,000 endpoints (no worker yet: the queue only fills, then is purged)
        fan = fan_out(bench)
        # 1 + 2. the floor, the no-op task, the suite and the peers, interleaved
        results = contest(bench, peers)
        check = receiver.last_request()
    finally:
        for peer in peers:
            peer.close()
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

    return report(args, fan, results, check)


def _celery_version() -> str:
    import celery

    return str(celery.__version__)


def report(args: Any, fan: dict[str, Any], results: dict[str, Any], check: dict[str, Any]) -> int:
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

    ratios: list[benchlib.Ratio] = []
    for key, result in results.items():
        if key in ("log_rows", "failed_attempts"):
            continue
        print(f"\n== {key}: deliveries/s (median of rounds), CPU ms per delivery by process")
        for name, runs in result["runs"].items():
            rate = statistics.median(r.rate for r in runs)
            info[f"{key} {name} /s"] = rate
            print(f"  {name:<38} {rate:8.1f}/s   cpu ms: {cpu_line(runs)}")
        for name, values in result["pairs"].items():
            ratio = statistics.median(values)
            print(f"  {name:<52} {ratio:6.3f} (median of per-round ratios)")
            label = f"{key} {name}"
            if name == "suite (defaults) / no-op task":
                ratios.append(benchlib.Ratio(label, ratio, ">=", TARGET_NOOP))
            elif name == "suite (tuned) / django-webhook (tuned)" and result["endpoints"] == 1:
                ratios.append(benchlib.Ratio(label, ratio, ">=", TARGET_PEER))
            elif name == "suite (defaults) / floor" and result["endpoints"] == MANY:
                ratios.append(benchlib.Ratio(label, ratio, ">=", TARGET_FLOOR))
            else:
                info[label] = ratio
    rows, ok_rows, expected = results["log_rows"]
    print(f"\n  delivery log: {rows} rows written ({ok_rows} successful, {expected} expected)")
    for error, count in results["failed_attempts"].items():
        print(f"  failed attempt (retried): {count} x {error}")
    # Every delivery arrived once (the receiver counted them); a failed attempt that
    # was retried is a reading, not a loss.
    assert ok_rows == expected, results["log_rows"]
    info["failed attempts"] = float(rows - ok_rows)

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
    print(f"  messages published per fire(): {fan['messages']} (batches of BATCH_SIZE)")

    ratios += [
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
