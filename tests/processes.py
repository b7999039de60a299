"""Helpers for the servers tests start as separate processes (the demo, the local
OpenID provider): a free port, the server's log, and a stop that always ends it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from testproject.prepare import free_port

__all__ = ["free_port", "read_log", "stop_process"]


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
