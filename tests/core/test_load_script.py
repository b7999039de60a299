"""benchmarks/load.py end to end, briefly: it serves the demo with gunicorn, signs in over
HTTP and drives both scenarios with wrk, and its report counts no failed response.

A smoke test of the script, not a measurement: 2 s per scenario on 2 connections. The
numbers themselves are never asserted beyond "some requests were served".
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail_on_ci

# The load script serves the demo on its own SQLite file: the PostgreSQL run would repeat it.
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "load.py"


def test_load_script_reports_both_scenarios_without_failed_responses() -> None:
    if shutil.which("wrk") is None:
        skip_or_fail_on_ci("wrk is not installed (apt-get install wrk)")
    if importlib.util.find_spec("gunicorn") is None:
        skip_or_fail_on_ci('gunicorn is not installed (pip install -e ".[bench]")')

    # The script picks its own SQLite file; a DATABASE_URL of the PostgreSQL test run
    # must not send it to the shared database.
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--duration",
            "2",
            "--connections",
            "2",
            "--threads",
            "1",
            "--json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr}"
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["benchmark"] == "load"
    scenarios = {s["name"]: s for s in result["scenarios"]}
    assert set(scenarios) == {"graphql", "page"}
    assert scenarios["graphql"]["request"] == "POST /graphql"
    assert scenarios["page"]["request"] == "GET /account/mfa"
    for name, scenario in scenarios.items():
        assert scenario["non_2xx"] == 0, (name, scenario["first_bad_response"])
        assert scenario["unexpected_body"] == 0, (name, scenario["first_bad_response"])
        assert sum(scenario["socket_errors"].values()) == 0, (name, scenario["socket_errors"])
        assert scenario["requests"] > 0
        assert scenario["throughput"] > 0
        assert scenario["latency_ms"]["p50"] <= scenario["latency_ms"]["p99"]
    assert all(r["ok"] for r in result["ratios"])
    # The human-readable report went to stderr, with wrk's own output.
    assert "Latency Distribution" in done.stderr
