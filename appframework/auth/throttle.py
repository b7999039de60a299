"""The login throttle: failed password attempts per (account, client address) and per
client address, on the one :class:`~appframework.ratelimit.RateLimiter`.

An attempt is counted before the password is checked and taken back when it succeeds,
so concurrent guesses never get more than the limit through, and a success clears the
account's count. Past either limit the attempt is refused with 429 and ``Retry-After``
before any database or hashing work — the same answer for an unknown account as for a
known one. The per-account count is keyed by the client address too, so a guesser
elsewhere cannot lock the real owner out.
"""

from __future__ import annotations

import ipaddress
import logging
import unicodedata

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..conf import app_settings
from ..exceptions import TooManyRequestsException
from ..ratelimit import RateLimiter
from .adapter import get_adapter

__all__ = ["LoginThrottle"]

logger = logging.getLogger("appframework.auth")
_warned: list[bool] = []


def _network(address: str) -> str:
    """The unit an attacker pays for: an IPv4 address, or an IPv6 /64 (one home line or
    one VM gets a whole /64, so single IPv6 addresses cost nothing to rotate)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _warn_no_address() -> None:
    # Without an address every client shares one count: a guesser anywhere can lock the
    # owner out. Still better than no throttle; the log says how to fix it.
    if not _warned:
        _warned.append(True)
        logger.warning(
            "The login throttle sees no client address (REMOTE_ADDR is empty): every "
            "client shares one count. Behind a proxy or a Unix socket, set "
            "APPFRAMEWORK['RATE_LIMIT']['CLIENT_IP_HEADER']."
        )


class LoginThrottle:
    """``begin(username, request)`` → a ticket, or ``TooManyRequestsException``;
    ``succeeded(ticket)`` after a correct password."""

    def __init__(self, limiter: RateLimiter | None = None) -> None:
        self.limiter = limiter or RateLimiter(prefix="appframework:login")

    @staticmethod
    def _keys(username: str, request: HttpRequest | None) -> tuple[str, str | None]:
        # The adapter's answer: a project behind a proxy of its own overrides it.
        address = (
            _network(get_adapter(request).get_client_ip(request)) if request is not None else ""
        )
        if request is not None and not address:
            _warn_no_address()
        # NFKC + casefold: at least as coarse as a case- or width-insensitive collation,
        # so a full-width or differently-cased spelling cannot open a fresh count.
        name = unicodedata.normalize("NFKC", username).strip().casefold()
        account = f"account:{address}:{name}"
        return account, (f"address:{address}" if address else None)

    def begin(self, username: str, request: HttpRequest | None) -> tuple[str, str | None] | None:
        section = app_settings.RATE_LIMIT
        window = float(section.LOGIN_WINDOW)
        account, address = self._keys(username, request)
        # The address first: once it is over its limit, no per-account counter is created,
        # so a flood of made-up names cannot fill (and evict) the cache.
        limits = [(address, section.LOGIN_ADDRESS_ATTEMPTS), (account, section.LOGIN_ATTEMPTS)]
        for key, limit in limits:
            if key is None or limit is None:
                continue
            result = self.limiter.hit(key, int(limit), window)
            if not result.allowed:
                raise TooManyRequestsException(
                    _("Too many failed sign-in attempts; try again later."),
                    code="login_throttled",
                    retry_after=result.retry_after,
                )
        return account, address

    def succeeded(self, ticket: tuple[str, str | None] | None) -> None:
        if ticket is None:
            return
        window = float(app_settings.RATE_LIMIT.LOGIN_WINDOW)
        account, address = ticket
        self.limiter.reset(account, window)
        if address is not None:
            self.limiter.refund(address, window)
