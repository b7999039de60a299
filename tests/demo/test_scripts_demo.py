"""The README's first command, ``./scripts/demo``, run as written: it installs what it
needs, migrates and seeds a database, starts the local OpenID/SAML provider and serves
the tour; Ctrl-C stops both servers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from testproject.prepare import demo_environment, free_port

# scripts/demo always runs on its own SQLite file: the PostgreSQL run would repeat it.
pytestmark = pytest.mark.database_independent

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 240


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Demo:
    def __init__(self, process: subprocess.Popen[str], base: str, idp_port: int, log: Path):
        self.process, self.base, self.idp_port, self.log = process, base, idp_port, log


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    tmp = tmp_path_factory.mktemp("scripts-demo")
    port, idp_port = free_port(), free_port()
    log = tmp / "demo.log"
    # The demo's own settings, database and broker: nothing of the test run's.
    env = demo_environment(SQLITE_PATH=str(tmp / "demo.sqlite3"), LOCAL_IDP_PORT=str(idp_port))
    with log.open("w") as out:
        process = subprocess.Popen(
            ["./scripts/demo", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: Ctrl-C goes to all of it
            # As from a terminal: a runner started in the background may ignore SIGINT,
            # and children inherit that.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while not listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"./scripts/demo did not serve {base}:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)
    running = Demo(process, base, idp_port, log)
    try:
        yield running
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def test_scripts_demo_serves_the_tour_with_the_seeded_accounts(demo: Demo) -> None:
    page = requests.get(demo.base + "/", timeout=10)
    assert page.status_code == 200
    for email in ("reader@example.com", "editor@example.com", "admin@example.com"):
        assert email in page.text
    assert 'href="/auth/local/redirect"' in page.text  # the local provider is configured
    # seed_demo printed the accounts to the terminal too.
    assert "reader@example.com / reader-password" in demo.log.read_text()


def test_scripts_demo_signs_in_a_seeded_account(demo: Demo) -> None:
    browser = requests.Session()
    browser.get(demo.base + "/login", timeout=10)
    response = browser.post(
        demo.base + "/login",
        data={
            "email": "editor@example.com",
            "password": "editor-password",
            "_token": browser.cookies["csrf_token"],
        },
        headers={"Origin": demo.base},
        allow_redirects=False,
        timeout=30,
    )
    assert response.status_code == 302, response.text[:500]
    assert "editor@example.com" in browser.get(demo.base + "/", timeout=10).text


def test_scripts_demo_starts_the_local_openid_provider(demo: Demo) -> None:
    response = requests.get(demo.base + "/auth/local/redirect", allow_redirects=False, timeout=10)
    assert response.status_code == 302
    assert response.headers["Location"].startswith(f"http://127.0.0.1:{demo.idp_port}/o/authorize")


def test_ctrl_c_stops_the_demo_and_the_local_provider(demo: Demo) -> None:
    os.killpg(demo.process.pid, signal.SIGINT)
    demo.process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while listening(demo.idp_port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not listening(demo.idp_port)
