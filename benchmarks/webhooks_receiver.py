"""A fast local webhook receiver for ``benchmarks/webhooks.py``: asyncio, raw HTTP/1.1,
keep-alive, one process of its own (so it never shares a GIL with what it measures).

    .venv/bin/python benchmarks/webhooks_receiver.py

Listens on 127.0.0.1 (a free port, printed as the first line on stdout), answers every
POST with ``200 OK`` and an empty body, counts the POSTs and remembers when the last one
arrived (``time.monotonic()``: on Linux the same clock in every process, so the caller
can compare it with its own). Three GETs serve the caller, not the load:

* ``GET /count``  - ``<posts> <monotonic of the first post> <monotonic of the last post>
  <this process's CPU seconds>``
* ``GET /reset``  - sets the count to 0
* ``GET /last``   - the last POST, headers and body, as JSON (to check its signature)

It parses no more than the request line, the headers' end and Content-Length: about
20-30 us per request, far below what a ``requests`` client spends per request. It exits
when its stdin closes (the benchmark is gone, however it ended) or on SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


class Stats:
    def __init__(self) -> None:
        self.posts = 0
        self.first = 0.0
        self.last = 0.0
        self.last_request: bytes = b""


def _answer(body: bytes, content_type: bytes = b"text/plain") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: "
        + content_type
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


class Receiver(asyncio.Protocol):
    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        out: list[bytes] = []
        close = False
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = self.buffer[:end]
            length = 0
            lower = head.lower()
            at = lower.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = lower.find(b"\r\n", at + 2)
                length = int(lower[at + 17 : stop if stop >= 0 else None].strip())
            total = end + 4 + length
            if len(self.buffer) < total:
                break
            request, self.buffer = self.buffer[:total], self.buffer[total:]
            if b"\r\nconnection: close" in lower:
                close = True
            if head.startswith(b"POST "):
                stats = self.stats
                now = time.monotonic()
                if not stats.posts:
                    stats.first = now
                stats.posts += 1
                stats.last = now
                stats.last_request = request
                out.append(OK)
            else:
                out.append(self._get(head.split(b" ", 2)[1] if b" " in head else b""))
            if close:
                break
        if out and self.transport is not None:
            self.transport.write(b"".join(out))
            if close:
                self.transport.close()

    def _get(self, path: bytes) -> bytes:
        stats = self.stats
        if path == b"/count":
            cpu = time.process_time()
            return _answer(f"{stats.posts} {stats.first!r} {stats.last!r} {cpu!r}".encode())
        if path == b"/reset":
            stats.posts, stats.first, stats.last = 0, 0.0, 0.0
            return _answer(b"0")
        if path == b"/last":
            head, _, body = stats.last_request.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
            return _answer(
                json.dumps(
                    {
                        "request_line": lines[0] if lines else "",
                        "headers": {k.strip(): v.strip() for k, v in headers.items()},
                        "body": body.decode("utf-8", "replace"),
                    }
                ).encode(),
                b"application/json",
            )
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


async def serve() -> None:
    loop = asyncio.get_running_loop()
    stop = loop.create_future()

    def done() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done)
    # The parent holds our stdin: EOF means it is gone (or wants us gone).
    loop.add_reader(sys.stdin.fileno(), lambda: done() if not sys.stdin.buffer.read1(1) else None)

    stats = Stats()
    server = await loop.create_server(lambda: Receiver(stats), "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await stop


def main() -> int:
    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
