"""Celery: a task published under a tenant runs under that tenant in the worker.

The tenant travels in a message header set at publish time and is entered before the
task body and left after it, so a worker process never carries one task's tenant into
the next. Eager mode (``CELERY_TASK_ALWAYS_EAGER``) runs in the caller's context and
needs neither half.
"""

from __future__ import annotations

from contextvars import Token
from typing import Any

from .context import ALL_TENANTS, reset_tenant_state, set_tenant_state, tenant_state

__all__ = ["HEADER", "connect_celery"]

HEADER = "appframework_tenant"

_tokens: dict[str, Token[Any]] = {}


def _encode(state: Any) -> Any:
    return {"all": True} if state is ALL_TENANTS else {"id": state}


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return ALL_TENANTS if value.get("all") else value.get("id")
    return None


def _header(task: Any) -> Any:
    request = task.request
    value = getattr(request, HEADER, None)
    if value is None:
        value = (getattr(request, "headers", None) or {}).get(HEADER)
    return value


def before_publish(
    sender: Any = None, headers: dict[str, Any] | None = None, **kwargs: Any
) -> None:
    state = tenant_state()
    if headers is not None and state is not None:
        headers[HEADER] = _encode(state)


def task_prerun(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if task is None or task_id is None or getattr(task.request, "is_eager", False):
        return
    # No header means "published with no tenant": enter that explicitly rather than
    # keep whatever this worker thread saw last.
    _tokens[task_id] = set_tenant_state(_decode(_header(task)))


def task_postrun(task_id: str | None = None, **kwargs: Any) -> None:
    token = _tokens.pop(task_id, None) if task_id is not None else None
    if token is None:
        return
    try:
        reset_tenant_state(token)
    except ValueError:  # entered in another context (an unusual pool): clear instead
        reset_tenant_state()


def connect_celery() -> bool:
    """Connect the three receivers; False when Celery is not installed."""
    try:
        from celery import signals
    except ImportError:
        return False
    signals.before_task_publish.connect(
        before_publish, dispatch_uid="appframework_tenancy.publish", weak=False
    )
    signals.task_prerun.connect(task_prerun, dispatch_uid="appframework_tenancy.prerun", weak=False)
    signals.task_postrun.connect(
        task_postrun, dispatch_uid="appframework_tenancy.postrun", weak=False
    )
    return True
