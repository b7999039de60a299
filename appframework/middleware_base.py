"""The shape every middleware of the suite shares: sync- and async-capable, in the mode
of the handler it wraps (so an ASGI stack never hops threads through it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

GetResponse = Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]


class HybridMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: GetResponse) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)  # type: ignore[type-var]
