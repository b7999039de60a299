"""Deliveries over HTTPS: the connection goes to the address the guard checked, while the
name stays the one in the URL for SNI, ``Host`` and the certificate check; a certificate
for another name, or one no trusted authority signed, is a ``tls_error`` (retried), and
the environment's trust-store variables are not read."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from appframework_webhooks import transport
from appframework_webhooks.delivery import deliver_once, error_code
from tests.peer_server import PeerServer

BODY = b'{"event":"order.paid","data":{"id":1}}'
_real_getaddrinfo = socket.getaddrinfo


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class TlsReceiver:
    port: int
    cert: Path
    server_names: list[str | None] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


def _serve(tmp: Path, name: str) -> Iterator[TlsReceiver]:
    cert, key = _certificate(tmp, name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    receiver: TlsReceiver

    def sni(sock: Any, server_name: str | None, ctx: Any) -> None:
        receiver.server_names.append(server_name)

    context.sni_callback = sni

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.hosts.append(self.headers.get("Host", ""))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    class Server(PeerServer):
        def get_request(self) -> tuple[Any, Any]:
            sock, address = super().get_request()
            return context.wrap_socket(sock, server_side=True), address

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a refused handshake is what some tests want

    server = Server(("127.0.0.1", 0), Handler)
    receiver = TlsReceiver(port=int(server.server_address[1]), cert=cert)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def hooks_test(tmp_path: Path) -> Iterator[TlsReceiver]:
    """An HTTPS receiver on 127.0.0.1 whose certificate names ``hooks.test``."""
    yield from _serve(tmp_path, "hooks.test")


@pytest.fixture
def resolves_to_loopback(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``hooks.test`` resolves to 127.0.0.1 (the lookups are counted)."""
    lookups: list[str] = []

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if str(host) == "hooks.test":
            lookups.append(str(host))
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]
        return _real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return lookups


@pytest.fixture
def fresh_pools(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This thread's pools made again (they hold the trust store they were made with)."""
    monkeypatch.delattr(transport._local, "manager", raising=False)
    yield
    if hasattr(transport._local, "manager"):
        transport._local.manager.clear()
        del transport._local.manager


def _trust(monkeypatch: pytest.MonkeyPatch, cert: Path) -> None:
    monkeypatch.setattr(transport, "_ca_bundle", lambda: str(cert))


def test_https_goes_to_the_checked_address_with_the_urls_name_for_sni_and_host(
    hooks_test: TlsReceiver,
    resolves_to_loopback: list[str],
    fresh_pools: None,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _trust(monkeypatch, hooks_test.cert)

    outcome = deliver_once(f"https://hooks.test:{hooks_test.port}/in", "e", BODY, "s", "d-1")

    assert outcome.success, outcome
    assert hooks_test.server_names == ["hooks.test"]
    assert hooks_test.hosts == [f"hooks.test:{hooks_test.port}"]
    assert resolves_to_loopback == ["hooks.test"]  # one lookup: the checked one


def test_a_kept_connection_is_reused_only_for_the_same_name_and_checked_address(
    hooks_test: TlsReceiver,
    resolves_to_loopback: list[str],
    fresh_pools: None,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _trust(monkeypatch, hooks_test.cert)
    url = f"https://hooks.test:{hooks_test.port}/in"

    assert deliver_once(url, "e", BODY, "s", "d-1").success
    assert deliver_once(url, "e", BODY, "s", "d-2").success

    assert hooks_test.server_names == ["hooks.test"]  # one handshake for both
    assert len(resolves_to_loopback) == 2  # but every attempt checks the name again


def test_a_certificate_for_another_name_is_a_retried_tls_error(
    tmp_path: Path,
    resolves_to_loopback: list[str],
    fresh_pools: None,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = _serve(tmp_path, "other.test")
    receiver = next(other)
    try:
        _trust(monkeypatch, receiver.cert)
        outcome = deliver_once(f"https://hooks.test:{receiver.port}/in", "e", BODY, "s", "d-1")
    finally:
        next(other, None)
    assert not outcome.success
    assert outcome.retryable
    assert error_code(outcome.error, outcome.status_code) == "tls_error"


def test_an_untrusted_certificate_is_refused_and_ssl_cert_file_is_not_read(
    hooks_test: TlsReceiver,
    resolves_to_loopback: list[str],
    fresh_pools: None,
    loopback_allowed: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.setenv(variable, str(hooks_test.cert))

    outcome = deliver_once(f"https://hooks.test:{hooks_test.port}/in", "e", BODY, "s", "d-1")

    assert not outcome.success
    assert error_code(outcome.error, outcome.status_code) == "tls_error"
    assert hooks_test.hosts == []  # nothing was sent
