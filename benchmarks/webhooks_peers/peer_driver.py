"""One published Django webhook library ("peer") in a process of its own, with its own Celery
worker, scratch database and Redis database, driven over stdin/stdout by
``benchmarks/webhooks.py`` so that it runs interleaved with the suite's contenders.

    .venvs/bench-webhook-peers/bin/python benchmarks/webhooks_peers/peer_driver.py \\
        --peer django-webhook --database-url postgres://postgres@127.0.0.1:5432/test \\
        --broker redis://127.0.0.1:6379/11 --receiver http://127.0.0.1:PORT \\
        --settings defaults --concurrency 4 --tmpdir DIR

Its virtualenv is made by ``setup_env.sh`` (beside this file); it never imports our code.

Protocol: one JSON object per line on stdin, one JSON answer per line on stdout (nothing else
is written there: Python's fd 1 is pointed at stderr, which gets the logs):

* ``{"cmd": "setup", "endpoints": M}`` - delete the endpoints, create M (``<receiver>/p/<i>``,
  each with a secret, subscribed to ``bench.BenchItem`` creation), then a warm-up (a few
  events through the worker, waited for, not timed) -> ``{"ok": true}``;
* ``{"cmd": "run", "events": N, "endpoints": M, "timeout": s}`` - ``GET /reset`` on the
  receiver, create N ``BenchItem`` rows one by one in autocommit (outside any transaction),
  wait for N*M POSTs (a run with another M than the last ``setup`` sets up first)
  -> ``{"ok": true, "deliveries", "seconds", "rate", "fire_seconds",
  "cpu": {"caller", "worker", "receiver", "redis"}}``: ``seconds`` runs from just before the
  first event to the receiver's last POST (``time.monotonic()``, one clock for every process
  on Linux); CPU seconds for the whole run: this process, the worker's process group, the
  receiver, the Redis server. Or ``{"ok": false, "error", "received"}`` with the end of the
  worker's log;
* ``{"cmd": "quit"}`` - stop the worker, drop the database -> ``{"ok": true}``, exit 0.

End of stdin, SIGTERM or SIGINT end it the same way. The database ``webhooks_peer_<pid>``
is created next to the named one and dropped at the end; the broker's Redis database is
flushed at start and at the end (it must be this driver's alone).

The project (``peer_app/``): both peers' settings at their defaults, Celery configured from
Django's settings (``CELERY_`` namespace) with ``autodiscover_tasks()``, the worker
``celery -A peer_app.celery_app:app worker --pool prefork -c <concurrency> --without-gossip
--without-mingle --without-heartbeat -l WARNING`` (``WEBHOOKS_BENCH_LOGLEVEL`` overrides
the level; its log is ``worker.log`` in this driver's folder under ``--tmpdir``) with
``DJANGO_SETTINGS_MODULE`` set (so
Celery's Django fix-up is installed), no result backend. ``--settings defaults``: Celery's
defaults (the fix-up closes the database connection around every task, prefetch 4);
``tuned``: ``CELERY_DB_REUSE_MAX = 100`` and ``worker_prefetch_multiplier = 1``.

django-webhook 0.0.15 (``DJANGO_WEBHOOK = {"MODELS": ["bench.BenchItem"]}``, the rest at
defaults: ``STORE_EVENTS`` and ``USE_CACHE`` on):

* fires from its own ``post_save`` receiver, connected for each model in ``MODELS``, at once
  (no ``on_commit``): the webhook ids for the topic (``bench.BenchItem/create``) come from a
  1-minute in-process cache (one query per minute), then per webhook the instance is
  serialized (``model_to_dict`` + ``json.dumps``) and ``fire_webhook.delay()`` publishes one
  message: M publishes per event, from the caller;
* ``fire_webhook``, one task per delivery: ``Webhook.objects.get``, the webhook's secrets
  (a query), HMAC-SHA256 of ``"<timestamp>:<body>"`` per secret
  (``Django-Webhook-Signature-v1``), ``INSERT`` of a ``WebhookEvent`` row (its delivery log:
  payload, url, topic, status PENDING), a POST through a new ``requests.Session()`` per
  delivery (a new TCP connection each time; no timeout), ``UPDATE`` of the event's status:
  4 queries per delivery;
* after ``setup`` the driver rebuilds that 1-minute cache (as a restart would), else the
  ids of deleted webhooks would be used for up to a minute.

django-webhook-subscriber 2.3.0 (``WEBHOOK_SUBSCRIBER`` at its defaults: ``AUTO_CLEANUP``
on, ``WEBHOOK_CACHE_TTL`` 300 s, ``MAX_BATCH_SIZE`` 100; no ``CACHES``, so Django's
local-memory cache):

* fires when the project calls ``send_webhooks(instance, "created")``; here from a
  ``post_save`` receiver (``peer_app/signals.py``, the signal pattern it documents), at
  once (no ``on_commit``): subscriptions from the cache (content type id ``lru_cache``-d, the
  list of ``{id, url, serializer}`` in Django's cache), the instance serialized once per
  event by a DRF ``ModelSerializer``, one ``process_webhook_delivery_batch.delay()`` per
  event (per 100 subscriptions): 1 publish per event, from the caller;
* ``process_webhook_delivery_batch`` (in the worker): a Celery ``group`` of one
  ``deliver_webhook`` signature per subscription, published from the worker: so N*M
  delivery tasks plus N batch tasks;
* ``deliver_webhook``, per delivery: the subscription with its subscriber (a join), an
  ``INSERT`` of a ``WebhookDeliveryLog`` row (its delivery log, always on) followed by its
  ``AUTO_CLEANUP`` (a ``COUNT`` and a ``DELETE`` of the subscription's logs older than 30
  days), a POST through a new ``requests.Session`` per delivery (``X-Secret: <secret>``
  header, no HMAC), the log row saved again with the response, the subscription's counters
  saved, and ``subscriber.record_success()``, whose ``save()`` runs ``full_clean()`` (a
  uniqueness query, a foreign-key check) and clears the subscriber cache (a content-type
  fetch and a ``DISTINCT`` query): 11 queries per delivery (and a transaction around the
  clean-up), 2 of them updates of the subscription's and the subscriber's rows, which every
  delivery to that endpoint writes;
* after ``setup`` the driver calls the library's ``clear_webhook_cache()``: deleting
  subscribers does not clear it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import IO, Any, Protocol
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
# benchlib (standard library only) is shared with benchmarks/webhooks.py.
sys.path.insert(0, str(HERE.parent))
import benchlib  # noqa: E402

PEERS = ("django-webhook", "django-webhook-subscriber")
CONFIG_ENV = "WEBHOOKS_PEER_CONFIG"  # read by peer_app/settings.py
SETTINGS_MODULE = "peer_app.settings"
CELERY_APP = "peer_app.celery_app:app"
QUEUE = "celery"  # Celery's default queue: a Redis list of that name
SECRET = "benchmark-webhook-secret"
POLL = 0.02  # seconds between two looks at the receiver's count
WARMUP_TIMEOUT = 120.0
STOP_GRACE = 15.0


def log(message: str) -> None:
    print(f"[peer_driver {os.getpid()}] {message}", file=sys.stderr, flush=True)


class Stop(Exception):
    """SIGTERM/SIGINT: leave the command loop, clean up, exit 0."""


class Stalled(Exception):
    def __init__(self, message: str, received: int) -> None:
        super().__init__(message)
        self.received = received


# -- the database ------------------------------------------------------------------------------
def parse_database_url(url: str) -> dict[str, Any]:
    """A Django ``DATABASES`` entry from ``postgres://user:password@host:port/name``."""
    parts = urlsplit(url)
    name = unquote(parts.path.lstrip("/"))
    if parts.scheme not in ("postgres", "postgresql", "pgsql") or not name:
        raise SystemExit(f"--database-url: expected postgres://user@host:port/name, got {url!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }


def admin_execute(database: dict[str, Any], statement: str, name: str) -> None:
    """Run ``statement`` (``{}``: the quoted ``name``) on ``database``, in autocommit."""
    import psycopg
    from psycopg import sql

    params = {
        "dbname": database["NAME"],
        "user": database["USER"],
        "password": database["PASSWORD"],
        "host": database["HOST"],
        "port": database["PORT"],
    }
    with psycopg.connect(autocommit=True, **{k: v for k, v in params.items() if v}) as conn:
        conn.execute(sql.SQL(statement).format(sql.Identifier(name)))


class ScratchDatabase:
    """``webhooks_peer_<pid>``, next to the named database: created, then dropped."""

    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named
        self.name = f"webhooks_peer_{os.getpid()}"
        self.settings = {**named, "NAME": self.name}
        self.created = False

    def create(self) -> None:
        admin_execute(self.named, "DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)
        admin_execute(self.named, "CREATE DATABASE {}", self.name)
        self.created = True

    def drop(self) -> None:
        if self.created:
            admin_execute(self.named, "DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)
            self.created = False


# -- the worker --------------------------------------------------------------------------------
class Worker:
    """``celery worker --pool prefork`` on the project's app, in a session of its own."""

    def __init__(self, concurrency: int, env: dict[str, str], workdir: Path) -> None:
        self.concurrency = concurrency
        self.env = env
        self.log_path = workdir / "worker.log"
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        loglevel = os.environ.get("WEBHOOKS_BENCH_LOGLEVEL", "WARNING")
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    CELERY_APP,
                    "worker",
                    "--pool",
                    "prefork",
                    "-c",
                    str(self.concurrency),
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-l",
                    loglevel,
                    "--hostname",
                    f"webhooks-peer-{os.getpid()}@%h",
                ],
                cwd=self.workdir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=benchlib.die_with_parent,
            )
        log(f"worker pid {self.proc.pid}, log {self.log_path}")

    def cpu(self) -> float:
        return benchlib.cpu_seconds(session=self.proc.pid) if self.proc is not None else 0.0

    def check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise RuntimeError(f"the worker exited ({code}):\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to the worker's process group, SIGKILL to it after STOP_GRACE s."""
        proc, self.proc = self.proc, None
        if proc is not None:
            benchlib.stop_group(proc, STOP_GRACE, whole_group=True)


# -- the receiver ------------------------------------------------------------------------------
class Receiver:
    """``webhooks_receiver.py``'s GETs: ``/reset`` and ``/count``."""

    def __init__(self, base: str) -> None:
        import requests

        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.session.trust_env = False

    def url(self, i: int) -> str:
        return f"{self.base}/p/{i}"

    def reset(self) -> None:
        self.session.get(f"{self.base}/reset", timeout=5).raise_for_status()

    def stats(self) -> tuple[int, float, float, float]:
        """POSTs since the reset, monotonic time of the first and last one, its CPU s."""
        posts, first, last, cpu = self.session.get(f"{self.base}/count", timeout=5).text.split()
        return int(posts), float(first), float(last), float(cpu)


# -- the peers ---------------------------------------------------------------------------------
class Peer(Protocol):
    def setup(self, urls: list[str]) -> None:
        """Replace the endpoints by one per URL, subscribed to BenchItem creation."""

    def after_migrate(self) -> None:
        """What the peer's start-up does once its tables exist."""


class DjangoWebhook:
    """django-webhook: ``Webhook`` + ``WebhookTopic`` + ``WebhookSecret``."""

    topic = "bench.BenchItem/create"

    def after_migrate(self) -> None:
        # Its AppConfig.ready() creates the topics of DJANGO_WEBHOOK["MODELS"], and skips
        # that when the tables do not exist yet (before our migrate): as at a restart.
        from django_webhook.models import populate_topics_from_settings

        populate_topics_from_settings()

    def setup(self, urls: list[str]) -> None:
        from django_webhook import signals
        from django_webhook.models import Webhook, WebhookSecret, WebhookTopic
        from django_webhook.util import cache

        Webhook.objects.all().delete()
        topic = WebhookTopic.objects.get(name=self.topic)
        for url in urls:
            webhook = Webhook.objects.create(url=url, active=True)
            webhook.topics.add(topic)
            WebhookSecret.objects.create(webhook=webhook, token=SECRET)
        # Its endpoint ids are cached in process for a minute: start afresh, as a restart
        # would (the signal receiver looks the function up in its module at every event).
        signals._query_webhooks_cached = cache()(signals._query_webhooks)


class DjangoWebhookSubscriber:
    """django-webhook-subscriber: ``WebhookSubscriber`` + ``WebhookSubscription``."""

    event = "created"

    def after_migrate(self) -> None:
        pass

    def setup(self, urls: list[str]) -> None:
        from django.contrib.contenttypes.models import ContentType
        from django_webhook_subscriber.delivery import clear_webhook_cache
        from django_webhook_subscriber.models import WebhookSubscriber, WebhookSubscription
        from peer_app.models import BenchItem

        WebhookSubscriber.objects.all().delete()
        content_type = ContentType.objects.get_for_model(BenchItem)
        for i, url in enumerate(urls):
            subscriber = WebhookSubscriber.objects.create(
                name=f"bench {i}", content_type=content_type, target_url=url, secret=SECRET
            )
            WebhookSubscription.objects.create(subscriber=subscriber, event_name=self.event)
        clear_webhook_cache()  # deleting subscribers leaves their cached subscriptions


def make_peer(name: str) -> Peer:
    return DjangoWebhook() if name == "django-webhook" else DjangoWebhookSubscriber()


def fire(events: int) -> None:
    """What a user of either peer does: create the rows, one by one, in autocommit; each
    ``post_save`` fires the webhooks."""
    from peer_app.models import BenchItem

    create = BenchItem.objects.create
    for i in range(events):
        create(name=f"item {i}")


# -- the driver --------------------------------------------------------------------------------
class Driver:
    def __init__(self, peer: Peer, receiver: Receiver, worker: Worker, redis: Any) -> None:
        self.peer = peer
        self.receiver = receiver
        self.worker = worker
        self.redis = redis
        self.endpoints = -1

    def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        cmd = command.get("cmd")
        if cmd == "setup":
            self.setup(int(command["endpoints"]))
            return {"ok": True}
        if cmd == "run":
            return self.run(
                int(command["events"]),
                int(command["endpoints"]),
                float(command.get("timeout", 120)),
            )
        raise ValueError(f"unknown command {cmd!r}")

    def setup(self, endpoints: int) -> None:
        if endpoints < 1:
            raise ValueError(f"endpoints: expected >= 1, got {endpoints}")
        self.peer.setup([self.receiver.url(i) for i in range(endpoints)])
        self.endpoints = endpoints
        # Warm-up, not timed: the worker up (the first time), every pool process through a
        # delivery, the caller's caches and broker connection filled.
        events = max(2, -(-2 * self.worker.concurrency // endpoints))
        self.receiver.reset()
        fire(events)
        self.wait(events * endpoints, WARMUP_TIMEOUT)
        self.receiver.reset()

    def run(self, events: int, endpoints: int, timeout: float) -> dict[str, Any]:
        if endpoints != self.endpoints:
            self.setup(endpoints)
        target = events * endpoints
        self.receiver.reset()
        cpu0 = self.cpu_readings()
        t0 = time.monotonic()
        fire(events)
        fire_seconds = time.monotonic() - t0
        try:
            last = self.wait(target, timeout)
        except Stalled as exc:
            return {"ok": False, "error": str(exc), "received": exc.received}
        cpu1 = self.cpu_readings()
        seconds = last - t0
        return {
            "ok": True,
            "deliveries": target,
            "seconds": seconds,
            "rate": target / seconds,
            "fire_seconds": fire_seconds,
            "cpu": {k: cpu1[k] - cpu0[k] for k in cpu0},
        }

    def wait(self, target: int, timeout: float) -> float:
        """Poll the receiver until it got ``target`` POSTs; the monotonic time of the last."""
        deadline = time.monotonic() + timeout
        while True:
            posts, _, last, _ = self.receiver.stats()
            if posts >= target:
                if posts > target:
                    raise Stalled(f"the receiver got {posts} POSTs, expected {target}", posts)
                return last
            if self.worker.proc is None or self.worker.proc.poll() is not None:
                raise Stalled(f"the worker exited: {posts}/{target} POSTs; {self.stuck()}", posts)
            if time.monotonic() > deadline:
                raise Stalled(
                    f"timeout: {posts}/{target} POSTs after {timeout:g} s; {self.stuck()}", posts
                )
            time.sleep(POLL)

    def stuck(self) -> str:
        """What a stalled run leaves behind: the queue, the unacknowledged messages, the
        end of the worker's log."""
        try:
            queue = f"queued {self.redis.llen(QUEUE)}, unacked {self.redis.hlen('unacked')}"
        except Exception as exc:
            queue = f"broker: {exc!r}"
        return f"{queue}; worker log:\n{self.worker.log_tail(30)}"

    def cpu_readings(self) -> dict[str, float]:
        info = self.redis.info("cpu")
        return {
            "caller": time.process_time(),
            "worker": self.worker.cpu(),
            "receiver": self.receiver.stats()[3],
            "redis": float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        }


def serve(driver: Driver, commands: IO[str], answers: IO[str]) -> bool:
    """Answer commands until ``quit`` (True) or the end of ``commands`` (False)."""
    for line in commands:
        if not line.strip():
            continue
        try:
            command = json.loads(line)
            if not isinstance(command, dict):
                raise ValueError("expected a JSON object")
            if command.get("cmd") == "quit":
                return True
            answer = driver.handle(command)
        except (Stop, KeyboardInterrupt):
            raise
        except Exception as exc:
            log(f"command {line.strip()!r} failed: {exc!r}")
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    return False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Once: a second signal must not interrupt the clean-up.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stop(signal.Signals(signum).name)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", choices=PEERS, required=True)
    parser.add_argument(
        "--database-url",
        required=True,
        help="postgres://user@host:port/name: a scratch database is created next to it",
    )
    parser.add_argument(
        "--broker",
        required=True,
        help="redis://host:port/N: this driver's own Redis database (flushed at start and end)",
    )
    parser.add_argument(
        "--receiver", required=True, help="the receiver's base URL, http://127.0.0.1:PORT"
    )
    parser.add_argument("--settings", choices=("defaults", "tuned"), default="defaults")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--tmpdir", required=True, help="a folder for this driver's files (worker log)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Answers go to the real stdout; anything else written to fd 1 (a library's print)
    # goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    workdir = Path(args.tmpdir) / f"peer-{args.peer}-{args.settings}-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)  # Celery's Django fix-up puts the cwd on sys.path
    database = ScratchDatabase(parse_database_url(args.database_url))
    config = {
        "peer": args.peer,
        "database": database.settings,
        "broker": args.broker,
        "tuned": args.settings == "tuned",
    }
    os.environ[CONFIG_ENV] = json.dumps(config)
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS_MODULE
    env = {**os.environ, "PYTHONPATH": str(HERE)}

    import redis

    broker = redis.Redis.from_url(args.broker)
    worker = Worker(args.concurrency, env, workdir)
    code = 0
    quit_asked = False
    try:
        broker.flushdb()
        database.create()
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", interactive=False, verbosity=0)
        peer = make_peer(args.peer)
        peer.after_migrate()
        worker.start()
        log(f"{args.peer} ({args.settings}) ready: database {database.name}, {args.broker}")
        driver = Driver(peer, Receiver(args.receiver), worker, broker)
        quit_asked = serve(driver, sys.stdin, answers)
        log("quit" if quit_asked else "end of stdin")
    except Stop as exc:
        log(f"stopping on {exc}")
    except Exception as exc:
        log(f"failed: {exc!r}")
        code = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        worker.stop()
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        try:
            database.drop()
        except Exception as exc:
            log(f"could not drop {database.name}: {exc!r}")
            code = code or 1
        with contextlib.suppress(Exception):
            broker.flushdb()
    if quit_asked:  # answered once the worker is stopped and the database dropped
        with contextlib.suppress(Exception):
            answers.write(json.dumps({"ok": code == 0}) + "\n")
            answers.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
