"""Helpers for the servers tests start as separate processes (the demo, the local
OpenID provider): a free port, the server's log, and a stop that always ends it."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A port free right now. Servers such as runserver need a number up front (they
    cannot report the port of ``:0``); the gap until they bind is short enough."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_log(path: Path | None) -> str:
    """What a server printed so far (its request log, tracebacks); "" without a log."""
    if path is None:
        return ""
    return path.read_text(encoding="utf-8", errors="replace")


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Terminate and wait; kill what does not stop within 10 s. Safe to call twice."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
