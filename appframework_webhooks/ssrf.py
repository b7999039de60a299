"""The private-address guard (SSRF): which addresses a webhook may be sent to.

Checking a URL and then handing it to an HTTP client is not enough: the client resolves
the name again, and a hostile DNS server can answer a public address to the check and
127.0.0.1 to the connection (DNS rebinding). :func:`check_host` resolves the name once,
checks every address it got and returns the one to connect to; the delivery client
(``_http``) connects there, keeping the name for ``Host``, SNI and the certificate.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from appframework.conf import app_settings, derived_setting

from .exceptions import UnsafeWebhookUrlError

__all__ = ["allowed_networks_for", "check_host", "ensure_safe_webhook_url", "is_public_address"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Ranges Python's is_global lets through (or got wrong in some 3.11 releases) that still
# reach somewhere they should not: CGNAT, protocol assignments, 6to4/Teredo relays,
# benchmarking, multicast, IPv4-compatible, NAT64, site-local, documentation.
_V4_BLOCKED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "100.64.0.0/10",
        "192.0.0.0/24",
        "192.88.99.0/24",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)
_V6_BLOCKED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "::/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "2002::/16",
        "2001::/32",
        "2001:db8::/32",
        "5f00::/16",
        "fec0::/10",
        "ff00::/8",
        "100::/64",
        "3fff::/20",
    )
)
# Never let through, whatever ALLOWED_NETWORKS says: the cloud metadata service.
_ALWAYS_BLOCKED = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))


def _address(value: Any) -> IPAddress:
    address = ipaddress.ip_address(str(value).split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    return address


def is_public_address(value: Any) -> bool:
    """True for an address on the public internet: not private, loopback, link-local,
    CGNAT, multicast, reserved, unspecified, nor an IPv6 form embedding one of those."""
    try:
        address = _address(value)
    except ValueError:
        return False
    if (
        not address.is_global
        or address.is_multicast
        or address.is_private
        or address.is_reserved
        or address.is_unspecified
        or address.is_loopback
        or address.is_link_local
    ):
        return False
    blocked = _V4_BLOCKED if address.version == 4 else _V6_BLOCKED
    return not any(address in network for network in blocked)


@derived_setting
def _allowed_networks() -> list[Any]:
    """ALLOWED_NETWORKS parsed once (until the settings change)."""
    return [
        ipaddress.ip_network(str(entry), strict=False)
        for entry in app_settings.WEBHOOKS.ALLOWED_NETWORKS or ()
    ]


def allowed_networks_for(tenant_id: Any) -> list[Any]:
    """The ALLOWED_NETWORKS an endpoint of ``tenant_id`` may reach: all of them for the
    operator's (no tenant), none for a tenant's unless ALLOWED_NETWORKS_FOR_TENANTS. A
    customer types any URL: the networks opened for the operator's own receivers must
    not become a way into them."""
    if tenant_id is None or app_settings.WEBHOOKS.ALLOWED_NETWORKS_FOR_TENANTS:
        return _allowed_networks()
    return []


_EMBEDDING_V4 = (
    (ipaddress.ip_network("64:ff9b::/96"), 0),  # NAT64: the last 32 bits
    (ipaddress.ip_network("64:ff9b:1::/48"), 0),  # local-use NAT64
    (ipaddress.ip_network("::/96"), 0),  # IPv4-compatible (deprecated)
    (ipaddress.ip_network("2002::/16"), 80),  # 6to4: bits 16-48
)


def _embedded_v4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 translation form carries (NAT64, 6to4, compatible)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    for network, shift in _EMBEDDING_V4:
        if address in network:
            return ipaddress.IPv4Address((int(address) >> shift) & 0xFFFFFFFF)
    return None


def _never_allowed(address: IPAddress) -> bool:
    """The cloud metadata service's ranges, also when carried inside an IPv6 form."""
    for candidate in (address, _embedded_v4(address)):
        if candidate is not None and any(
            candidate in network
            for network in _ALWAYS_BLOCKED
            if network.version == candidate.version
        ):
            return True
    return False


def _address_allowed(value: Any, allowed: Iterable[Any]) -> bool:
    try:
        address = _address(value)
    except ValueError:
        return False
    if _never_allowed(address):
        return False
    if is_public_address(address):
        return True
    return any(address in network for network in allowed if network.version == address.version)


def _unsafe(reason: str) -> UnsafeWebhookUrlError:
    return UnsafeWebhookUrlError(
        f"The webhook URL is not allowed: {reason}.", code="unsafe_webhook_url"
    )


def normalise_host(host: str) -> str:
    host = host.strip("[]").rstrip(".").lower()
    try:
        # What the resolver will see: IDNA applies NFKC, so "①②⑦.0.0.1" is 127.0.0.1.
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError as exc:
        raise _unsafe("the host name is not valid") from exc


def check_host(host: str, port: int, *, tenant_id: Any = None) -> str:
    """Resolve ``host`` and return the address to connect to, after checking every
    address it resolves to, for an endpoint of ``tenant_id`` (None: the operator's; see
    :func:`allowed_networks_for`). Raises :class:`UnsafeWebhookUrlError`."""
    name = normalise_host(host)
    if not name:
        raise _unsafe("no host")
    blocking = app_settings.WEBHOOKS.BLOCK_PRIVATE_NETWORK_TARGETS
    allowed = allowed_networks_for(tenant_id)
    if blocking and (name == "localhost" or name.endswith(".localhost")) and not allowed:
        raise _unsafe("the host is a local name")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise _unsafe("the host name does not resolve") from exc
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise _unsafe("the host name does not resolve")
    for address in addresses:
        if blocking and not _address_allowed(address, allowed):
            raise _unsafe("the host resolves to a non-public address")
        # Even with the guard switched off, the metadata service is never a receiver.
        if not blocking and _never_allowed(_address(address)):
            raise _unsafe("the host resolves to a link-local (metadata) address")
    return addresses[0]


def url_parts(url: Any) -> tuple[str, str, int]:
    if not isinstance(url, str) or not url:
        raise _unsafe("not a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _unsafe("not a valid URL") from exc
    if parts.scheme not in ("http", "https"):
        raise _unsafe("only http and https URLs are delivered to")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _unsafe("credentials in the URL are not allowed")
    if "\\" in url:
        raise _unsafe("backslashes in the URL are not allowed")
    host = parts.hostname or ""
    if not host:
        raise _unsafe("no host")
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def ensure_safe_webhook_url(url: Any, *, tenant_id: Any = None) -> str:
    """Run the checks on demand (a form's ``clean``, before saving an endpoint): http or
    https, no credentials, and — with ``BLOCK_PRIVATE_NETWORK_TARGETS`` — every address
    the host resolves to is public or in the ALLOWED_NETWORKS open to an endpoint of
    ``tenant_id`` (None: the operator's). Returns the address a delivery would connect
    to; raises :class:`UnsafeWebhookUrlError`. Deliveries check again on every attempt,
    since DNS answers change."""
    _, host, port = url_parts(url)
    return check_host(host, port, tenant_id=tenant_id)
