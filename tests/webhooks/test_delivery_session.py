"""The HTTP client deliveries share, one set of pools per worker thread: it keeps
connections alive (throughput) but nothing else a browser would keep. A cookie one
receiver sets is never sent to any receiver, itself included (receivers of different
tenants can share a host), and a redirect is not followed, so its ``Set-Cookie`` goes
nowhere and its answer is read like any other (capped, within ``DEADLINE``).

The receivers are real listeners on 127.0.0.1, reached through ``deliver_once`` on the
test's thread, the thread-local pools a worker thread would use."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from appframework_webhooks.delivery import AttemptResult, deliver_once
from tests.peer_server import PeerServer

from .conftest import webhook_settings
from .receiver import Receiver, running_receiver

EVENT = "order.paid"
BODY = b'{"event":"order.paid","data":{"id":1}}'


@pytest.fixture
def receiver_a(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture
def receiver_b() -> Iterator[Receiver]:
    yield from running_receiver()


def _deliver(url: str, delivery_id: str = "d-1") -> AttemptResult:
    return deliver_once(url, EVENT, BODY, "s3cret", delivery_id)


def _sets_a_cookie(n: int) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Set-Cookie": "tenant_session=tenant-a-secret; Path=/"}, b"ok"


def test_a_cookie_set_by_one_receiver_reaches_no_other_receiver(
    receiver_a: Receiver, receiver_b: Receiver, loopback_allowed: None
) -> None:
    """Both listen on 127.0.0.1 (ports do not separate cookies): one shared host."""
    receiver_a.respond = _sets_a_cookie

    assert _deliver(receiver_a.url, "d-a").success
    assert _deliver(receiver_b.url, "d-b").success

    (hit,) = receiver_b.wait_for(1)
    assert "Cookie" not in hit.headers


def test_a_cookie_set_by_a_receiver_is_not_sent_back_to_it(
    receiver_a: Receiver, loopback_allowed: None
) -> None:
    receiver_a.respond = _sets_a_cookie

    assert _deliver(receiver_a.url, "d-1").success
    assert _deliver(receiver_a.url, "d-2").success

    hits = receiver_a.wait_for(2)
    assert len(hits) == 2
    assert all("Cookie" not in hit.headers for hit in hits)


def test_connections_are_still_kept_alive_between_deliveries(
    receiver_a: Receiver, loopback_allowed: None
) -> None:
    receiver_a.respond = _sets_a_cookie

    assert _deliver(receiver_a.url, "d-1").success
    assert _deliver(receiver_a.url, "d-2").success

    first, second = receiver_a.wait_for(2)
    assert first.peer == second.peer  # one connection, reused


def test_a_redirect_carrying_a_cookie_is_not_followed_and_its_cookie_goes_nowhere(
    receiver_a: Receiver, receiver_b: Receiver, loopback_allowed: None
) -> None:
    """The 3xx is the attempt's answer (a retried failure): nothing is sent to its
    Location, and its cookie comes back with no later delivery."""
    receiver_a.respond = lambda n: (
        (
            302,
            {"Location": receiver_b.url, "Set-Cookie": "tenant_session=tenant-a-secret; Path=/"},
            b"",
        )
        if n == 0
        else (200, {}, b"ok")
    )

    redirected = _deliver(receiver_a.url, "d-1")
    assert not redirected.success and redirected.status_code == 302
    assert redirected.error is not None and receiver_b.url in redirected.error
    assert _deliver(receiver_a.url, "d-2").success

    assert receiver_b.hits == []
    assert all("Cookie" not in hit.headers for hit in receiver_a.wait_for(2))


@pytest.fixture
def dripping_redirect() -> Iterator[str]:
    """Answers 302 with a large announced body, then drips it 2 KB every 0.1 s (never a
    READ_TIMEOUT's silence; whole chunks, as the deadline is checked between chunks)
    until the test ends."""
    done = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", str(10**6))
            self.end_headers()
            try:
                while not done.wait(0.1):
                    self.wfile.write(b"x" * 2048)
                    self.wfile.flush()
            except OSError:
                pass

    server = PeerServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        done.set()
        server.shutdown()
        server.server_close()


def test_a_redirect_answer_is_read_no_longer_than_the_deadline(
    dripping_redirect: str, loopback_allowed: None
) -> None:
    with webhook_settings(DEADLINE=1.0):
        started = time.monotonic()
        result = _deliver(dripping_redirect)
        elapsed = time.monotonic() - started

    assert elapsed < 3.0
    assert result.status_code == 302 and not result.success
    assert result.error is not None and result.error.startswith("HTTP 302")
