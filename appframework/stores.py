"""Where the suite's shared records live: the one resolution of the five settings that
name them (``AUTH["REVOCATION_CACHE"]``, ``RATE_LIMIT["CACHE"]``,
``SAML["REPLAY_CACHE"]``, ``PASSKEYS["CHALLENGE_CACHE"]``, ``OAUTH["STATE_CACHE"]``).

A record that only one process holds is wrong as soon as a second process serves the
site: a replayed SAML response or a spent OAuth state is accepted by the other worker,
an ended session works there, each worker counts login attempts on its own. So ``AUTO``
(the default of all five) is Django's ``"default"`` cache only when every process
shares it (Redis, Memcached, Django's database cache, ...), and otherwise the suite's
database store (``appframework.database_store``): a new project, whose ``"default"``
is Django's per-process ``LocMemCache``, is correct with any number of workers, and a
project with Redis keeps its fast path (nothing touches the database). An alias named
explicitly is used as configured, even a per-process one (``appframework.W005`` warns
under ``check --deploy``).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.cache import BaseCache, caches
from django.utils.module_loading import import_string

from .conf import AUTO, derived_setting
from .database_store import DatabaseStore

__all__ = [
    "DUMMY_BACKEND",
    "LOCMEM_BACKEND",
    "PROCESS_LOCAL_BACKENDS",
    "auto_alias",
    "backend_class",
    "database_store",
    "is_process_local",
    "shared_store",
]

LOCMEM_BACKEND = "django.core.cache.backends.locmem.LocMemCache"
DUMMY_BACKEND = "django.core.cache.backends.dummy.DummyCache"
#: Backends whose entries exist in one process only (subclasses included).
PROCESS_LOCAL_BACKENDS = (LOCMEM_BACKEND, DUMMY_BACKEND)

_DATABASE_STORE = DatabaseStore()


def database_store() -> DatabaseStore:
    """The suite's own instance of the database store (thread-safe: it keeps no
    connection, each call uses the thread's own)."""
    return _DATABASE_STORE


def backend_class(alias: str) -> type | None:
    """The class of cache ``alias``'s BACKEND; None for an unknown alias or a path that
    does not import (that fails loudly at first use, and is not this module's business)."""
    config = (getattr(settings, "CACHES", None) or {}).get(alias)
    path = config.get("BACKEND", "") if isinstance(config, dict) else ""
    try:
        cls = import_string(path) if path else None
    except ImportError:
        return None
    return cls if isinstance(cls, type) else None


def is_process_local(alias: str) -> bool:
    """Whether cache ``alias`` keeps its entries in the process that wrote them:
    ``LocMemCache`` or ``DummyCache`` (which keeps nothing at all), or a subclass."""
    cls = backend_class(alias)
    if cls is None:
        return False
    local = tuple(import_string(path) for path in PROCESS_LOCAL_BACKENDS)
    return issubclass(cls, local)


@derived_setting
def auto_alias() -> str | None:
    """What ``AUTO`` means with the current settings: ``"default"`` when that cache is
    shared between processes, or when the store's table does not exist (the
    ``appframework.auth`` app is not installed); None for the database store."""
    if not is_process_local("default") or not apps.is_installed("appframework.auth"):
        return "default"
    return None


def shared_store(value: Any) -> BaseCache:
    """The cache a setting's value names: an alias of ``CACHES`` as configured, or for
    ``AUTO`` the ``"default"`` cache when it is shared, else the database store."""
    if value is AUTO:
        alias = auto_alias()
        if alias is None:
            return _DATABASE_STORE
        value = alias
    # caches[...] is per thread (Django's rule for cache clients): not kept here.
    return caches[str(value)]
