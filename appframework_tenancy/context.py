"""The current tenant, kept in a ``ContextVar``.

Three states, so that "forgot to select a tenant" and "every tenant, on purpose" are
different things:

* a tenant id (``as_tenant(5)``): tenant models are scoped to it;
* no tenant (outside a request, or the resolver returned None): no filter is applied,
  or, with ``APPFRAMEWORK["TENANCY"]["STRICT"]``, queries raise :class:`TenantRequired`;
* every tenant (``all_tenants()``): no filter, even in strict mode; for maintenance code.

A ``ContextVar`` follows the code: it is copied into ``sync_to_async``/``async_to_sync``
calls, ``asyncio`` tasks and ``asyncio.to_thread``, but a plain ``threading.Thread`` or an
executor starts empty; :func:`tenant_bound` carries it there.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, TypeVar

from django.db import DEFAULT_DB_ALIAS, transaction

__all__ = [
    "ALL_TENANTS",
    "TENANT",
    "acting_tenant_id",
    "all_tenants",
    "as_tenant",
    "current_tenant_id",
    "entered_state",
    "on_commit",
    "reset_tenant_state",
    "set_tenant_state",
    "tenant_bound",
    "tenant_state",
]

R = TypeVar("R")


class _AllTenants:
    """The "every tenant, on purpose" state."""

    def __repr__(self) -> str:
        return "ALL_TENANTS"


ALL_TENANTS: Final[Any] = _AllTenants()

#: The column holding a row's tenant on every tenant model.
TENANT: Final = "tenant_id"

_current: contextvars.ContextVar[Any] = contextvars.ContextVar("appframework_tenant", default=None)
# True while the tenant is the resolver's ``public_tenant`` fallback (an anonymous request,
# a user with no membership): the rows read are that tenant's, but nobody acts for it.
_public: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "appframework_tenant_public", default=False
)


def current_tenant_id() -> Any:
    """The current tenant's id, or None when no tenant (or every tenant) is selected."""
    value = _current.get()
    return None if value is ALL_TENANTS else value


def acting_tenant_id() -> Any:
    """The tenant the code acts for: :func:`current_tenant_id`, but None under the
    ``public_tenant`` a resolver fell back to, whose events must not reach that tenant."""
    return None if _public.get() else current_tenant_id()


def tenant_state() -> Any:
    """The raw state: a tenant id, None (no tenant) or :data:`ALL_TENANTS`."""
    return _current.get()


@contextmanager
def as_tenant(tenant_id: Any) -> Iterator[None]:
    """Scope the block to ``tenant_id``; the outer tenant comes back on exit.

    ``as_tenant(None)`` selects no tenant (no filter, or :class:`TenantRequired` in strict
    mode); use :func:`all_tenants` to mean every tenant.
    """
    if isinstance(tenant_id, bool):
        raise TypeError("A tenant id cannot be a bool.")
    with entered_state(tenant_id):
        yield


def all_tenants() -> Any:
    """Every tenant, on purpose (maintenance code, admin of a superuser); greppable."""
    return entered_state(ALL_TENANTS)


@contextmanager
def entered_state(state: Any, *, public: bool = False) -> Iterator[None]:
    """The raw ``state`` (a tenant id, None or :data:`ALL_TENANTS`) for the block: what
    ``as_tenant`` and ``all_tenants`` enter, and the middleware enters for a request.
    ``public``: ``state`` is the resolver's ``public_tenant`` fallback
    (:func:`acting_tenant_id` is None); any other entry clears it."""
    token = _current.set(state)
    public_token = _public.set(public)
    try:
        yield
    finally:
        _public.reset(public_token)
        _current.reset(token)


def tenant_bound(func: Callable[..., R]) -> Callable[..., R]:
    """``func`` running under the tenant state current *now*, wherever it is called:
    a ``threading.Thread`` target, ``executor.submit``, ``loop.run_in_executor``."""
    state = _current.get()
    public = _public.get()

    @functools.wraps(func)
    def bound(*args: Any, **kwargs: Any) -> R:
        with entered_state(state, public=public):
            return func(*args, **kwargs)

    return bound


def on_commit(func: Callable[[], Any], using: str | None = None, robust: bool = False) -> None:
    """``transaction.on_commit`` whose callback runs under the tenant current now, not
    whatever is current when the outermost transaction commits."""
    transaction.on_commit(tenant_bound(func), using=using or DEFAULT_DB_ALIAS, robust=robust)


def set_tenant_state(state: Any) -> contextvars.Token[Any]:
    """Enter ``state`` until :func:`reset_tenant_state` is called with the returned token:
    for code whose start and end are two callbacks (a Celery task's prerun and postrun
    signals), where a ``with`` block cannot span them."""
    return _current.set(state)


def reset_tenant_state(token: contextvars.Token[Any] | None = None) -> None:
    """Undo :func:`set_tenant_state`; without a token, no tenant (a worker cleaning up
    after a task whose token is lost)."""
    if token is None:
        _current.set(None)
    else:
        _current.reset(token)
