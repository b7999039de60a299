"""Test helpers for projects using the Gate."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .gate import Gate

__all__ = ["assert_scope_matches"]


def assert_scope_matches(
    gate: Gate, user: Any, ability: str, queryset: Any, objects: Iterable[Any] | None = None
) -> None:
    """Assert ``gate.scope(user, ability, queryset)`` holds exactly the objects of
    ``objects`` (default: all of ``queryset``) for which ``allows`` is True."""
    candidates = list(queryset if objects is None else objects)
    scoped = set(gate.scope(user, ability, queryset).values_list("pk", flat=True))
    allowed = {obj.pk for obj in candidates if gate.allows_sync(user, ability, obj)}
    considered = {obj.pk for obj in candidates}
    mismatched = (scoped & considered) ^ allowed
    if mismatched:
        raise AssertionError(
            f"scope_{ability} and {ability} disagree for {user!r} on pks {sorted(mismatched)}: "
            f"scope has {sorted(scoped & considered)}, allows has {sorted(allowed)}."
        )
