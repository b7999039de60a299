"""JSON parsing with a bound on nesting, for every body or field the suite reads.

Python's decoder recurses once per level: ``[[[[…`` a few thousand deep raises
``RecursionError``, and a document a few hundred deep parses but can make the code that
walks it recurse as deep. Neither is the client's right to a 500. :func:`loads` answers
both with :class:`JsonNestingError` (400, ``json_too_deep``); invalid JSON still raises
``ValueError`` for the caller to answer in its own words.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext_lazy as _

from .exceptions import BadRequestException

__all__ = ["MAX_DEPTH", "JsonNestingError", "loads", "nesting_exceeds"]

#: Levels of arrays and objects a document may nest. Real payloads (a passkey answer, a
#: GraphQL request's variables, an API body) stay far below it.
MAX_DEPTH = 32


class JsonNestingError(BadRequestException):
    """A JSON document nested deeper than the suite reads: 400 ``json_too_deep``."""

    default_detail = _("The JSON document is nested too deeply.")
    default_code = "json_too_deep"


def nesting_exceeds(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests lists and dicts more than ``max_depth``
    levels; walked level by level, without recursion, so any depth is safe to ask about."""
    # Only the containers of each level are kept: most values are scalars, and this runs
    # on every body the suite reads.
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        if depth >= max_depth:
            return True
        children: list[Any] = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, dict | list):
                    children.append(child)
        level = children
        depth += 1
    return False


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads(data, **options)`` that refuses more than ``max_depth`` levels of
    nesting with :class:`JsonNestingError`; ``ValueError`` for text that is not JSON."""
    try:
        value = json.loads(data, **options)
    except RecursionError:
        raise JsonNestingError() from None
    if nesting_exceeds(value, max_depth):
        raise JsonNestingError()
    return value
