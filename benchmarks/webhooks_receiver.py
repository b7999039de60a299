"""The webhook receiver of ``benchmarks/webhooks.py``, in a process of its own so that it
never shares a GIL with what it measures: asyncio, raw HTTP/1.1, keep-alive, ``200`` with
an empty body to every POST, well under 0.1 ms of CPU per request.

Prints its port (127.0.0.1) as its first line. ``GET /count`` answers ``<POSTs>
<time.monotonic() of the last one>`` (on Linux one clock for every process), ``GET
/reset`` sets the count to 0, ``GET /last`` gives the last POST's headers and body as JSON
(to check its signature). Exits when its stdin closes: the benchmark is gone.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time


def answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


class Receiver(asyncio.Protocol):
    posts = 0
    last = 0.0
    last_request = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        out = []
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].lower()
            at = head.find(b"\r\ncontent-length:")
            length = int(head[at + 17 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                break
            request = self.buffer[: end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            if head.startswith(b"post "):
                cls = type(self)
                cls.posts += 1
                cls.last = time.monotonic()
                cls.last_request = request
                out.append(answer(b""))
            else:
                out.append(self.get(head.split(b" ", 2)[1]))
        if out:
            self.transport.write(b"".join(out))

    def get(self, path: bytes) -> bytes:
        cls = type(self)
        if path == b"/reset":
            cls.posts = 0
        elif path == b"/last":
            head, _, body = cls.last_request.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")[1:]
            headers = dict(line.split(": ", 1) for line in lines)
            return answer(json.dumps({"headers": headers, "body": body.decode()}).encode())
        return answer(f"{cls.posts} {cls.last!r}".encode())


async def serve() -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Receiver, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await loop.run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(serve())
