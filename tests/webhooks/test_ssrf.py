"""The private-address guard: which URLs and addresses are refused, that a refused
delivery never connects, that the connection goes to the address that was checked
(DNS rebinding), that redirects are not followed, that proxies and ``.netrc`` from the
environment are ignored, and that ALLOWED_NETWORKS never lets the metadata service through.

Only loopback addresses are ever connected to; every other range is judged by the
classifier or through a stubbed ``socket.getaddrinfo``."""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from appframework.exceptions import ValidationException
from appframework.middleware import ErrorMiddleware
from appframework_webhooks import (
    UnsafeWebhookUrlError,
    WebhookDelivery,
    WebhookEndpoint,
    ensure_safe_webhook_url,
)
from appframework_webhooks.admin import WebhookEndpointForm
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.ssrf import is_public_address
from tests.peer_server import PeerServer

from .conftest import webhook_settings
from .receiver import Receiver, running_receiver

_real_getaddrinfo = socket.getaddrinfo


class FakeDns:
    """Answers chosen names from a table (one answer list per call: the last one
    repeats), counts the lookups of each name, and leaves IP literals to the system
    resolver (they never leave the machine)."""

    def __init__(self) -> None:
        self.answers: dict[str, list[list[str]]] = {}
        self.lookups: dict[str, int] = {}

    def set(self, name: str, *answers: list[str]) -> None:
        self.answers[name.lower()] = list(answers)

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        key = str(host).lower()
        if key not in self.answers:
            return _real_getaddrinfo(host, port, *args, **kwargs)
        count = self.lookups.get(key, 0)
        self.lookups[key] = count + 1
        answers = self.answers[key]
        result = []
        for address in answers[min(count, len(answers) - 1)]:
            number = int(port or 0)
            if ipaddress.ip_address(address).version == 6:
                result.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, number, 0, 0)))
            else:
                result.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, number)))
        return result


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns()
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


def _refused(url: str) -> None:
    with pytest.raises(UnsafeWebhookUrlError) as info:
        ensure_safe_webhook_url(url)
    assert info.value.code == "unsafe_webhook_url"


# --- classifying addresses and URLs ------------------------------------------------

NON_PUBLIC_ADDRESSES = [
    # loopback
    "127.0.0.1",
    "127.255.255.254",
    "::1",
    # unspecified, "this network"
    "0.0.0.0",
    "0.1.2.3",
    "::",
    # IPv4-mapped
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    # IPv4-compatible
    "::127.0.0.1",
    "::169.254.169.254",
    # NAT64, including to a public address
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::7f00:1",
    "64:ff9b:1::a9fe:a9fe",
    "64:ff9b::808:808",
    # 6to4, Teredo, the 6to4 relay anycast
    "2002:a9fe:a9fe::1",
    "2002:7f00:1::",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "192.88.99.1",
    # CGNAT
    "100.64.0.1",
    "100.127.255.254",
    # link-local, cloud metadata
    "169.254.169.254",
    "fe80::1",
    "fe80::1%eth0",
    "fd00:ec2::254",
    # private, ULA, site-local
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "fc00::1",
    "fec0::1",
    # multicast, broadcast, reserved, benchmarking, protocol assignments, SRv6, docs
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "198.18.0.1",
    "192.0.0.1",
    "ff02::1",
    "5f00::1",
    "2001:db8::1",
    "3fff::1",
    "100::1",
]


@pytest.mark.parametrize("address", NON_PUBLIC_ADDRESSES)
def test_is_public_address_refuses_non_public_address(address: str) -> None:
    assert is_public_address(address) is False


@pytest.mark.parametrize(
    "value",
    ["localhost", "", None, "2130706433", "0x7f000001", "[::1]", "127.1", "not an address"],
)
def test_is_public_address_is_false_for_anything_not_a_canonical_address(value: Any) -> None:
    assert is_public_address(value) is False


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1111",
        "2606:4700:4700::1111",
        ipaddress.ip_address("93.184.215.14"),
    ],
)
def test_is_public_address_allows_public_address(address: Any) -> None:
    assert is_public_address(address) is True


UNSAFE_URLS = [
    # plain loopback
    "http://127.0.0.1/",
    "http://127.255.255.254/",
    # decimal, octal, hex and short IPv4 forms of loopback
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://0x7f000001/",
    "http://0x7f.0.0.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://127.000.000.001/",
    # ... and of the metadata address
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    # unspecified
    "http://0.0.0.0/",
    "http://0/",
    "http://[::]/",
    # IPv6 loopback
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    # IPv4-mapped
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:169.254.169.254]/",
    # IPv4-compatible
    "http://[::127.0.0.1]/",
    "http://[::169.254.169.254]/",
    # NAT64
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b:1::a9fe:a9fe]/",
    # 6to4, Teredo, 6to4 relay
    "http://[2002:a9fe:a9fe::1]/",
    "http://[2002:7f00:1::]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://192.88.99.1/",
    # CGNAT
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    # link-local, metadata
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    # private, ULA, site-local
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://[fc00::1]/",
    "http://[fec0::1]/",
    # multicast, broadcast, reserved, benchmarking
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://198.18.0.1/",
    "http://192.0.0.1/",
    "http://[ff02::1]/",
    "http://[5f00::1]/",
    # local names, refused by name whatever they resolve to
    "http://localhost/",
    "http://LocalHost/",
    "http://localhost./",
    "http://LOCALHOST.:8080/",
    "http://foo.localhost/",
    "http://a.b.localhost/",
    # Unicode digits that IDNA maps to 127.0.0.1
    "http://①②⑦.0.0.1/",
    # credentials and parser confusion
    "http://public.invalid@127.0.0.1/",
    "http://user:pw@127.0.0.1/",
    "http://user:pw@93.184.215.14/",
    "http://127.0.0.1#@public.invalid/",
    "http://127.0.0.1?@public.invalid/",
    "http://127.0.0.1\\@public.invalid/",
    # schemes other than http and https, and URLs without one
    "file:///etc/passwd",
    "ftp://127.0.0.1/",
    "ftp://93.184.215.14/",
    "gopher://127.0.0.1:6379/_INFO",
    "dict://127.0.0.1:11211/stat",
    "ws://127.0.0.1/",
    "wss://93.184.215.14/",
    "http+unix://%2Fvar%2Frun%2Fdocker.sock/info",
    "//127.0.0.1/",
    "//93.184.215.14/",
    "127.0.0.1:80",
    "localhost:80",
    "93.184.215.14:80",
    # not a URL at all
    "",
    "http://",
    "http:///path",
]


@pytest.mark.parametrize("url", UNSAFE_URLS)
def test_ensure_safe_webhook_url_refuses_url(url: str) -> None:
    _refused(url)


@pytest.mark.parametrize("value", [None, 42, b"http://93.184.215.14/"])
def test_ensure_safe_webhook_url_refuses_non_string(value: Any) -> None:
    _refused(value)


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("loop.test", "127.0.0.1"),
        ("127.0.0.1.nip.io", "127.0.0.1"),
        ("localtest.me", "127.0.0.1"),
        ("loop6.test", "::1"),
        ("mapped.test", "::ffff:127.0.0.1"),
        ("metadata.test", "169.254.169.254"),
        ("metadata6.test", "fd00:ec2::254"),
        ("intranet.test", "10.0.0.1"),
        ("cgnat.test", "100.64.0.1"),
        ("nat64.test", "64:ff9b::a9fe:a9fe"),
    ],
)
def test_name_resolving_to_non_public_address_is_refused(
    dns: FakeDns, name: str, answer: str
) -> None:
    dns.set(name, [answer])
    _refused(f"http://{name}/hook")
    _refused(f"https://{name.upper()}./hook")


@pytest.mark.parametrize(
    "answer",
    [
        ["93.184.215.14", "10.0.0.1"],
        ["10.0.0.1", "93.184.215.14"],
        ["93.184.215.14", "127.0.0.1"],
        ["93.184.215.14", "1.1.1.1", "169.254.169.254"],
        ["2606:4700::1111", "::1"],
        ["2606:4700::1111", "93.184.215.14", "fe80::1"],
    ],
)
def test_name_with_one_non_public_answer_among_public_ones_is_refused(
    dns: FakeDns, answer: list[str]
) -> None:
    dns.set("mixed.test", answer)
    _refused("https://mixed.test/hook")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (["93.184.215.14"], "93.184.215.14"),
        (["2606:4700::1111"], "2606:4700::1111"),
        (["93.184.215.14", "1.1.1.1"], "93.184.215.14"),
    ],
)
def test_name_resolving_to_public_addresses_returns_the_address_to_connect_to(
    dns: FakeDns, answer: list[str], expected: str
) -> None:
    dns.set("hooks.test", answer)
    assert ensure_safe_webhook_url("https://hooks.test/hook") == expected
    assert ensure_safe_webhook_url("http://hooks.test:8080/hook?x=1") == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://93.184.215.14/hook", "93.184.215.14"),
        ("https://[2606:4700::1111]:8443/hook", "2606:4700::1111"),
    ],
)
def test_public_address_literal_is_allowed(url: str, expected: str) -> None:
    assert ensure_safe_webhook_url(url) == expected


def test_name_that_does_not_resolve_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_answer(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_answer)
    _refused("https://nowhere.test/hook")


# --- a refused delivery connects nowhere -------------------------------------------

LOOPBACK_URLS = [
    "http://127.0.0.1:{port}/hook",
    "http://127.255.255.254:{port}/hook",
    "http://2130706433:{port}/hook",
    "http://017700000001:{port}/hook",
    "http://0177.0.0.1:{port}/hook",
    "http://0x7f000001:{port}/hook",
    "http://0x7f.0.0.1:{port}/hook",
    "http://127.1:{port}/hook",
    "http://127.0.1:{port}/hook",
    "http://127.000.000.001:{port}/hook",
    "http://0.0.0.0:{port}/hook",
    "http://0:{port}/hook",
    "http://[::]:{port}/hook",
    "http://[::1]:{port}/hook",
    "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://[::ffff:7f00:1]:{port}/hook",
    "http://[::127.0.0.1]:{port}/hook",
    "http://localhost:{port}/hook",
    "http://LocalHost:{port}/hook",
    "http://localhost.:{port}/hook",
    "http://foo.localhost:{port}/hook",
    "http://loop.test:{port}/hook",
    "http://public.invalid@127.0.0.1:{port}/hook",
    "http://user:pw@127.0.0.1:{port}/hook",
    "http://127.0.0.1:{port}#@public.invalid/hook",
    "http://127.0.0.1:{port}?@public.invalid/hook",
    "http://127.0.0.1:{port}\\@public.invalid/hook",
]


@pytest.fixture(scope="module")
def shared_receiver() -> Iterator[Receiver]:
    """One receiver for the many refused-delivery cases (each starts with no hits)."""
    yield from running_receiver()


@pytest.fixture
def idle_receiver(shared_receiver: Receiver) -> Receiver:
    with shared_receiver.lock:
        shared_receiver.hits.clear()
    return shared_receiver


def _fire(url: str, event: str = "ssrf.probe") -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.create(url=url, event=event, secret="s3cret")
    WebhookManager().fire_sync(event, {"probe": True})
    return endpoint


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("template", LOOPBACK_URLS)
def test_delivery_to_loopback_form_reaches_nothing_and_is_not_retried(
    idle_receiver: Receiver, dns: FakeDns, template: str
) -> None:
    receiver = idle_receiver
    dns.set("loop.test", ["127.0.0.1"])
    endpoint = _fire(template.format(port=receiver.port))
    assert receiver.wait_for(1, timeout=0.2) == []
    row = WebhookDelivery.objects.get()
    assert row.endpoint == endpoint
    assert "UnsafeWebhookUrlError" in (row.error or "")
    assert row.attempt == 1
    assert row.final is True
    assert row.success is False
    assert row.status_code is None


@pytest.mark.django_db(transaction=True)
def test_delivery_to_idn_digit_host_reaches_nothing_and_is_refused_for_good(
    idle_receiver: Receiver,
) -> None:
    """IDNA maps "①②⑦.0.0.1" to 127.0.0.1 and ensure_safe_webhook_url refuses it; a
    delivery to it is refused the same way: one final attempt, no retries."""
    receiver = idle_receiver
    with webhook_settings(BACKOFF_BASE=0.01, BACKOFF_CAP=0.05):
        _fire(f"http://①②⑦.0.0.1:{receiver.port}/hook")
    assert receiver.wait_for(1, timeout=0.2) == []
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(r.attempt, r.final) for r in rows] == [(1, True)]
    assert "UnsafeWebhookUrlError" in (rows[0].error or "")


# --- DNS rebinding: the connection goes to the checked address ---------------------


class Decoy:
    """An HTTP listener on 127.0.0.2 (same port as the receiver): proof of where a
    connection really went."""

    def __init__(self, port: int, status: int = 200) -> None:
        self.hits: list[tuple[str, str]] = []
        decoy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                decoy.hits.append((self.path, self.headers.get("Host", "")))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = PeerServer(("127.0.0.2", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def decoy_factory() -> Iterator[Callable[..., Decoy]]:
    started: list[Decoy] = []

    def start(port: int, status: int = 200) -> Decoy:
        decoy = Decoy(port, status)
        started.append(decoy)
        return decoy

    yield start
    for decoy in started:
        decoy.close()


@pytest.mark.django_db(transaction=True)
def test_rebinding_connection_goes_to_the_checked_address_not_a_second_lookup(
    receiver: Any, loopback_allowed: None, dns: FakeDns, decoy_factory: Callable[..., Decoy]
) -> None:
    decoy = decoy_factory(receiver.port)
    dns.set("rebind.test", ["127.0.0.2"], ["127.0.0.1"])
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.2/32"]):
        _fire(f"http://rebind.test:{receiver.port}/hook")
    assert dns.lookups["rebind.test"] == 1
    assert decoy.hits == [("/hook", f"rebind.test:{receiver.port}")]
    assert receiver.wait_for(1, timeout=0.2) == []
    row = WebhookDelivery.objects.get()
    assert row.success is True and row.attempt == 1


@pytest.mark.django_db(transaction=True)
def test_rebinding_each_attempt_resolves_once_and_is_checked_again(
    receiver: Any, loopback_allowed: None, dns: FakeDns, decoy_factory: Callable[..., Decoy]
) -> None:
    """Attempt 1: the name answers the allowed 127.0.0.2, which answers 500. Attempt 2:
    the name now answers 127.0.0.1, not allowed: refused for good, nothing reaches it."""
    decoy = decoy_factory(receiver.port, status=500)
    dns.set("rebind.test", ["127.0.0.2"], ["127.0.0.1"])
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.2/32"]):
        _fire(f"http://rebind.test:{receiver.port}/hook")
    assert receiver.wait_for(1, timeout=0.2) == []
    assert len(decoy.hits) == 1
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(r.attempt, r.status_code, r.final) for r in rows] == [(1, 500, False), (2, None, True)]
    assert "UnsafeWebhookUrlError" in (rows[1].error or "")
    assert dns.lookups["rebind.test"] == len(rows) == 2


@pytest.mark.django_db(transaction=True)
def test_rebinding_unreachable_checked_address_fails_without_reaching_the_second_answer(
    receiver: Any, loopback_allowed: None, dns: FakeDns
) -> None:
    """Nothing listens on 127.0.0.2: the pinned connection fails there, it does not fall
    back to a fresh lookup that would answer the receiver's 127.0.0.1."""
    dns.set("rebind.test", ["127.0.0.2"], ["127.0.0.1"])
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.2/32"]):
        _fire(f"http://rebind.test:{receiver.port}/hook")
    assert receiver.wait_for(1, timeout=0.2) == []
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(r.attempt, r.final) for r in rows] == [(1, False), (2, True)]
    assert "ConnectionError" in (rows[0].error or "")
    assert "UnsafeWebhookUrlError" in (rows[1].error or "")
    assert dns.lookups["rebind.test"] == 2


@pytest.mark.django_db(transaction=True)
def test_checked_address_is_the_one_connected_to_with_the_name_as_host(
    receiver: Any, loopback_allowed: None, dns: FakeDns
) -> None:
    dns.set("rebind.test", ["127.0.0.1"])
    _fire(f"http://rebind.test:{receiver.port}/hook")
    hits = receiver.wait_for(1)
    assert len(hits) == 1
    assert hits[0].path == "/hook"
    assert hits[0].headers["Host"] == f"rebind.test:{receiver.port}"
    assert dns.lookups["rebind.test"] == 1
    assert WebhookDelivery.objects.get().success is True


# --- redirects are never followed --------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_not_followed_and_counts_as_a_failed_attempt(
    receiver: Any, loopback_allowed: None, status: int
) -> None:
    location = f"http://127.0.0.1:{receiver.port}/internal"
    receiver.respond = lambda n: (status, {"Location": location}, b"")
    _fire(receiver.url)
    hits = receiver.wait_for(5)
    assert len(hits) == 5
    assert [(h.method, h.path) for h in hits] == [("POST", "/hook")] * 5
    rows = list(WebhookDelivery.objects.order_by("attempt"))
    assert [r.attempt for r in rows] == [1, 2, 3, 4, 5]
    assert [r.final for r in rows] == [False] * 4 + [True]
    for row in rows:
        assert row.success is False
        assert row.status_code == status
        assert "redirect" in (row.error or "")
        assert location in (row.error or "")


# --- no proxies or .netrc from the environment -------------------------------------


@pytest.mark.django_db(transaction=True)
def test_environment_proxies_and_netrc_are_ignored(
    receiver: Any, loopback_allowed: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_proxy = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, dead_proxy)
    monkeypatch.setenv("all_proxy", dead_proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login robot password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    _fire(receiver.url)
    hits = receiver.wait_for(1)
    assert len(hits) == 1
    assert hits[0].path == "/hook"
    assert "Authorization" not in hits[0].headers
    assert "Proxy-Authorization" not in hits[0].headers
    row = WebhookDelivery.objects.get()
    assert row.success is True and row.attempt == 1


# --- ALLOWED_NETWORKS never relaxes link-local -------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.test/",
        "http://metadata6.test/",
    ],
)
def test_allow_everything_networks_still_refuse_link_local(dns: FakeDns, url: str) -> None:
    dns.set("metadata.test", ["169.254.169.254"])
    dns.set("metadata6.test", ["fe80::a9fe:a9fe"])
    with webhook_settings(ALLOWED_NETWORKS=["0.0.0.0/0", "::/0"]):
        assert ensure_safe_webhook_url("http://10.0.0.1/") == "10.0.0.1"
        _refused(url)


@pytest.mark.parametrize(
    ("allowed", "url"),
    [
        (["0.0.0.0/0", "::/0"], "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/"),
        (["0.0.0.0/0", "::/0"], "http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/"),
        (["0.0.0.0/0", "::/0"], "http://[2002:a9fe:a9fe::1]/latest/meta-data/"),
        (["64:ff9b::/96"], "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/"),
        (["2002::/16"], "http://[2002:a9fe:a9fe::1]/latest/meta-data/"),
    ],
)
def test_allowed_networks_never_relax_metadata_embedded_in_ipv6_translation(
    allowed: list[str], url: str
) -> None:
    with webhook_settings(ALLOWED_NETWORKS=allowed):
        _refused(url)


def test_allowed_networks_relax_only_what_they_list() -> None:
    with webhook_settings(ALLOWED_NETWORKS=["10.0.0.0/8"]):
        assert ensure_safe_webhook_url("http://10.1.2.3/") == "10.1.2.3"
        _refused("http://192.168.1.1/")
        _refused("http://127.0.0.1/")
        _refused("http://localhost/")


# --- the error mapping --------------------------------------------------------------


def test_unsafe_webhook_url_error_is_a_422_problem() -> None:
    with pytest.raises(UnsafeWebhookUrlError) as info:
        ensure_safe_webhook_url("http://127.0.0.1/")
    assert isinstance(info.value, ValidationException)
    request = RequestFactory().post("/", HTTP_ACCEPT="application/json")
    response = ErrorMiddleware(lambda r: HttpResponse()).process_exception(request, info.value)
    assert response is not None
    assert response.status_code == 422
    assert json.loads(response.content)["code"] == "unsafe_webhook_url"


# --- the admin form -----------------------------------------------------------------


def _form(url: str) -> WebhookEndpointForm:
    return WebhookEndpointForm(
        data={"url": url, "event": "order.shipped", "secret": "s3cret", "active": "on"}
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/hook",
        "http://2130706433/hook",
        "http://localhost/hook",
        "http://user:pw@93.184.215.14/hook",
        "ftp://93.184.215.14/hook",
        "http://loop.test/hook",
    ],
)
def test_admin_form_rejects_unsafe_url_on_the_url_field(dns: FakeDns, url: str) -> None:
    dns.set("loop.test", ["127.0.0.1"])
    form = _form(url)
    assert form.is_valid() is False
    assert form.has_error("url", code="unsafe_webhook_url")
    assert set(form.errors) == {"url"}


@pytest.mark.django_db
def test_admin_form_accepts_url_resolving_to_a_public_address(dns: FakeDns) -> None:
    dns.set("hooks.test", ["93.184.215.14"])
    form = _form("https://hooks.test/hook")
    assert form.is_valid(), form.errors
    endpoint = form.save()
    assert endpoint.url == "https://hooks.test/hook"
