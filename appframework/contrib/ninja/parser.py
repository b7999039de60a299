"""``BoundedParser``: ninja's JSON parser with the suite's bound on nesting (docs/ninja.md)."""

from __future__ import annotations

from typing import Any, cast

from django.http import HttpRequest
from ninja.parser import Parser

from ... import bounded_json

__all__ = ["BoundedParser"]


class BoundedParser(Parser):
    """``NinjaAPI(parser=BoundedParser())``: a body nested more than ``max_depth`` levels
    is a 400 ``json_too_deep`` (with the suite's exception handlers installed) before
    pydantic walks it."""

    max_depth = bounded_json.MAX_DEPTH

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return cast(dict[str, Any], bounded_json.loads(request.body, max_depth=self.max_depth))
