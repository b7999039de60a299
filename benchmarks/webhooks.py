"""Webhook delivery throughput on PostgreSQL + Redis, side by side, and what ``fire()`` to
1,000 endpoints costs its caller.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379 \\
        .venv/bin/python benchmarks/webhooks.py [--events 2000] [--fanout-events 20]
        [--rounds 5] [--fire-rounds 21] [--quick | --smoke] [--json]

Needs PostgreSQL (``DATABASE_URL``: its server gets two scratch databases,
``bench_webhooks_<pid>`` and ``bench_webhooks_peer_<pid>``, dropped at the end), Redis
(``REDIS_URL``: databases 10 and 11 are flushed, none the test suite uses) and
django-webhook's virtualenv (``bash benchmarks/webhooks_peers/setup_env.sh``;
``scripts/bench`` makes it).

Every worker is ``celery worker --pool prefork -c4`` with Celery's Django fix-up; every
endpoint has a secret and the suite's delivery log is on. Deliveries go to
``webhooks_receiver.py``; a run's time goes from just before its first event to the
receiver's last POST (or, for the no-op task, the last task's end). Each round runs every
contender once, in an order that rotates; ratios are medians of per-round ratios.

* 1 endpoint per event (``--events``): the suite on a worker with Celery's defaults / a
  no-op task with the delivery job's options on that worker (Celery's own cost per task),
  target >= 0.55; the suite on a worker with ``CELERY_DB_REUSE_MAX=100`` and prefetch 1 /
  django-webhook 0.0.15 (``webhooks_peers/``: its own virtualenv, database and worker, a
  ``post_save`` per event, one task per delivery) on the same settings, target >= 1.5.
* 100 endpoints per event (``--fanout-events``): the suite (defaults) / one keep-alive
  ``requests.Session`` loop POSTing the same signed body, target >= 1.0.
* ``fire()`` to 1,000 endpoints, inside ``transaction.atomic()`` and outside, with no
  worker on its queue: median ms <= 50 and 1 query per call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import benchlib

HERE = Path(__file__).resolve().parent
PEER_PYTHON = HERE.parent / ".venvs" / "bench-webhook-peers" / "bin" / "python"
REDIS = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379")
BROKER = REDIS._replace(path="/11").geturl()
PEER_BROKER = REDIS._replace(path="/10").geturl()
WORKER_CONFIG = "WEBHOOKS_BENCH_WORKER"  # the suite's worker's settings, JSON
EVENT_ONE, EVENT_MANY, EVENT_FAN = "bench.one", "bench.many", "bench.fanout"
MANY, FAN = 100, 1000  # endpoints of EVENT_MANY and EVENT_FAN
SECRET = "benchmark-webhook-secret"
NOOP_COUNT, NOOP_LAST = "webhooks-bench:noop", "webhooks-bench:noop-last"
DEFAULTS, TUNED, PEER, NOOP, FLOOR = (
    "suite (defaults)",
    "suite (tuned)",
    "django-webhook (tuned)",
    "no-op task",
    "floor",
)
TARGETS = {  # ratio: (scenario, numerator, denominator, minimum)
    "suite / no-op task, 1 endpoint": ("1x", DEFAULTS, NOOP, 0.55),
    "suite / django-webhook, tuned": ("1x", TUNED, PEER, 1.5),
    "suite / floor, 100 endpoints": ("100x", DEFAULTS, FLOOR, 1.0),
}
TARGET_FIRE_MS = 50.0


def configure(database: dict[str, Any]) -> None:
    benchlib.configure_django(
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "appframework",
            "appframework_webhooks",
        ],
        DATABASES={"default": database},
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        APPFRAMEWORK={"WEBHOOKS": {"ALLOWED_NETWORKS": ["127.0.0.0/8"]}},
        LOGGING={"version": 1, "disable_existing_loggers": False},
    )


def make_app(queue: str = "celery", tuned: bool = False, worker: bool = False) -> Any:
    """The Celery app on the configured settings, with the ``noop`` probe. ``worker``:
    Celery's Django fix-up, as ``DJANGO_SETTINGS_MODULE`` installs it in a project."""
    import redis
    from celery import Celery

    app = Celery("webhooks_bench", set_as_current=True)
    app.conf.update(
        broker_url=BROKER,
        broker_connection_retry_on_startup=True,
        task_ignore_result=True,
        task_default_queue=queue,
    )
    if tuned:
        app.conf.worker_prefetch_multiplier = 1
        app.conf.CELERY_DB_REUSE_MAX = 100  # read by the fix-up, as from settings
    if worker:
        from celery.fixups.django import DjangoFixup

        DjangoFixup(app).install()
    counter = redis.Redis.from_url(BROKER)

    @app.task(name="webhooks_bench.noop", acks_late=True, reject_on_worker_lost=True)
    def noop() -> None:  # the delivery job's reliability options, no work
        counter.pipeline(transaction=False).incr(NOOP_COUNT).set(
            NOOP_LAST, repr(time.monotonic())
        ).execute()

    app.set_default()
    return app


def __getattr__(name: str) -> Any:
    # ``celery -A webhooks:celery_app``: the worker's app, built on first access only.
    if name == "celery_app":
        config = json.loads(os.environ[WORKER_CONFIG])
        configure(config["database"])
        globals()[name] = make_app(config["queue"], config["tuned"], worker=True)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Bench:
    def __init__(self, tmpdir: Path, stack: contextlib.ExitStack) -> None:
        import redis
        import requests

        self.tmpdir, self.stack = tmpdir, stack
        self.workers: dict[str, Any] = {}  # by contender
        self.driver: Any = None  # django-webhook's caller, webhooks_peers/peer_driver.py
        self.redis = redis.Redis.from_url(BROKER)
        self.http = requests.Session()
        self.http.trust_env = False
        receiver = self.popen([sys.executable, str(HERE / "webhooks_receiver.py")])
        assert receiver.stdout is not None
        self.base = f"http://127.0.0.1:{int(receiver.stdout.readline())}"

    def popen(self, argv: list[str], log: Path | None = None, **kwargs: Any) -> Any:
        """A child in a session of its own, stopped with the benchmark (however it ends)."""
        out = open(log, "wb") if log else subprocess.PIPE  # noqa: SIM115 (the child keeps it)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT if log else None,
            text=True,
            start_new_session=True,
            preexec_fn=benchlib.die_with_parent,
            **kwargs,
        )
        self.stack.callback(benchlib.stop_group, proc)
        self.stack.callback(proc.stdin.close)  # type: ignore[union-attr]
        return proc

    def worker(self, name: str, argv: list[str], env: dict[str, str], cwd: Path) -> Any:
        log = self.tmpdir / f"{name}.log"
        argv += ["worker", "--pool", "prefork", "--concurrency", "4", "--loglevel", "WARNING"]
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        proc = self.popen([*argv, "--hostname", f"{name}-{os.getpid()}@%h"], log, env=env, cwd=cwd)
        proc.log = log
        return proc

    def received(self) -> tuple[int, float]:
        posts, last = self.http.get(f"{self.base}/count", timeout=5).text.split()
        return int(posts), float(last)

    def noops(self) -> tuple[int, float]:
        count, last = self.redis.mget(NOOP_COUNT, NOOP_LAST)
        return int(count or 0), float(last or 0)

    def timed(self, count: int, name: str, endpoints: int = 1) -> float:
        """Deliveries/s of contender ``name``: from just before its first event to the
        last arrival."""
        self.http.get(f"{self.base}/reset", timeout=5)
        self.redis.delete(NOOP_COUNT, NOOP_LAST)
        arrived = self.noops if name == NOOP else self.received
        worker = self.workers.get(name)
        fire = {
            DEFAULTS: lambda n: self.fire_suite(n, "defaults", endpoints),
            TUNED: lambda n: self.fire_suite(n, "tuned", endpoints),
            NOOP: self.fire_noop,
            PEER: self.fire_peer,
            FLOOR: self.fire_floor,
        }[name]
        t0 = fire(count)
        deadline = time.monotonic() + 60 + count / 10
        while (got := arrived())[0] < count:
            if (worker is not None and worker.poll() is not None) or time.monotonic() > deadline:
                log = worker.log.read_text()[-3000:] if worker is not None else ""
                raise RuntimeError(f"{got[0]} of {count} arrived; worker log:\n{log}")
            time.sleep(0.02)
        if got[0] > count:
            raise RuntimeError(f"{got[0]} arrivals, expected {count}")
        return count / (got[1] - t0)

    # -- what each contender does for ``count`` deliveries; the time of its first event
    def fire_suite(self, count: int, queue: str, endpoints: int) -> float:
        from django.test import override_settings

        from appframework_webhooks.manager import WebhookManager

        event = EVENT_ONE if endpoints == 1 else EVENT_MANY
        fire = WebhookManager().fire_sync
        webhooks = {"ALLOWED_NETWORKS": ["127.0.0.0/8"], "QUEUE": queue}
        with override_settings(APPFRAMEWORK={"WEBHOOKS": webhooks}):
            t0 = time.monotonic()
            for i in range(count // endpoints):
                fire(event, {"n": i, "note": "benchmark"})
        return t0

    def fire_noop(self, count: int) -> float:
        from celery import current_app

        noop = current_app.tasks["webhooks_bench.noop"]
        t0 = time.monotonic()
        for _ in range(count):
            noop.apply_async(queue="defaults")
        return t0

    def fire_peer(self, count: int) -> float:
        self.driver.stdin.write(f"{count}\n")
        self.driver.stdin.flush()
        return float(self.driver.stdout.readline())

    def fire_floor(self, count: int) -> float:
        from appframework_webhooks.manager import serialize
        from appframework_webhooks.signing import sign

        body = serialize(EVENT_ONE, {"n": 0, "note": "benchmark"}).encode()
        post, url = self.http.post, f"{self.base}/floor"
        t0 = time.monotonic()
        for _ in range(count):
            headers = {
                "Content-Type": "application/json",
                "X-Webhook-Event": EVENT_ONE,
                "X-Webhook-Signature": sign(SECRET, body),
            }
            post(url, data=body, headers=headers, timeout=10).raise_for_status()
        return t0


def scratch_databases(stack: contextlib.ExitStack) -> tuple[dict[str, Any], dict[str, Any]]:
    """The suite's database (migrated) and the peer's (empty), both dropped at the end."""
    from django.db import connection

    from testproject.settings import database_from_url  # the demo's one URL parser

    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    database = {**database_from_url(url), "TEST": {"NAME": f"bench_webhooks_{os.getpid()}"}}
    configure(database)
    named = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    stack.callback(connection.creation.destroy_test_db, named, verbosity=0)
    stack.callback(connection.close)
    keys = ("ENGINE", "NAME", "USER", "PASSWORD", "HOST", "PORT", "OPTIONS")
    suite = {k: connection.settings_dict[k] for k in keys}
    peer = {k: suite[k] for k in ("ENGINE", "USER", "PASSWORD", "HOST", "PORT")}
    peer["NAME"] = f"bench_webhooks_peer_{os.getpid()}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{peer["NAME"]}"')
    drop = f'DROP DATABASE IF EXISTS "{peer["NAME"]}" WITH (FORCE)'
    stack.callback(lambda: connection.cursor().execute(drop))
    return suite, peer


def fan_out(bench: Bench, rounds: int) -> dict[str, Any]:
    """``fire()`` to 1,000 endpoints: ms and queries per call in and outside ``atomic()``,
    and the ms of the commit that publishes; the jobs stay queued, then are purged."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from appframework.conf import app_settings
    from appframework_webhooks.manager import WebhookManager

    fire, redis, queue = WebhookManager().fire_sync, bench.redis, "celery"
    data = {"order": 12345, "note": "fan-out"}
    for _ in range(3):  # the broker connection, the statement
        fire(EVENT_FAN, data)
    messages = -(-FAN // int(app_settings.WEBHOOKS.BATCH_SIZE))
    ms: dict[str, list[float]] = {"inside": [], "commit": [], "outside": []}
    queries: set[tuple[str, int]] = set()
    for r in range(rounds):
        for mode in ("inside", "outside") if r % 2 == 0 else ("outside", "inside"):
            before = redis.llen(queue)
            with contextlib.ExitStack() as atomic:
                if mode == "inside":
                    atomic.enter_context(transaction.atomic())
                with CaptureQueriesContext(connection) as ctx:
                    t0 = time.perf_counter()
                    ids = fire(EVENT_FAN, data)
                    ms[mode].append((time.perf_counter() - t0) * 1000)
                if mode == "inside" and redis.llen(queue) != before:
                    raise RuntimeError("fire() published before the commit")
                t1 = time.perf_counter()
            if mode == "inside":
                ms["commit"].append((time.perf_counter() - t1) * 1000)
            queries.add((mode, len(ctx.captured_queries)))
            assert len(ids) == FAN and redis.llen(queue) - before == messages, mode
    redis.delete(queue)
    print(f"\n== fire() to {FAN} endpoints, {rounds} calls per mode; median ms (min, max)")
    print(f"  the query: {ctx.captured_queries[0]['sql'][:150]}...")
    for mode, label in (
        ("inside", "in atomic(): fire()"),
        ("commit", "in atomic(): the commit, which publishes"),
        ("outside", "outside: fire() and the publishing"),
    ):
        values = ms[mode]
        print(
            f"  {label:<42} {statistics.median(values):7.2f} ({min(values):.2f}, {max(values):.2f})"
        )
    print(f"  {messages} messages per call (BATCH_SIZE endpoints each); queries {sorted(queries)}")
    return {
        "ms": {mode: statistics.median(values) for mode, values in ms.items()},
        "queries": {
            mode: max(n for m, n in queries if m == mode) for mode in ("inside", "outside")
        },
    }


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--events", int, 2000, 400, "events to 1 endpoint per contender", smoke=100)
    parser.add_scaled(
        "--fanout-events", int, 20, 4, "events to 100 endpoints per contender", smoke=2
    )
    parser.add_scaled("--rounds", int, 5, 2, "rounds", smoke=1)
    parser.add_scaled("--fire-rounds", int, 21, 7, "fire() calls per mode", smoke=2)
    args = parser.parse_args()
    if not PEER_PYTHON.exists():
        raise SystemExit(f"no {PEER_PYTHON}: bash benchmarks/webhooks_peers/setup_env.sh")
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    with contextlib.ExitStack() as stack:
        tmpdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="webhooks-bench-")))
        suite_db, peer_db = scratch_databases(stack)
        bench = Bench(tmpdir, stack)
        for url in (BROKER, PEER_BROKER):
            db = bench.redis.from_url(url)
            db.flushdb()
            stack.callback(db.flushdb)
        make_app()
        peer_env = {
            **os.environ,
            "WEBHOOKS_PEER_CONFIG": json.dumps({"database": peer_db, "broker": PEER_BROKER}),
            "PYTHONPATH": str(HERE / "webhooks_peers"),
            "DJANGO_SETTINGS_MODULE": "peer_app.settings",
        }
        driver = [str(PEER_PYTHON), str(HERE / "webhooks_peers" / "peer_driver.py")]
        bench.driver = bench.popen([*driver, f"{bench.base}/peer"], env=peer_env)

        from appframework_webhooks.models import WebhookEndpoint

        WebhookEndpoint.objects.bulk_create(
            [WebhookEndpoint(url=f"{bench.base}/one", event=EVENT_ONE, secret=SECRET)]
            + [
                WebhookEndpoint(url=f"{bench.base}/{event}/{i}", event=event, secret=SECRET)
                for event, n in ((EVENT_MANY, MANY), (EVENT_FAN, FAN))
                for i in range(n)
            ]
        )
        import celery

        print(
            f"{benchlib.platform()}, Celery {celery.__version__}, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.2f}; PostgreSQL {suite_db['NAME']}; broker {BROKER}"
        )
        fan = fan_out(bench, args.fire_rounds)

        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        for name, queue in ((DEFAULTS, "defaults"), (TUNED, "tuned")):
            config = {"database": suite_db, "queue": queue, "tuned": name == TUNED}
            bench.workers[name] = bench.worker(
                f"suite-{queue}",
                [sys.executable, "-m", "celery", "-A", "webhooks:celery_app"],
                {**env, WORKER_CONFIG: json.dumps(config)},
                HERE,
            )
        bench.workers[NOOP] = bench.workers[DEFAULTS]
        if bench.driver.stdout.readline().strip() != "ready":
            raise RuntimeError("django-webhook's driver did not start (its output is above)")
        bench.workers[PEER] = bench.worker(
            "django-webhook", [str(PEER_PYTHON), "-m", "celery", "-A", "peer_app"], peer_env, tmpdir
        )
        # Warm-up, not timed: every pool process through a delivery, connections open.
        suite_deliveries = 0
        for name in (DEFAULTS, TUNED):
            bench.timed(2 * MANY, name, MANY)
            bench.timed(8, name)
            suite_deliveries += 2 * MANY + 8
        bench.timed(8, PEER)
        bench.timed(8, NOOP)

        scenarios = {
            "1x": (args.events, 1, [DEFAULTS, NOOP, TUNED, PEER]),
            "100x": (args.fanout_events * MANY, MANY, [FLOOR, DEFAULTS]),
        }
        rates: dict[tuple[str, str], list[float]] = {}
        for key, (count, endpoints, names) in scenarios.items():
            print(f"\n== {key}: {count} deliveries per contender, {args.rounds} round(s)")
            for r in range(args.rounds):
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    rate = bench.timed(count, name, endpoints)
                    rates.setdefault((key, name), []).append(rate)
                    suite_deliveries += count if name in (DEFAULTS, TUNED) else 0
                    print(f"  {name:<24} {rate:8.1f} deliveries/s", flush=True)

        # The last POST the receiver keeps is the suite's: its signatures must hold.
        bench.timed(1, DEFAULTS)
        last = bench.http.get(f"{bench.base}/last", timeout=5).json()
        check_delivery_log(last, suite_deliveries + 1)
    return report(args, rates, fan)


def check_delivery_log(last: dict[str, Any], expected: int) -> None:
    """A delivered request carries valid signatures, and every suite delivery has its
    successful row in the delivery log (written just after the POST)."""
    from appframework_webhooks.models import WebhookDelivery
    from appframework_webhooks.signing import verify_signature, verify_webhook

    body = last["body"].encode()
    assert verify_signature(SECRET, body, last["headers"]["X-Webhook-Signature"]), last
    assert verify_webhook(SECRET, last["headers"], body), last
    deadline = time.monotonic() + 10
    while (ok := WebhookDelivery.objects.filter(success=True).count()) < expected:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    failed = WebhookDelivery.objects.filter(success=False).count()
    print(f"\nsignatures ok; delivery log: {ok} successful rows of {expected}, {failed} failed")
    assert ok == expected, (ok, expected)


def report(args: Any, rates: dict[tuple[str, str], list[float]], fan: dict[str, Any]) -> int:
    print("\n== deliveries/s, median of rounds")
    info = {f"{key} {name} /s": statistics.median(v) for (key, name), v in rates.items()}
    for name, value in info.items():
        print(f"  {name:<30} {value:8.1f}")
    ratios = []
    for label, (key, a, b, target) in TARGETS.items():
        per_round = benchlib.median_ratio(rates[key, a], rates[key, b])
        ratios.append(benchlib.Ratio(label, per_round, ">=", target))
    for mode, label in (("inside", "in atomic"), ("outside", "outside")):
        info[f"fire() {mode} ms"] = fan["ms"][mode]
        ratios.append(
            benchlib.Ratio(f"fire() 1k ms, {label}", fan["ms"][mode], "<=", TARGET_FIRE_MS)
        )
        ratios.append(
            benchlib.Ratio(f"fire() queries, {label}", float(fan["queries"][mode]), "<=", 1)
        )
    info["fire() commit ms"] = fan["ms"]["commit"]
    return benchlib.finish(args, "webhooks", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
