"""Fixtures of the webhook tests: a receiver on 127.0.0.1, and settings that let the
deliveries reach it (the private-address guard allows 127.0.0.0/8 only here)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from .receiver import Receiver, running_receiver


def webhook_settings(**values: Any) -> Any:
    """``override_settings`` of APPFRAMEWORK["WEBHOOKS"] merged over the current one."""
    base = dict(settings.APPFRAMEWORK)
    base["WEBHOOKS"] = {**base.get("WEBHOOKS", {}), **values}
    return override_settings(APPFRAMEWORK=base)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from running_receiver()


@pytest.fixture(scope="module")
def _module_listener() -> Iterator[Receiver]:
    yield from running_receiver()


@pytest.fixture
def module_receiver(_module_listener: Receiver) -> Receiver:
    """One listener for the whole module (stopping one takes half a second), emptied
    and reset to answering 200 at once before each test."""
    with _module_listener.lock:
        _module_listener.hits.clear()
    _module_listener.respond = lambda n: (200, {}, b"ok")
    _module_listener.delay = 0.0
    return _module_listener


@pytest.fixture
def loopback_allowed() -> Iterator[None]:
    """Deliveries may reach 127.0.0.1 (the test receiver); fast retries, short timeouts."""
    with webhook_settings(
        ALLOWED_NETWORKS=["127.0.0.0/8"],
        BACKOFF_BASE=0.01,
        BACKOFF_CAP=0.05,
        CONNECT_TIMEOUT=1.0,
        READ_TIMEOUT=1.0,
        DEADLINE=3.0,
    ):
        yield
