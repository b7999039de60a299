"""The HTTP server the tests' peers run on (receivers, providers, proxies).

A peer's client that hangs up mid-request — a worker the test killed, a timeout the test
provoked, a probe that only connects — is part of what these tests do, not an error:
it prints nothing. Any other error in a handler still prints its traceback.
"""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any

__all__ = ["PeerServer"]


class PeerServer(ThreadingHTTPServer):
    daemon_threads = True
    # A batch opens many connections at once, as to a production receiver (whose listen
    # backlog is in the hundreds); Python's default of 5 drops connection attempts.
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # reset, broken pipe, aborted: the client went away
        super().handle_error(request, client_address)
