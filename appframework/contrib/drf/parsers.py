"""``JSONParser``: DRF's, with the suite's bound on nesting (docs/drf.md)."""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers
from rest_framework.utils import json as drf_json

from ... import bounded_json

__all__ = ["JSONParser"]


class JSONParser(parsers.JSONParser):
    """DRF's ``JSONParser`` that refuses a body nested more than ``max_depth`` levels
    with 400 ``json_too_deep`` before any serializer walks it. Put it in
    ``DEFAULT_PARSER_CLASSES`` in place of DRF's."""

    max_depth = bounded_json.MAX_DEPTH

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            # A text codec only: a bytes-to-bytes one (bz2_codec) would inflate a small
            # body past the upload limit it was checked against.
            "".encode(encoding)
        except (LookupError, UnicodeError):
            raise exceptions.ParseError(
                f'Unsupported charset "{encoding}" in request Content-Type header.'
            ) from None
        try:
            text = codecs.getreader(encoding)(stream).read()
            return bounded_json.loads(
                text,
                max_depth=self.max_depth,
                parse_constant=drf_json.strict_constant if self.strict else None,
            )
        except bounded_json.JsonNestingError:
            raise
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
