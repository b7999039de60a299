"""Load with faults on the demo's cluster (``testproject.cluster``: gunicorn app servers,
two Celery workers, a Redis of its own, PostgreSQL), over real HTTP.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        .venv/bin/python benchmarks/cluster.py [--duration 60] [--clients 16]
        [--quick | --smoke] [--json]

One cluster of three app servers (its scratch database and role named ``bench_cluster_*``)
and three runs of ``--duration`` seconds of the same mixed traffic from ``--clients``
threads, each request sent round-robin to the app servers in use, the clients signed in
once before the first:

1. one app server (the other two idle), no fault;
2. three app servers, no fault (their ratio to run 1 is the scaling);
3. three app servers, Redis stopped at a third of the run (for 5 s, or a third of a
   shorter run) and one app server SIGKILLed and started again at two thirds.

The mix (per client loop): ``GET /posts`` with a bearer token and ``X-Tenant`` alternating
between the two tenants of the user (every row checked against the tenant asked), a
GraphQL query with the session cookie and CSRF header, ``GET /api/me`` with the token,
a page behind the session, and every 20 s per client a sign-in (a fresh session: the
password form) and a sign-up (which fires ``user.registered`` to the demo's receiver
through Celery), both hashing a password. Reported per run: requests/s, p50/p99 latency, answers
that were not 2xx/3xx by cause (status and problem code, or the connection error), rows of
a foreign tenant (must be 0); for the fault run, the errors inside the Redis outage, while
the killed server was away and at any other time, and every sign-up's webhook delivered
(0 lost, asserted). The scaling of three servers over one is information, not a target:
on a 2-core machine one app server process, the load generator, PostgreSQL and Redis
already keep both cores busy.
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import benchlib

from testproject.cluster import Cluster

GRAPHQL = '{"query": "query { posts(limit: 20) { id title author { id name } } me { email } }"}'
EDITOR = ("editor@example.com", "editor-password")
SIGNUP_EVERY = 20.0  # seconds between one client's sign-ups


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    error_times: list[tuple[float, str]] = field(default_factory=list)
    foreign_rows: int = 0
    rows: int = 0
    signups: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _session(address: str) -> Any:
    import requests

    session = requests.Session()
    session.trust_env = False
    session.headers["X-Forwarded-For"] = address
    return session


def _sign_in(base: str, address: str) -> tuple[Any, str, str]:
    """A session signed in as the editor, its CSRF cookie, and a bearer token."""
    session = _session(address)
    page = session.get(f"{base}/login", timeout=30)
    token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', page.text)
    assert token, page.text[:200]
    answer = session.post(
        f"{base}/login",
        data={"_token": token.group(1), "email": EDITOR[0], "password": EDITOR[1]},
        headers={"Origin": base, "Referer": f"{base}/login"},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == 302, answer.text[:200]
    page = session.get(f"{base}/login", timeout=30)
    form_token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', page.text)
    assert form_token
    bearer = session.post(
        f"{base}/token",
        data={"_token": form_token.group(1)},
        headers={"Origin": base, "Referer": f"{base}/account/token"},
        timeout=30,
    ).json()["token"]
    return session, session.cookies.get("csrf_token", ""), bearer


def _cause(response: Any) -> str:
    try:
        code = response.json().get("code", "")
    except ValueError:
        code = ""
    return f"{response.status_code} {code}".strip()


def _client(
    number: int,
    bases: list[str],
    signed_in: tuple[Any, str, str],
    stop: float,
    tally: Tally,
    started: float,
    run: str,
) -> None:
    import requests

    address = f"198.18.{number}.1"
    servers = itertools.cycle(bases[number % len(bases) :] + bases[: number % len(bases)])
    session, csrf, bearer = signed_in
    api = _session(address)
    api.headers["Authorization"] = f"Bearer {bearer}"
    n = 0
    next_signup = time.monotonic() + (number + 1) * SIGNUP_EVERY / 8
    next_login = next_signup + SIGNUP_EVERY / 2
    while time.monotonic() < stop:
        n += 1
        base = next(servers)
        tenant = 1 + n % 2
        kind = ("posts", "graphql", "me", "page")[n % 4]
        if time.monotonic() >= next_signup:
            # Rare, as in life: a sign-up or a sign-in hashes a password (PBKDF2, ~0.5 s).
            kind, next_signup = "signup", time.monotonic() + SIGNUP_EVERY
        elif time.monotonic() >= next_login:
            kind, next_login = "login", time.monotonic() + SIGNUP_EVERY
        t0 = time.monotonic()
        try:
            if kind == "posts":
                response = api.get(f"{base}/posts", headers={"X-Tenant": str(tenant)}, timeout=30)
            elif kind == "graphql":
                response = session.post(
                    f"{base}/graphql",
                    data=GRAPHQL,
                    headers={
                        "Content-Type": "application/json",
                        "X-CSRF-Token": csrf,
                        "Origin": base,
                    },
                    timeout=30,
                )
            elif kind == "me":
                response = api.get(f"{base}/api/me", timeout=30)
            elif kind == "page":
                response = session.get(f"{base}/account/mfa", timeout=30)
            elif kind == "login":
                visitor = _session(address)
                form = visitor.get(f"{base}/login", timeout=30)
                token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', form.text)
                response = visitor.post(
                    f"{base}/login",
                    data={
                        "_token": token.group(1) if token else "",
                        "email": EDITOR[0],
                        "password": EDITOR[1],
                    },
                    headers={"Origin": base, "Referer": f"{base}/login"},
                    allow_redirects=False,
                    timeout=30,
                )
            else:
                email = f"load-{run}-{number}-{n}@example.com"
                visitor = _session(f"198.19.{number}.{n % 250}")
                form = visitor.get(f"{base}/login", timeout=30)  # its CSRF cookie and token
                token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', form.text)
                response = visitor.post(
                    f"{base}/signup",
                    data={
                        "_token": token.group(1) if token else "",
                        "email": email,
                        "password": "a-load-test-passphrase",
                    },
                    headers={"Origin": base, "Referer": f"{base}/signup"},
                    allow_redirects=False,
                    timeout=30,
                )
                if response.status_code == 302:
                    with tally.lock:
                        tally.signups.append(email)
            cause = "" if response.status_code < 400 else _cause(response)
            if kind == "login" and response.status_code == 200:
                cause = "200 the form again (not signed in)"
            if kind == "posts" and response.status_code == 200:
                rows = response.json()["posts"]
                with tally.lock:
                    tally.rows += len(rows)
                    tally.foreign_rows += sum(1 for row in rows if row["tenant_id"] != tenant)
        except requests.RequestException as exc:
            cause = type(exc).__name__
        elapsed = time.monotonic() - t0
        with tally.lock:
            tally.latencies.append(elapsed)
            if cause:
                tally.errors[f"{kind}: {cause}"] += 1
                tally.error_times.append((t0 - started, cause))


class BenchCluster(Cluster):
    """The demo's cluster with its scratch database and role named ``bench_cluster_*``:
    on a PostgreSQL server shared with the test suite, a benchmark's are told apart."""

    def _environment(self) -> dict[str, str]:
        # start() has just named the database; the environment is the first to use it.
        if not self.database.startswith("bench_"):
            self.database = f"bench_{self.database}"
        return super()._environment()


def run(
    cluster: Cluster,
    servers: int,
    duration: float,
    signed_in: list[tuple[Any, str, str]],
    faults: bool,
) -> dict[str, Any]:
    tally = Tally()
    events: list[tuple[str, float]] = []
    for session, _, _ in signed_in:
        session.close()  # no keep-alive connection left from the run before
    started = time.monotonic()
    stop = started + duration
    label = f"{servers}s{'f' if faults else ''}{int(started)}"
    threads = [
        threading.Thread(
            target=_client,
            args=(i, cluster.urls[:servers], signed_in[i], stop, tally, started, label),
            daemon=True,
        )
        for i in range(len(signed_in))
    ]
    for thread in threads:
        thread.start()
    if faults:
        time.sleep(duration / 3)
        events.append(("redis stopped", time.monotonic() - started))
        cluster.stop_redis()
        time.sleep(min(5.0, duration / 3))
        cluster.start_redis()
        events.append(("redis started", time.monotonic() - started))
        time.sleep(max(0.0, started + 2 * duration / 3 - time.monotonic()))
        events.append(("app server 2 killed", time.monotonic() - started))
        cluster.kill_server(1)
        cluster.app_servers[1].start()
        cluster.wait_server(1)
        events.append(("app server 2 answering", time.monotonic() - started))
    for thread in threads:
        thread.join(duration + 120)
    elapsed = time.monotonic() - started
    latencies = sorted(tally.latencies)
    return {
        "servers": servers,
        "requests": len(latencies),
        "rate": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "errors": dict(tally.errors),
        "error_times": tally.error_times,
        "events": events,
        "foreign_rows": tally.foreign_rows,
        "rows": tally.rows,
        "signups": tally.signups,
    }


def _lost_webhooks(cluster: Any, emails: list[str], timeout: float = 120) -> set[str]:
    """The sign-ups among ``emails`` whose user.registered has no successful delivery yet
    (after waiting up to ``timeout`` seconds for the queue to drain)."""
    if not emails:
        return set()
    script = (
        "import json;"
        "from appframework_webhooks.models import WebhookDelivery as D;"
        "from testproject.blog.models import User;"
        f"emails=json.loads({json.dumps(json.dumps(emails))});"
        "done={json.loads(b)['data']['user_id'] for b in "
        "D.objects.filter(event='user.registered',success=True).values_list('request_body',flat=True)};"
        "print(json.dumps(list(User.objects.filter(email__in=emails).exclude(id__in=done)"
        ".values_list('email',flat=True))))"
    )
    deadline = time.monotonic() + timeout
    while True:
        lost = set(json.loads(cluster.manage("shell", "-c", script).strip().splitlines()[-1]))
        if not lost or time.monotonic() > deadline:
            return lost
        time.sleep(2)


def _report(result: dict[str, Any], label: str) -> None:
    print(
        f"\n== {label}: {result['requests']} requests, {result['rate']:.1f}/s, "
        f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms"
    )
    print(
        f"  tenant rows checked {result['rows']}, foreign {result['foreign_rows']}; "
        f"sign-ups {result['signups']}, webhooks lost {result['lost_webhooks']}"
    )
    for cause, count in sorted(result["errors"].items(), key=lambda item: -item[1]):
        print(f"  not 2xx/3xx: {count:5d}  {cause}")
    for name, at in result["events"]:
        print(f"  {at:6.1f} s  {name}")
    if result["events"]:
        marks = dict(result["events"])
        windows = {
            "during the Redis outage (+1.5 s)": (
                marks["redis stopped"],
                marks["redis started"] + 1.5,
            ),
            "while app server 2 was away (+1.5 s)": (
                marks["app server 2 killed"],
                marks["app server 2 answering"] + 1.5,
            ),
        }
        for name, (low, high) in windows.items():
            causes = Counter(c for at, c in result["error_times"] if low <= at <= high)
            print(f"  errors {name}: {sum(causes.values())} {dict(causes)}")
        inside = [w for w in windows.values()]
        other = Counter(
            c for at, c in result["error_times"] if not any(lo <= at <= hi for lo, hi in inside)
        )
        print(f"  errors at any other time: {sum(other.values())} {dict(other)}")


def main() -> int:
    import os

    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--duration", float, 60.0, 20.0, "seconds per run", smoke=6.0)
    parser.add_scaled("--clients", int, 16, 16, "client threads", smoke=4)
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    print(f"{benchlib.platform()}, {os.cpu_count()} CPUs; {args.clients} clients")
    with BenchCluster(servers=3, workers=2, database_url=database_url) as cluster:
        # Signed in before the clock starts: a sign-in hashes a password (~0.5 s of CPU).
        signed_in = [_sign_in(cluster.urls[0], f"198.18.{i}.1") for i in range(args.clients)]
        one = run(cluster, 1, args.duration, signed_in, False)
        three = run(cluster, 3, args.duration, signed_in, False)
        faults = run(cluster, 3, args.duration, signed_in, True)
        runs = (one, three, faults)
        lost = _lost_webhooks(cluster, [email for r in runs for email in r["signups"]])
    for result in runs:
        result["lost_webhooks"] = len(lost.intersection(result["signups"]))
        result["signups"] = len(result["signups"])
    _report(one, "1 app server, no fault")
    _report(three, "3 app servers, no fault")
    _report(faults, "3 app servers, Redis stopped, one server killed and restarted")
    scaling = three["rate"] / one["rate"]
    print(f"\n  scaling, 3 servers / 1 (no fault): {scaling:.2f}")
    for result in runs:
        summary = {
            key: result[key] for key in ("servers", "signups", "foreign_rows", "lost_webhooks")
        }
        assert result["foreign_rows"] == 0, summary
        assert result["lost_webhooks"] == 0, summary
    info = {
        "1 server /s": one["rate"],
        "3 servers /s": three["rate"],
        "1 server p99 ms": one["p99_ms"],
        "3 servers p99 ms": three["p99_ms"],
        "faults run /s": faults["rate"],
        "faults run p99 ms": faults["p99_ms"],
    }
    # Information, no target: on a 2-core machine one app server process, the load
    # generator, PostgreSQL and Redis already keep both cores busy.
    info["scaling 3 servers / 1"] = scaling
    return benchlib.finish(args, "cluster", [], info)


if __name__ == "__main__":
    sys.exit(main())
