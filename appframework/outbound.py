"""Outbound HTTP sessions that carry no state from one peer to the next.

A pooled ``requests.Session`` per thread keeps connections alive, but it also keeps a
cookie jar: whatever one peer (an identity provider) sets would be sent to every other
peer that thread talks to afterwards. (Webhook deliveries use no session at all: their
client, ``appframework_webhooks.transport``, has no cookie jar.)
"""

from __future__ import annotations

from http.cookiejar import Cookie, CookiePolicy
from typing import Any

import requests
from requests.cookies import RequestsCookieJar

__all__ = ["NoCookieJar", "StatelessSession"]


class _RefuseAllCookies(CookiePolicy):
    """Neither stores nor returns a cookie, for any domain."""

    netscape = True
    rfc2965 = False
    hide_cookie2 = True

    def set_ok(self, cookie: Cookie, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: Any) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: Any) -> bool:
        return False

    def path_return_ok(self, path: str, request: Any) -> bool:
        return False


class NoCookieJar(RequestsCookieJar):
    """A jar that stays empty: the session is shared by every peer a thread talks to, so
    a cookie one of them set would reach the others. ``set_cookie`` is the one door every store goes through
    (``Set-Cookie`` answers, ``jar.set``, merging into a request's jar)."""

    def __init__(self) -> None:
        super().__init__(policy=_RefuseAllCookies())

    def set_cookie(self, cookie: Cookie, *args: Any, **kwargs: Any) -> None:
        return None


class StatelessSession(requests.Session):
    """A ``requests.Session`` for keep-alive only: its cookie jar never holds anything."""

    def __init__(self) -> None:
        super().__init__()
        self.cookies = NoCookieJar()
