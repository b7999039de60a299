"""The OAuth client's pooled session keeps no cookies: one identity provider's cookie
never reaches another (nor comes back to it)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from appframework.oauth import client
from tests.peer_server import PeerServer


class _Peer(BaseHTTPRequestHandler):
    seen: list[str | None] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Cookie"))
        self.send_response(200)
        self.send_header("Set-Cookie", "sid=from-a-provider; Path=/")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def peers() -> Iterator[list[str]]:
    _Peer.seen = []
    servers = [PeerServer(("127.0.0.1", 0), _Peer) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [f"http://127.0.0.1:{server.server_address[1]}/" for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_cookie_one_provider_sets_is_sent_to_no_provider(peers: list[str]) -> None:
    session = client._session()
    for url in (peers[0], peers[1], peers[0]):
        assert session.get(url, timeout=5).status_code == 200
    assert _Peer.seen == [None, None, None]
    assert len(session.cookies) == 0
