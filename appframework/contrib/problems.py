"""What the API framework adapters share beyond the suite's error mapping
(:mod:`appframework.errors`): DRF's nested error details as flat field names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["flatten"]


def _is_leaf(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"message", "code"}


def flatten(details: Any, prefix: str, default_field: str) -> Iterable[tuple[str, str, str]]:
    """DRF's nested ``get_full_details()`` as ``(dotted.field, code, message)``: nested
    serializers join with dots, a ``many=True`` list keeps its index."""
    if _is_leaf(details):
        yield (prefix or default_field, str(details["code"]), str(details["message"]))
    elif isinstance(details, Mapping):
        for key, value in details.items():
            yield from flatten(value, f"{prefix}.{key}" if prefix else str(key), default_field)
    elif isinstance(details, list):
        for index, value in enumerate(details):
            name = prefix if _is_leaf(value) else (f"{prefix}.{index}" if prefix else str(index))
            yield from flatten(value, name, default_field)
