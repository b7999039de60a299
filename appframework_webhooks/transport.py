"""The HTTP client of deliveries: urllib3 connection pools, one set per thread, keyed by
the address the private-address guard approved.

urllib3 is what ``requests`` runs on; called directly it costs a third of the CPU per
POST, and what a delivery must not have is simply absent: no cookie jar, no redirect
handling, no proxies or ``.netrc`` from the environment. A pool connects to the checked
address and keeps the name for ``Host``, SNI and the certificate check, so a second DNS
answer never decides where the bytes go (DNS rebinding).
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import certifi
import urllib3
from urllib3 import exceptions as u3
from urllib3.util import Timeout, parse_url

from .ssrf import check_host, normalise_host, url_parts

__all__ = ["Answer", "SendError", "close_pooled_connections", "post"]

#: Pools (one kept connection each) per thread; the least recently used is closed.
POOLS_PER_THREAD = 32


@dataclass(frozen=True)
class Answer:
    status: int
    text: str
    location: str


class SendError(Exception):
    """An attempt that got no answer. ``kind`` is the name stored before the message in
    the delivery log (``ConnectTimeout``, ``ReadTimeout``, ``SSLError``,
    ``ConnectionError``, ``UnsafeWebhookUrlError``): the same names whatever client
    library sends, so logs and alerts keyed on them keep working."""

    def __init__(self, kind: str, message: str, *, retryable: bool = True) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.retryable = retryable


_local = threading.local()


def _ca_bundle() -> str:
    # The same trust store as before deliveries left requests: certifi's, never the
    # environment's (REQUESTS_CA_BUNDLE / SSL_CERT_FILE are not read).
    return certifi.where()


def _manager() -> urllib3.PoolManager:
    manager: urllib3.PoolManager | None = getattr(_local, "manager", None)
    if manager is None:
        manager = _local.manager = urllib3.PoolManager(
            num_pools=POOLS_PER_THREAD,
            maxsize=1,
            block=False,
            retries=False,
            cert_reqs="CERT_REQUIRED",
            ca_certs=_ca_bundle(),
        )
    return manager


def close_pooled_connections() -> None:
    """Close the connections this thread keeps alive to receivers (a thread or a test
    that is done sending); the next delivery opens new ones."""
    manager: urllib3.PoolManager | None = getattr(_local, "manager", None)
    if manager is not None:
        manager.clear()


def _host_header(host: str, port: int, scheme: str) -> str:
    """The ``Host`` value for ``host``: brackets around an IPv6 literal, the port unless
    it is the scheme's default."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"


def _classify(exc: BaseException) -> SendError:
    if isinstance(exc, u3.NewConnectionError | u3.NameResolutionError):
        return SendError("ConnectionError", str(exc))
    if isinstance(exc, u3.ConnectTimeoutError):
        return SendError("ConnectTimeout", str(exc))
    if isinstance(exc, u3.ReadTimeoutError | socket.timeout | TimeoutError):
        return SendError("ReadTimeout", str(exc))
    if isinstance(exc, u3.SSLError):
        return SendError("SSLError", str(exc))
    if isinstance(exc, u3.LocationParseError):
        return SendError("UnsafeWebhookUrlError", f"not a valid URL ({exc})", retryable=False)
    return SendError("ConnectionError", f"{type(exc).__name__}: {exc}")


def _read_capped(
    response: urllib3.BaseHTTPResponse, limit: int, deadline: float
) -> tuple[str, bool]:
    """At most ``limit`` bytes of the answer, and no reading past ``deadline``: a
    receiver dripping a huge body byte by byte cannot hold the worker. The second value
    says whether the answer was read to its end (its connection can then be reused)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit and time.monotonic() <= deadline:
        # read1: what has arrived (up to 1 KiB), not a wait for a full kilobyte.
        chunk = response.read1(min(1024, limit - size))
        if not chunk:
            return b"".join(chunks).decode("utf-8", "replace"), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[:limit].decode("utf-8", "replace"), False


_FAILURES = (u3.HTTPError, OSError, http.client.HTTPException)


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    connect_timeout: float,
    read_timeout: float,
    limit: int,
    deadline: float,
    tenant_id: Any = None,
) -> Answer:
    """POST ``body`` to the address ``url``'s host resolves to once checked (as an
    endpoint of ``tenant_id``: None, the operator's); never follow a redirect. Raises
    :class:`SendError`, or ``UnsafeWebhookUrlError`` from the guard."""
    scheme, host, port = url_parts(url)  # refused before any lookup or connection
    address = check_host(host, port, tenant_id=tenant_id)
    name = normalise_host(host)
    pool_kwargs = {"server_hostname": name, "assert_hostname": name} if scheme == "https" else {}
    headers = {**headers, "Host": _host_header(name, port, scheme)}
    try:
        target = parse_url(url).request_uri  # percent-encodes what may not go on the wire
        pool = _manager().connection_from_host(address, port, scheme, pool_kwargs=pool_kwargs)
        response = pool.urlopen(
            "POST",
            target,
            body=body,
            headers=headers,
            redirect=False,
            retries=False,
            assert_same_host=False,
            preload_content=False,
            timeout=Timeout(connect=connect_timeout, read=read_timeout),
        )
    except _FAILURES as exc:
        raise _classify(exc) from exc
    try:
        text, at_end = _read_capped(response, limit, deadline)
    except _FAILURES as exc:
        text, at_end = f"(answer cut: {_classify(exc).kind})", False
    if not at_end:
        # Not handed to the next delivery with an answer half unread: closed instead.
        response.close()
    response.release_conn()
    return Answer(response.status, text, response.headers.get("Location", ""))
