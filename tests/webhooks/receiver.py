"""A webhook receiver listening on 127.0.0.1 for the tests: records every request and
answers what it is told (a status per call, a delay, a redirect)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.peer_server import PeerServer


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: The client's "host:port": the same for requests sent on one kept-alive connection.
    peer: str = ""
    #: time.monotonic() when the request had been read.
    arrived: float = 0.0


@dataclass
class Receiver:
    """``url`` to post to; ``hits`` received; ``respond(hit_index) -> (status, headers,
    body)`` decides each answer (default 200); ``delay`` seconds before answering."""

    server: PeerServer
    hits: list[Hit] = field(default_factory=list)
    respond: Callable[[int], tuple[int, dict[str, str], bytes]] = lambda n: (200, {}, b"ok")
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Hit]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if len(self.hits) >= count:
                    return list(self.hits)
            time.sleep(0.02)
        with self.lock:
            return list(self.hits)


def start_receiver() -> Receiver:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with receiver.lock:
                peer = f"{self.client_address[0]}:{self.client_address[1]}"
                receiver.hits.append(
                    Hit(
                        self.command,
                        self.path,
                        dict(self.headers.items()),
                        body,
                        peer,
                        time.monotonic(),
                    )
                )
                index = len(receiver.hits) - 1
            if receiver.delay:
                time.sleep(receiver.delay)
            status, headers, payload = receiver.respond(index)
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass

        do_POST = do_GET = do_PUT = _handle

    server = PeerServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(server=server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


def running_receiver() -> Iterator[Receiver]:
    receiver = start_receiver()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
