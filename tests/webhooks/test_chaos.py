"""Delivery survives SIGKILLed workers, in two runs: first attempts one job per delivery,
and first attempts in batch jobs. chaos_harness.py fires about 270-300 deliveries at a
flaky receiver (20 % answers 500, 5 % too slow for the read timeout, one endpoint always
failing), has a real prefork Celery worker (two processes) on Redis deliver them, kills
the whole worker twice mid-run and restarts it, kills one pool process alone in between,
and reports what the receiver saw and what the delivery log holds. Delivery is at least once: nothing may be lost, repeats
caused by the kills are counted, never more than five attempts per delivery.

The run uses its own database (a SQLite file; with ``DATABASE_URL=postgres://...``, a
scratch database created and dropped on that server) and Redis database 13. It is
marked ``postgresql``: ./scripts/test runs it once, in the PostgreSQL run (about 30 s each),
rather than once per database and Django line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.core.test_ratelimit import require_redis
from tests.services import redis_url

HARNESS = Path(__file__).with_name("chaos_harness.py")
REPO = HARNESS.parents[2]
BROKER_URL = redis_url(13)

pytestmark = pytest.mark.postgresql
MAX_ATTEMPTS = 5
KILLS = 2
CHILD_KILLS = 1
CONCURRENCY = 2
#: The two runs: first attempts one job per delivery (4 endpoints per event), and first
#: attempts in batches (12 endpoints per event: at or above BATCH_MIN_ENDPOINTS, so
#: every kill lands in the middle of batches).
MODES = {
    "single": {"events": 60, "endpoints": 4, "fanout_endpoints": 21, "per_job": 1},
    "batched": {"events": 25, "endpoints": 12, "fanout_endpoints": 0, "per_job": 12},
}


def in_flight_at_kills(chaos: dict[str, Any]) -> int:
    """Deliveries in flight when something was killed: each may reach the receiver
    unlogged and run again. A killed batch job re-sends its whole batch."""
    per_job = MODES[chaos["mode"]]["per_job"]
    return (KILLS * CONCURRENCY + CHILD_KILLS) * per_job


def _tail(path: str, lines: int = 40) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no worker log)"


@pytest.fixture(scope="module", params=list(MODES))
def chaos(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    mode = MODES[request.param]
    require_redis()  # a printed skip on a laptop without Redis, a failure on CI
    client = redis.Redis.from_url(BROKER_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(
            f"The chaos run needs the Redis broker at {BROKER_URL} (redis-server on "
            f"127.0.0.1:6379); it is not reachable: {exc!r}"
        )
    finally:
        client.close()
    workdir = tmp_path_factory.mktemp("webhooks-chaos")
    command = [
        sys.executable,
        str(HARNESS),
        "--dir",
        str(workdir),
        "--broker",
        BROKER_URL,
        "--kills",
        str(KILLS),
        "--child-kills",
        str(CHILD_KILLS),
        "--concurrency",
        str(CONCURRENCY),
        "--max-attempts",
        str(MAX_ATTEMPTS),
        "--deadline",
        "100",
        "--events",
        str(mode["events"]),
        "--endpoints",
        str(mode["endpoints"]),
        "--fanout-endpoints",
        str(mode["fanout_endpoints"]),
    ]
    database_url = os.environ.get("DATABASE_URL", "")
    if database_url.startswith(("postgres://", "postgresql://")):
        command += ["--database-url", database_url]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)  # the harness stops its worker and cleans up
        stdout, stderr = process.communicate(timeout=30)
        pytest.fail(
            f"The chaos run took more than 120 s.\n{stderr[-3000:]}\n"
            f"{_tail(str(workdir / 'worker.log'))}"
        )
    if process.returncode != 0 or not stdout.strip():
        pytest.fail(
            f"The chaos harness failed ({process.returncode}).\n{stderr[-4000:]}\n"
            f"{_tail(str(workdir / 'worker.log'))}"
        )
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    summary["mode"] = request.param
    print("webhook chaos summary:", json.dumps(summary, sort_keys=True))
    return summary


def test_the_run_drains_after_the_worker_is_killed_mid_run_and_restarted(
    chaos: dict[str, Any],
) -> None:
    assert chaos["kills"] == KILLS, chaos
    assert chaos["worker_starts"] == KILLS + 1, chaos
    assert chaos["child_kills"] == CHILD_KILLS, chaos
    # A pool process killed while idle loses no job, so the parent may log no
    # WorkerLostError for it: worker_lost_errors is reported, not asserted.
    assert chaos["drained"], (chaos, _tail(chaos["worker_log"]))
    assert (chaos["queue_left"], chaos["unacked_left"]) == (0, 0), chaos
    assert chaos["deliveries"] >= 200, chaos
    assert chaos["elapsed_s"] < 90, chaos


def test_no_delivery_is_lost_when_workers_are_killed(chaos: dict[str, Any]) -> None:
    """Every delivery ends with a success row or a final row."""
    assert chaos["lost"] == 0, chaos
    assert chaos["delivered"] + chaos["failed_final"] == chaos["deliveries"], chaos


def test_no_delivery_is_attempted_more_than_five_times(chaos: dict[str, Any]) -> None:
    assert chaos["max_attempt_number"] <= MAX_ATTEMPTS, chaos
    assert chaos["max_distinct_attempts"] <= MAX_ATTEMPTS, chaos
    assert chaos["over_attempt_limit"] == 0, chaos


def test_an_always_failing_endpoint_ends_each_delivery_with_a_final_fifth_attempt(
    chaos: dict[str, Any],
) -> None:
    assert chaos["dead_deliveries"] > 0, chaos
    assert chaos["dead_failed_final_at_last_attempt"] == chaos["dead_deliveries"], chaos
    assert chaos["early_final"] == 0, chaos  # no final row before the fifth attempt


def test_every_attempt_has_one_log_row_but_those_cut_off_by_a_kill(chaos: dict[str, Any]) -> None:
    """Receiver hits minus log rows: only attempts in flight at a kill (one per killed
    pool process) reached the receiver without their row being written."""
    assert 0 <= chaos["unlogged_hits"] <= in_flight_at_kills(chaos), chaos
    assert chaos["success_without_2xx"] == 0, chaos


def test_repeats_caused_by_the_kills_stay_bounded(chaos: dict[str, Any]) -> None:
    """At least once, not exactly once: an attempt cut off after its POST (or after its
    row) runs again. Each job in flight at a kill can repeat at most its remaining
    attempts."""
    assert chaos["duplicate_rows"] <= in_flight_at_kills(chaos) * MAX_ATTEMPTS, chaos
    assert chaos["duplicate_2xx"] <= in_flight_at_kills(chaos), chaos
    assert chaos["duplicate_success_rows"] <= in_flight_at_kills(chaos), chaos


def test_every_request_carries_valid_v1_and_v2_signatures(chaos: dict[str, Any]) -> None:
    assert chaos["receiver_hits"] > 0, chaos
    assert chaos["bad_signatures"] == 0, chaos
    assert chaos["unknown_hits"] == 0, chaos
    # A request cut short by a kill (headers sent, body not) is not a delivery.
    assert chaos["truncated_requests"] <= in_flight_at_kills(chaos), chaos


def test_rolled_back_fires_and_disabled_endpoints_never_reach_the_receiver(
    chaos: dict[str, Any],
) -> None:
    assert chaos["rolled_back_hits"] == 0, chaos
    assert chaos["rolled_back_rows"] == 0, chaos
    assert chaos["disabled_endpoint_hits"] == 0, chaos
