"""``TenantMiddleware``: resolve the tenant once per request and run everything after
it — views, later middleware, a streaming response's body — under that tenant.

The tenant is entered with one ``with`` block around ``get_response``, never set in a
``process_request`` and reset in a ``process_response``: a value set without its reset
outlives the request on that worker thread, and under ASGI the two halves can run in
different contexts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import async_to_sync, iscoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.cache import patch_vary_headers

from appframework.conf import app_settings
from appframework.errors import answer_outage
from appframework.middleware_base import HybridMiddleware

from .context import entered_state

__all__ = ["TenantMiddleware", "aresolve_tenant", "resolve_tenant"]


def _resolver() -> Any:
    resolver = app_settings.TENANCY.RESOLVER
    if not callable(resolver):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "APPFRAMEWORK['TENANCY']['RESOLVER'] must be the dotted path of "
            "resolver(request) -> tenant id or None."
        )
    return resolver


def resolve_tenant(request: HttpRequest) -> Any:
    """The configured resolver's answer for ``request`` (sync code)."""
    resolver = _resolver()
    if iscoroutinefunction(resolver):
        return async_to_sync(resolver)(request)
    return resolver(request)


async def aresolve_tenant(request: HttpRequest) -> Any:
    resolver = _resolver()
    if iscoroutinefunction(resolver):
        return await resolver(request)
    return await sync_to_async(resolver)(request)


def _resolved(request: HttpRequest) -> tuple[Any, bool]:
    """``(tenant, public)``: ``public`` when a ``tenant_resolver(...)`` fell back to its
    ``public_tenant``; a hand-written resolver reports no fallback."""
    from .resolvers import TenantResolver

    resolver = _resolver()
    if isinstance(resolver, TenantResolver):
        return resolver.resolve(request)
    return resolve_tenant(request), False


async def _aresolved(request: HttpRequest) -> tuple[Any, bool]:
    from .resolvers import TenantResolver

    resolver = _resolver()
    if isinstance(resolver, TenantResolver):
        return await sync_to_async(resolver.resolve)(request)
    return await aresolve_tenant(request), False


def _bind_sync(chunks: Iterator[bytes], tenant: Any, public: bool = False) -> Iterator[bytes]:
    # Entered around each next(), not around the whole generator: the server consumes
    # the body after the middleware has returned and its with-block has closed.
    chunks = iter(chunks)
    while True:
        with entered_state(tenant, public=public):
            try:
                chunk = next(chunks)
            except StopIteration:
                return
        yield chunk


async def _bind_async(
    chunks: AsyncIterator[bytes], tenant: Any, public: bool = False
) -> AsyncIterator[bytes]:
    chunks = aiter(chunks)
    while True:
        with entered_state(tenant, public=public):
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                return
        yield chunk


def _keep_tenant(response: HttpResponse, tenant: Any, public: bool = False) -> HttpResponse:
    if tenant is not None:
        # The page depends on the tenant, so on whatever the resolver read: a shared
        # cache must neither mix tenants up nor keep the page at all by default.
        patch_vary_headers(response, list(app_settings.TENANCY.VARY))
        if not response.has_header("Cache-Control"):
            response["Cache-Control"] = "private"
    if isinstance(response, StreamingHttpResponse):
        content = response.streaming_content
        if response.is_async:
            response.streaming_content = _bind_async(content, tenant, public)
        else:
            response.streaming_content = _bind_sync(content, tenant, public)
    return response


class TenantMiddleware(HybridMiddleware):
    """Place it after ``AuthenticationMiddleware`` (the resolver usually reads the user);
    ``request.tenant_id`` holds the answer."""

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        try:
            tenant, public = _resolved(request)
        except Exception as exc:
            # The resolver reads the user (sessions, tokens, their revocations).
            return answer_outage(request, exc)
        request.tenant_id = tenant  # type: ignore[attr-defined]
        with entered_state(tenant, public=public):
            response = self.get_response(request)
        return _keep_tenant(response, tenant, public)  # type: ignore[arg-type]

    async def __acall__(self, request: HttpRequest) -> Any:
        try:
            tenant, public = await _aresolved(request)
        except Exception as exc:
            return answer_outage(request, exc)
        request.tenant_id = tenant  # type: ignore[attr-defined]
        with entered_state(tenant, public=public):
            response = await self.get_response(request)  # type: ignore[misc]
        return _keep_tenant(response, tenant, public)
