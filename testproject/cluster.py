"""The demo on several processes sharing one PostgreSQL and one Redis (``scripts/cluster``).

    python -m testproject.cluster [--servers 3] [--workers 2] [--port 8101]
                                  [--database-url postgres://postgres@127.0.0.1:5432/test]

Starts, each in a process group of its own:

* a ``redis-server`` of its own on a free port (append-only file on, so a restart keeps
  queued deliveries; ``maxmemory-policy noeviction``): caches on databases 1 and 2, the
  Celery broker on 0. Its own, so that restarting it disturbs no other user of Redis;
* a scratch PostgreSQL database next to ``--database-url`` (``cluster_<pid>_<hex>``),
  owned by a login role of the same name that is neither a superuser nor ``BYPASSRLS``:
  the processes connect as that role, so the row-level-security policy on the demo's
  posts holds for them (``TENANCY["ROW_LEVEL_SECURITY"]``). Migrated and seeded by that
  role, dropped with it at the end;
* ``--servers`` gunicorn app servers (``gthread``, one process, four threads each) on
  ports ``--port``, ``--port + 1``, ...;
* ``--workers`` Celery workers (prefork, two processes each);
* the local OpenID Connect provider and SAML IdP (``testproject.local_idp``), which the
  app servers sign in at (``alice`` / ``password``). Sign-in callbacks name the first
  server's address, as a deployment names its load balancer's.

Settings are the documented deployment's (docs/deploy.md), not a test's: DEBUG off, one
random ``APP_SECRET_KEY`` shared by every process, every shared store on Redis
(``REDIS_CACHE_URL``), Celery on Redis (``CELERY_BROKER_URL``), and the client's address
read from ``X-Forwarded-For`` as behind a load balancer (``CLIENT_IP_HEADER``). Prints the
servers' URLs and runs until Ctrl-C. ``Cluster`` is what ``tests/cluster`` drive.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    # Linux: SIGTERM when the cluster's owner dies, however it dies.
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


@dataclass
class Process:
    """One component: started in its own process group, its output in ``log``."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL to the whole group (a crash: nothing finishes its work)."""
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(10)

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM (a graceful stop), then SIGKILL after ``grace`` seconds."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace)
        self.kill()

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class Cluster:
    servers: int = 3
    workers: int = 2
    port: int = 0
    database_url: str = DEFAULT_DATABASE_URL
    workdir: Path | None = None
    #: Seconds before Redis hands the job of a worker that died to another; None: the
    #: deployment's (an hour). Short for fault runs, with retry waits below half of it.
    visibility_timeout: int | None = None
    redis_port: int = 0
    database: str = ""
    env: dict[str, str] = field(default_factory=dict)
    redis: Process | None = None
    idp: Process | None = None
    idp_url: str = ""
    app_servers: list[Process] = field(default_factory=list)
    celery_workers: list[Process] = field(default_factory=list)
    _own_workdir: bool = False

    # -- what clients use ------------------------------------------------------------------
    ports: list[int] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{self.server_port(i)}" for i in range(self.servers)]

    def server_port(self, index: int) -> int:
        return self.ports[index]

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}"

    # -- start and stop ----------------------------------------------------------------------
    def start(self) -> Cluster:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="appframework-cluster-"))
            self._own_workdir = True
        # A given --port: consecutive ports from it. Otherwise each its own free port (a
        # port next to a free one may be some connection's ephemeral port).
        self.ports = (
            [self.port + i for i in range(self.servers)]
            if self.port
            else [free_port() for _ in range(self.servers)]
        )
        self.port = self.ports[0]
        self.redis_port = self.redis_port or free_port()
        self.database = f"cluster_{os.getpid()}_{secrets.token_hex(3)}"
        self.env = self._environment()
        try:
            self.redis = Process(
                "redis",
                [
                    "redis-server",
                    "--port",
                    str(self.redis_port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    str(self.workdir),
                    "--appendonly",
                    "yes",
                    "--save",
                    "",
                    "--maxmemory-policy",
                    "noeviction",
                ],
                self.env,
                self.workdir / "redis.log",
            )
            self.redis.start()
            self._wait_redis()
            self._start_idp()
            self._create_database()
            for i in range(self.servers):
                self.app_servers.append(self._app_server(i))
                self.app_servers[-1].start()
            for i in range(self.workers):
                self.celery_workers.append(self._worker(i))
                self.celery_workers[-1].start()
            for i in range(self.servers):
                self.wait_server(i)
            for i in range(self.workers):
                self.wait_worker(i)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for process in [*self.app_servers, *self.celery_workers]:
            process.stop()
        if self.idp is not None:
            self.idp.stop(grace=5)
        if self.redis is not None:
            self.redis.stop()
        if self.database:
            with contextlib.suppress(Exception):
                self._admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            with contextlib.suppress(Exception):
                self._admin_sql(f'DROP ROLE IF EXISTS "{self.database}"')
        if self._own_workdir and self.workdir is not None and not os.environ.get("CLUSTER_KEEP"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- faults ------------------------------------------------------------------------------
    def kill_server(self, index: int) -> None:
        self.app_servers[index].kill()

    def restart_server(self, index: int) -> None:
        self.app_servers[index].stop()
        self.app_servers[index].start()
        self.wait_server(index)

    def kill_worker(self, index: int) -> None:
        self.celery_workers[index].kill()

    def start_worker(self, index: int) -> None:
        self.celery_workers[index].start()
        self.wait_worker(index)

    def stop_redis(self) -> None:
        assert self.redis is not None
        self.redis.stop()  # SIGTERM: Redis writes its append-only file, then exits

    def start_redis(self) -> None:
        assert self.redis is not None
        self.redis.start()
        self._wait_redis()

    # -- helpers -------------------------------------------------------------------------------
    def manage(self, *args: str, timeout: float = 300) -> str:
        """``manage.py`` with the cluster's settings; its output (raises on failure)."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def wait_server(self, index: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        process = self.app_servers[index]
        while time.monotonic() < deadline:
            if not process.alive:
                raise RuntimeError(f"{process.name} exited:\n{process.tail()}")
            with (
                contextlib.suppress(OSError),
                urlopen(f"{self.urls[index]}/login", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"{process.name} did not answer:\n{process.tail()}")

    def wait_worker(self, index: int, timeout: float = 60) -> None:
        process = self.celery_workers[index]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not process.alive:
                raise RuntimeError(f"{process.name} exited:\n{process.tail()}")
            if " ready." in process.tail(200):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{process.name} is not ready:\n{process.tail()}")

    def _environment(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DJANGO_", "CELERY_", "DATABASE_URL", "REDIS_"))
        }
        env.update(
            DJANGO_SETTINGS_MODULE="testproject.settings",
            DATABASE_URL=self.app_database_url,
            REDIS_CACHE_URL=self.redis_url,
            CELERY_BROKER_URL=f"{self.redis_url}/0",
            APP_SECRET_KEY=secrets.token_urlsafe(48),
            DEBUG="0",
            # The tests read confirmation links on /mailbox (off without DEBUG otherwise).
            DEMO_MAILBOX_PAGE="1",
            CLIENT_IP_HEADER="X-Forwarded-For",
            DEMO_BASE_URL=f"http://127.0.0.1:{self.port}",
            PYTHONPATH=str(ROOT),
        )
        if self.visibility_timeout is not None:
            env["CELERY_VISIBILITY_TIMEOUT"] = str(self.visibility_timeout)
            env["WEBHOOKS_BACKOFF_CAP"] = str(max(1, self.visibility_timeout // 4))
        return env

    @property
    def app_database_url(self) -> str:
        """The scratch database, as the application's role (the role has the database's
        name and logs in without a password: trust or peer authentication, as here)."""
        parts = urlsplit(self.database_url)
        host = f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}"
        return urlunsplit(
            parts._replace(netloc=f"{self.database}@{host}", path=f"/{self.database}")
        )

    def sql(self, *statements: str, as_admin: bool = False) -> list[Any]:
        """Rows of the last of ``statements``, run in turn on one connection to the scratch
        database, as the application's role or as the administrator of
        ``--database-url``."""
        user, password = self._admin_login() if as_admin else (self.database, "")
        return self._run_sql(statements, user=user, password=password, dbname=self.database)

    def _admin_login(self) -> tuple[str, str]:
        parts = urlsplit(self.database_url)
        return parts.username or "postgres", parts.password or ""

    def _admin_sql(self, sql: str) -> None:
        user, password = self._admin_login()
        dbname = urlsplit(self.database_url).path.lstrip("/") or "postgres"
        self._run_sql([sql], user=user, password=password, dbname=dbname)

    def _run_sql(
        self, statements: Sequence[str], *, user: str, password: str, dbname: str
    ) -> list[Any]:
        import psycopg

        parts = urlsplit(self.database_url)
        with psycopg.connect(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            user=user,
            password=password,
            dbname=dbname,
            autocommit=True,
            connect_timeout=5,
        ) as connection:
            rows: list[Any] = []
            for sql in statements:
                cursor = connection.execute(sql)  # type: ignore[arg-type]
                rows = cursor.fetchall() if cursor.description else []
            return rows

    def _create_database(self) -> None:
        # The application's role owns the database, and so the tables its migrate makes;
        # FORCE in the policy holds the owner to it.
        self._admin_sql(
            f'CREATE ROLE "{self.database}" LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE'
        )
        self._admin_sql(f'CREATE DATABASE "{self.database}" OWNER "{self.database}"')
        self.manage("migrate", "--no-input", "-v", "0")
        self.manage("seed_demo")

    def _start_idp(self, timeout: float = 60) -> None:
        assert self.workdir is not None
        data = self.workdir / "local-idp"
        data.mkdir(exist_ok=True)
        base = self.env["DEMO_BASE_URL"]
        env = {k: v for k, v in self.env.items() if not k.startswith(("DJANGO_", "LOCAL_IDP"))}
        env["PYTHONUNBUFFERED"] = "1"
        self.idp = Process(
            "local idp",
            [
                sys.executable,
                "-m",
                "testproject.local_idp",
                "--port",
                "0",
                "--data-dir",
                str(data),
                "--redirect-uri",
                f"{base}/auth/local/callback",
                "--saml-sp",
                f"{base}/saml/local/metadata={base}/saml/local/acs",
            ],
            env,
            self.workdir / "local-idp.log",
        )
        self.idp.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready = [
                line
                for line in self.idp.tail(200).splitlines()
                if line.startswith("local-idp ready ")
            ]
            if ready:
                self.idp_url = ready[-1].split()[-1]
                break
            if not self.idp.alive:
                raise RuntimeError(f"the local IdP exited:\n{self.idp.tail()}")
            time.sleep(0.1)
        else:
            raise RuntimeError(f"the local IdP did not start:\n{self.idp.tail()}")
        self.env.update(
            OAUTH_LOCAL_ISSUER=f"{self.idp_url}/o",
            SAML_IDP_ENTITY_ID=f"{self.idp_url}/saml/metadata",
            SAML_IDP_SSO_URL=f"{self.idp_url}/saml/sso",
            SAML_IDP_CERT=str(data / "saml-idp.crt.pem"),
        )

    def _wait_redis(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.redis_port), timeout=1) as sock,
            ):
                sock.sendall(b"PING\r\n")
                if sock.recv(64).startswith(b"+PONG"):
                    return
            time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def _app_server(self, index: int) -> Process:
        assert self.workdir is not None
        return Process(
            f"app server {index + 1}",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "testproject.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.server_port(index)}",
                "--workers",
                "1",
                "--worker-class",
                "gthread",
                "--threads",
                "4",
                "--graceful-timeout",
                "5",
            ],
            self.env,
            self.workdir / f"server-{index + 1}.log",
        )

    def _worker(self, index: int) -> Process:
        assert self.workdir is not None
        return Process(
            f"celery worker {index + 1}",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "testproject",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "2",
                "--hostname",
                f"cluster-{index + 1}-{os.getpid()}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            self.env,
            self.workdir / f"worker-{index + 1}.log",
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8101, help="the first app server's port")
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    )
    args = parser.parse_args(argv)
    cluster = Cluster(
        servers=args.servers, workers=args.workers, port=args.port, database_url=args.database_url
    )

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    with cluster:
        print(f"redis {cluster.redis_url}; database {cluster.database}; logs {cluster.workdir}")
        print(f"local IdP {cluster.idp_url} (alice / password)")
        for url in cluster.urls:
            print(f"app server {url}")
        print("Ctrl-C stops everything.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
