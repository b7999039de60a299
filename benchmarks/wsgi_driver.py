"""Driving a Django WSGI handler in-process: one request, or a timed batch. Shared by
the middleware-stack and GraphQL benchmarks."""

from __future__ import annotations

import gc
import io
from collections.abc import Callable
from typing import Any


class StartResponse:
    __slots__ = ("headers", "status")

    def __init__(self) -> None:
        self.status = ""
        self.headers: list[tuple[str, str]] = []

    def __call__(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        self.status = status
        self.headers = headers
        return lambda data: None


def call(
    handler: Any, environ: dict[str, Any], body: bytes = b""
) -> tuple[str, list[tuple[str, str]], bytes]:
    """One full round trip: (status, headers, body); ``close()`` fires request_finished."""
    env = dict(environ)
    env["wsgi.input"] = io.BytesIO(body)
    sr = StartResponse()
    result = handler(env, sr)
    try:
        content = b"".join(result)
    finally:
        result.close()
    return sr.status, sr.headers, content


def run_batch(
    handler: Any,
    environ: dict[str, Any],
    n: int,
    clock: Callable[[], float],
    body: bytes = b"",
) -> float:
    """Mean seconds per request over ``n`` requests."""
    BytesIO = io.BytesIO
    sr = StartResponse()
    gc.collect()
    start = clock()
    for _ in range(n):
        env = environ.copy()
        env["wsgi.input"] = BytesIO(body)
        result = handler(env, sr)
        for _chunk in result:
            pass
        result.close()
    return (clock() - start) / n
