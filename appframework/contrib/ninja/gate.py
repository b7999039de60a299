"""The Gate in django-ninja operations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...authorization.guard import authorized

__all__ = ["gate"]

V = TypeVar("V", bound=Callable[..., Any])


def gate(
    ability: str, model: type | None = None, *, url_kwarg: str = "id", field: str = "pk"
) -> Callable[[V], V]:
    """Guard a ninja operation (sync or async) with the Gate, under ``@api.get``...::

        @api.delete("/posts/{id}")
        @gate("delete-post", Post)
        def delete_post(request, id: int): ...

    Anonymous → 401, a missing object (or another tenant's) → 404, denied → 403. The
    operation keeps its own parameters; it looks the object up itself. Inside an
    operation, ``authorize_sync(request, ability, obj)`` (or ``await authorize(...)``)
    is the same check as a call.
    """
    return authorized(ability, model, url_kwarg=url_kwarg, field=field, pass_object=False)
