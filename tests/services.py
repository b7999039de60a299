"""Where the tests find the machine's shared services.

``REDIS_URL`` names the Redis server (default ``redis://127.0.0.1:6379``); each suite that
flushes what it wrote uses a database number of its own on it, so two suites never
flush each other's keys. Point ``REDIS_URL`` at another server to run a second copy of
the test command beside the first.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redis_url"]


def redis_url(db: int) -> str:
    """The test Redis server at database ``db``."""
    parts = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379")
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, ""))
