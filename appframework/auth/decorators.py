"""View decorators for sync and async views."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest

from .sessions import require_auth, require_auth_sync
from .tokens import require_api_auth, require_api_auth_sync

__all__ = ["api_auth_required", "auth_required"]

V = TypeVar("V", bound=Callable[..., Any])


def _guard(
    sync_check: Callable[[HttpRequest], Any], async_check: Callable[[HttpRequest], Any]
) -> Callable[[V], V]:
    def decorator(view: V) -> V:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                await async_check(request)
                return await view(request, *args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(view)
        def sync_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            sync_check(request)
            return view(request, *args, **kwargs)

        return sync_wrapper  # type: ignore[return-value]

    return decorator


#: Session login required: 401 (UnauthorizedException) for anonymous requests.
auth_required = _guard(require_auth_sync, require_auth)
#: ``Authorization: Bearer`` required: 401 with ``WWW-Authenticate: Bearer`` otherwise.
api_auth_required = _guard(require_api_auth_sync, require_api_auth)
