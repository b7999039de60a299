"""Chaos run of webhook delivery; prints a JSON summary as the last line of stdout.

A real ``celery worker`` (prefork, two processes) consumes DeliverWebhookJob from Redis
and posts to a flaky receiver running in this process (some answers 500, some too slow
for the read timeout). The whole worker, parent and children, is SIGKILLed mid-run and
started again, and between those kills one pool process alone is SIGKILLed (the parent
sees a lost worker and must re-queue its job). Once the queue and Redis' unacknowledged set are empty and every delivery
has a success or a final row, the summary says what happened:

* ``lost``: deliveries with neither a success row nor a final row (must be none);
* ``max_attempt_number`` / ``over_attempt_limit``: attempt numbers per delivery;
* ``duplicate_rows`` / ``duplicate_2xx``: repeats caused by the kills (at-least-once);
* ``unlogged_hits``: receiver hits minus log rows (an attempt cut off between the POST
  and its row), at most kills x concurrency + child kills;
* ``bad_signatures``: hits whose v1 or v2 signature did not verify (requests cut short
  by a kill are counted apart, as ``truncated_requests``).

    python tests/webhooks/chaos_harness.py [--events 60] [--endpoints 4] [--kills 2]
                                           [--child-kills 1]

Uses tests/webhooks/worker_settings.py (a SQLite file database in a temporary directory,
or ``--database-url postgres://...``, where it creates and drops a scratch database) and
Redis database 13, flushed before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tests.peer_server import PeerServer
from tests.services import redis_url

REPO = Path(__file__).resolve().parents[2]
SETTINGS = "tests.webhooks.worker_settings"
QUEUE = "appframework-webhooks-chaos"
EVENT = "chaos.tick"
FANOUT_EVENT = "chaos.fanout"
DEAD_EVENT = "chaos.dead"
DEAD_PATH = "/dead"
#: Seconds between killing a pool process and the next fault (see the kill loop).
CHILD_KILL_SETTLE = 1.0


def say(message: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- flaky receiver ---------------------------------------------------------------------------
class FlakyReceiver:
    """Answers 500 with probability ``fail``, stalls past the client's read timeout with
    probability ``stall``, else 200 (always 500 on ``DEAD_PATH``); records (path, X-Webhook-Id, signatures ok, status)."""

    def __init__(self, fail: float, stall: float, stall_seconds: float, seed: int) -> None:
        self.fail, self.stall, self.stall_seconds = fail, stall, stall_seconds
        self.random = random.Random(seed)
        self.secrets: dict[str, str] = {}
        self.hits: list[dict[str, Any]] = []
        self.truncated = 0
        self.lock = threading.Lock()
        self.server = PeerServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self) -> int:
        with self.lock:
            return len(self.hits)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        from appframework_webhooks.signing import verify_signature, verify_webhook

        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if len(body) < length:
                    # The sender died between its headers and the end of its body (a
                    # kill): an incomplete request, never processed, not a delivery.
                    with receiver.lock:
                        receiver.truncated += 1
                    self.close_connection = True
                    return
                secret = receiver.secrets.get(self.path)
                v1 = secret is not None and verify_signature(
                    secret, body, self.headers.get("X-Webhook-Signature")
                )
                v2 = secret is not None and verify_webhook(secret, self.headers, body)
                with receiver.lock:
                    roll = receiver.random.random()
                    status: int | str = (
                        500
                        if self.path == DEAD_PATH
                        else "stalled"
                        if roll < receiver.stall
                        else 500
                        if roll < receiver.stall + receiver.fail
                        else 200
                    )
                    # Recorded on arrival: an attempt whose worker dies later still counts.
                    receiver.hits.append(
                        {
                            "path": self.path,
                            "id": self.headers.get("X-Webhook-Id"),
                            "sig_ok": bool(v1 and v2),
                            "status": status,
                        }
                    )
                if status == "stalled":
                    time.sleep(receiver.stall_seconds)
                    status = 200  # too late: the client has given up
                payload = b"ok" if status == 200 else b"failing on purpose"
                try:
                    self.send_response(int(status))
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

        return Handler


# -- worker -----------------------------------------------------------------------------------
class Worker:
    """``celery worker`` subprocesses in their own session (process group), one at a time."""

    def __init__(self, pool: str, concurrency: int, env: dict[str, str], log: Path) -> None:
        self.pool, self.concurrency, self.env, self.log = pool, concurrency, env, log
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "testproject.celery:app",
            "worker",
            "-P",
            self.pool,
            "-c",
            str(self.concurrency),
            "-Q",
            QUEUE,
            "-n",
            f"chaos{self.starts}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "WARNING",
        ]
        with self.log.open("ab") as log:
            log.write(f"\n==== worker start {self.starts} ====\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                command,
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self) -> None:
        """SIGKILL to the whole process group: the parent and its pool children."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def kill_child(self) -> int | None:
        """SIGKILL to one pool process (the first child found); its pid, or None."""
        assert self.process is not None
        parent = self.process.pid
        for entry in sorted(Path("/proc").iterdir(), key=lambda p: p.name):
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    return int(entry.name)
        return None

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
            except ProcessLookupError:
                pass
        # Pool children left behind by a parent that died first.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.returncode


# -- scratch PostgreSQL database --------------------------------------------------------------
def create_postgres_database(url: str) -> tuple[str, str]:
    """A new empty database on the server of ``url``: (its URL, its name)."""
    import psycopg

    name = f"webhooks_chaos_{os.getpid()}"
    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}")), name


def drop_postgres_database(url: str, name: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- the run ----------------------------------------------------------------------------------
def queue_depth(client: Any) -> tuple[int, int]:
    """(messages waiting in the queue, priority lists included; unacknowledged messages)."""
    waiting = 0
    for key in client.scan_iter(match=f"{QUEUE}*"):
        if client.type(key) == b"list":
            waiting += client.llen(key)
    return waiting, client.hlen("unacked")


def terminal_ids(delivery_ids: set[str]) -> set[str]:
    from django.db.models import Q

    from appframework_webhooks.models import WebhookDelivery

    done = (
        WebhookDelivery.objects.filter(Q(success=True) | Q(final=True))
        .values_list("delivery_id", flat=True)
        .distinct()
    )
    return set(done) & delivery_ids


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="webhooks-chaos-"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["WEBHOOKS_CHAOS_DIR"] = str(workdir)
    os.environ["WEBHOOKS_CHAOS_BROKER_URL"] = args.broker
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    os.environ.pop("WEBHOOKS_CHAOS_DATABASE_URL", None)
    os.environ["WEBHOOKS_CHAOS_EARLY_ACK"] = "1" if args.early_ack else "0"
    scratch: tuple[str, str] | None = None
    if args.database_url:
        scratch = create_postgres_database(args.database_url)
        os.environ["WEBHOOKS_CHAOS_DATABASE_URL"] = scratch[0]
    sys.path.insert(0, str(REPO))

    import django
    import redis

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, transaction

    from appframework_webhooks.manager import WebhookManager
    from appframework_webhooks.models import WebhookDelivery, WebhookEndpoint
    from testproject.celery import app as celery_app

    client = redis.Redis.from_url(args.broker, socket_connect_timeout=2)
    client.ping()  # fails the run at once when Redis is down
    client.flushdb()
    worker: Worker | None = None
    try:
        call_command("migrate", verbosity=0, interactive=False)
        celery_app.set_current()
        assert not celery_app.conf.task_always_eager
        read_timeout = float(settings.APPFRAMEWORK["WEBHOOKS"]["READ_TIMEOUT"])
        receiver = FlakyReceiver(args.fail, args.stall, read_timeout + 0.5, args.seed)

        def endpoint(path: str, event: str, active: bool = True) -> None:
            secret = f"secret-{path}"
            receiver.secrets[path] = secret
            WebhookEndpoint.objects.create(
                url=receiver.base_url + path, event=event, secret=secret, active=active
            )

        for i in range(args.endpoints):
            endpoint(f"/tick/{i}", EVENT)
        endpoint("/disabled", EVENT, active=False)
        for i in range(args.fanout_endpoints):
            endpoint(f"/fanout/{i}", FANOUT_EVENT)
        endpoint(DEAD_PATH, DEAD_EVENT)

        manager = WebhookManager()
        delivery_ids: list[str] = []
        with transaction.atomic():  # every job is published when this commits
            for n in range(args.events):
                delivery_ids += manager.fire_sync(EVENT, {"n": n})
            for n in range(args.fanout_events):
                delivery_ids += manager.fire_sync(FANOUT_EVENT, {"n": n})
            dead_ids = [
                i for n in range(args.dead_events) for i in manager.fire_sync(DEAD_EVENT, {"n": n})
            ]
            delivery_ids += dead_ids
        rolled_back: list[str] = []
        try:
            with transaction.atomic():
                for n in range(3):
                    rolled_back += manager.fire_sync(EVENT, {"rolled_back": n})
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        ids = set(delivery_ids)
        assert len(ids) == len(delivery_ids)
        connection.close()
        plan: list[str] = []
        for k in range(max(args.kills, args.child_kills)):
            plan += ["group"] * (k < args.kills) + ["child"] * (k < args.child_kills)
        say(f"{len(ids)} deliveries queued; kills planned: {plan}")

        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
            ),
            "PYTHONUNBUFFERED": "1",
        }
        worker = Worker(args.pool, args.concurrency, env, workdir / "worker.log")
        worker.start()

        # Kill when the receiver has seen given shares of the expected first attempts.
        thresholds = [
            int(len(ids) * (k + 1) * args.kill_span / (len(plan) + 1)) for k in range(len(plan))
        ]
        step = kills = child_kills = 0
        deadline = started + args.deadline
        drained_at: float | None = None
        while time.monotonic() < deadline:
            if worker.process is not None and worker.process.poll() is not None:
                say(f"worker exited by itself ({worker.process.returncode}); restarting")
                worker.start()
            if step < len(plan) and receiver.count() >= thresholds[step]:
                if plan[step] == "group":
                    worker.kill()
                    kills += 1
                    say(f"SIGKILL to the worker's group at {receiver.count()} hits")
                    time.sleep(args.restart_delay)
                    worker.start()
                else:
                    child = worker.kill_child()
                    child_kills += child is not None
                    say(f"SIGKILL to pool process {child} at {receiver.count()} hits")
                    # One fault at a time: the parent requeues the lost child's job
                    # (reject_on_worker_lost) just after the kill, and a SIGKILL of the
                    # whole worker inside that moment can drop the message for good
                    # (Celery's limit, not the delivery code's; docs/caveats.md).
                    time.sleep(CHILD_KILL_SETTLE)
                step += 1
            if step == len(plan):
                waiting, unacked = queue_depth(client)
                if waiting == 0 and unacked == 0 and terminal_ids(ids) == ids:
                    connection.close()
                    time.sleep(args.grace)  # nothing may come back after a quiet moment
                    if queue_depth(client) == (0, 0):
                        drained_at = time.monotonic()
                        break
                connection.close()
            time.sleep(0.2)
        worker_exit = worker.stop()
        say("drained" if drained_at else "deadline reached before draining")

        rows = list(
            WebhookDelivery.objects.values_list("delivery_id", "attempt", "success", "final")
        )
        with receiver.lock:
            hits = list(receiver.hits)
            truncated = receiver.truncated
        receiver.server.shutdown()
        receiver.server.server_close()
        waiting, unacked = queue_depth(client)
        return summarize(
            ids=ids,
            rolled_back=set(rolled_back),
            dead=set(dead_ids),
            rows=rows,
            hits=hits,
            truncated=truncated,
            kills=kills,
            child_kills=child_kills,
            args=args,
            drained=drained_at is not None,
            waiting=waiting,
            unacked=unacked,
            elapsed=(drained_at or time.monotonic()) - started,
            worker_starts=worker.starts,
            worker_exit=worker_exit,
            database=connection.vendor,
            log=workdir / "worker.log",
        )
    finally:
        if worker is not None:
            worker.stop()
        client.flushdb()
        client.close()
        from django.db import connections

        connections.close_all()
        if scratch is not None:
            drop_postgres_database(args.database_url, scratch[1])


def summarize(
    *,
    ids: set[str],
    rolled_back: set[str],
    dead: set[str],
    rows: list[tuple[str, int, bool, bool]],
    hits: list[dict[str, Any]],
    truncated: int,
    kills: int,
    child_kills: int,
    args: argparse.Namespace,
    drained: bool,
    waiting: int,
    unacked: int,
    elapsed: float,
    worker_starts: int,
    worker_exit: int | None,
    database: str,
    log: Path,
) -> dict[str, Any]:
    by_id: dict[str, list[tuple[int, bool, bool]]] = defaultdict(list)
    for delivery_id, attempt, success, final in rows:
        by_id[delivery_id].append((attempt, success, final))
    hits_by_id: dict[str, list[Any]] = defaultdict(list)
    for hit in hits:
        hits_by_id[hit["id"]].append(hit["status"])

    delivered = {i for i in ids if any(s for _, s, _ in by_id[i])}
    failed_final = {i for i in ids - delivered if any(f for _, _, f in by_id[i])}
    lost = sorted(ids - delivered - failed_final)
    distinct_attempts = {i: {a for a, _, _ in by_id[i]} for i in ids}
    attempt_numbers = [a for i in ids for a, _, _ in by_id[i]]
    duplicate_rows = sum(len(by_id[i]) - len(distinct_attempts[i]) for i in ids)
    # A final row before the last attempt (nothing here is unsafe, so none is expected).
    early_final = sorted(i for i in ids for a, s, f in by_id[i] if f and a < args.max_attempts)
    # A success row the receiver never answered 200 to, for that delivery.
    success_without_2xx = sorted(i for i in delivered if 200 not in hits_by_id[i])
    tick_hits = [h for h in hits if h["id"] in ids]
    summary = {
        "database": database,
        "pool": args.pool,
        "early_ack": args.early_ack,
        "concurrency": args.concurrency,
        "deliveries": len(ids),
        "delivered": len(delivered),
        "failed_final": len(failed_final),
        "lost": len(lost),
        "lost_ids": lost[:20],
        "kills": kills,
        "child_kills": child_kills,
        "worker_lost_errors": log.read_text(errors="replace").count(
            "Task handler raised error: WorkerLostError"
        )
        if log.exists()
        else 0,
        "worker_starts": worker_starts,
        "receiver_hits": len(tick_hits),
        "attempt_rows": sum(len(by_id[i]) for i in ids),
        "unlogged_hits": len(tick_hits) - sum(len(by_id[i]) for i in ids),
        "max_attempt_number": max(attempt_numbers, default=0),
        "max_distinct_attempts": max((len(a) for a in distinct_attempts.values()), default=0),
        "over_attempt_limit": sum(
            1
            for i in ids
            if len(distinct_attempts[i]) > args.max_attempts
            or any(a > args.max_attempts for a in distinct_attempts[i])
        ),
        "duplicate_rows": duplicate_rows,
        "ids_with_duplicate_rows": sum(1 for i in ids if len(by_id[i]) > len(distinct_attempts[i])),
        "duplicate_success_rows": sum(1 for i in ids if sum(1 for _, s, _ in by_id[i] if s) > 1),
        "duplicate_2xx": sum(1 for i in ids if hits_by_id[i].count(200) > 1),
        "early_final": len(early_final),
        "dead_deliveries": len(dead),
        "dead_failed_final_at_last_attempt": sum(
            1
            for i in dead
            if i in failed_final and any(f and a == args.max_attempts for a, _, f in by_id[i])
        ),
        "success_without_2xx": len(success_without_2xx),
        "bad_signatures": sum(1 for h in hits if not h["sig_ok"]),
        "truncated_requests": truncated,
        "disabled_endpoint_hits": sum(1 for h in hits if h["path"] == "/disabled"),
        "rolled_back_hits": sum(1 for h in hits if h["id"] in rolled_back),
        "rolled_back_rows": sum(len(by_id[i]) for i in rolled_back),
        "unknown_hits": sum(1 for h in hits if h["id"] not in ids and h["id"] not in rolled_back),
        "hit_statuses": dict(Counter(str(h["status"]) for h in tick_hits)),
        "drained": drained,
        "queue_left": waiting,
        "unacked_left": unacked,
        "elapsed_s": round(elapsed, 1),
        "worker_exit": worker_exit,
        "worker_log": str(log),
    }
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=60, help="events fired to every endpoint")
    parser.add_argument("--endpoints", type=int, default=4)
    parser.add_argument(
        "--fanout-endpoints", type=int, default=21, help="above the fan-out threshold"
    )
    parser.add_argument("--fanout-events", type=int, default=1)
    parser.add_argument(
        "--dead-events", type=int, default=5, help="events to an endpoint that always fails"
    )
    parser.add_argument("--kills", type=int, default=2, help="SIGKILLs of the whole worker")
    parser.add_argument(
        "--child-kills", type=int, default=1, help="SIGKILLs of a single pool process"
    )
    parser.add_argument(
        "--kill-span",
        type=float,
        default=0.8,
        help="kills spread over this share of the first hits",
    )
    parser.add_argument("--restart-delay", type=float, default=0.3)
    parser.add_argument("--fail", type=float, default=0.20, help="share of 500 answers")
    parser.add_argument(
        "--stall", type=float, default=0.05, help="share of answers past the read timeout"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pool", default="prefork")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--max-attempts", type=int, default=5)
    parser.add_argument("--grace", type=float, default=1.0)
    parser.add_argument("--deadline", type=float, default=90.0, help="seconds for the whole run")
    parser.add_argument("--broker", default=redis_url(13))
    parser.add_argument("--dir", help="working directory (SQLite database, worker log)")
    parser.add_argument(
        "--database-url", help="postgres://... server on which to create a scratch database"
    )
    parser.add_argument(
        "--early-ack",
        action="store_true",
        help="control run: acknowledge jobs on receipt (expect lost deliveries)",
    )
    args = parser.parse_args(argv)
    # A SIGTERM (the caller's timeout) still stops the worker and flushes Redis.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    summary = run(args)
    print(json.dumps(summary, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
