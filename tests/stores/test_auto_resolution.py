"""``AUTO``, the default of the five store settings: Django's ``default`` cache when every
process shares it, else the suite's database store; an alias named is used as configured.

The test settings' ``default`` is a LocMemCache and their ``AUTH["REVOCATION_CACHE"]``
names the locmem ``revocations`` alias; the other four settings are left at ``AUTO``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.test import RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext

from appframework.auth.models import SharedRecord
from appframework.auth.revocation import revocation_cache, revoke_session
from appframework.checks import check_revocation_cache, check_shared_caches
from appframework.conf import AUTO, DEFAULTS, app_settings
from appframework.database_store import DatabaseStore
from appframework.one_use import OneUseStore
from appframework.ratelimit import RateLimiter
from appframework.saml import store as saml_store
from appframework.saml.checks import check_replay_cache
from appframework.stores import auto_alias, database_store, is_process_local, shared_store
from tests.conftest import skip_or_fail_on_ci
from tests.services import redis_url

LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
REDIS_URL = redis_url(15)
STORE_SETTINGS = [
    ("AUTH", "REVOCATION_CACHE"),
    ("RATE_LIMIT", "CACHE"),
    ("SAML", "REPLAY_CACHE"),
    ("PASSKEYS", "CHALLENGE_CACHE"),
    ("OAUTH", "STATE_CACHE"),
]


class ProjectLocMem(LocMemCache):
    """A project's own subclass is still per process."""


def default_cache(backend: str, **extra: Any) -> Any:
    """``CACHES`` with ``default`` on ``backend`` (the other aliases kept)."""
    return override_settings(CACHES={**settings.CACHES, "default": {"BACKEND": backend, **extra}})


def without_the_auth_app() -> list[str]:
    return [app for app in settings.INSTALLED_APPS if app != "appframework.auth"]


def app_with(**sections: dict[str, Any]) -> Any:
    app = {section: dict(values) for section, values in settings.APPFRAMEWORK.items()}
    for section, values in sections.items():
        app.setdefault(section, {}).update(values)
    return override_settings(APPFRAMEWORK=app)


@pytest.mark.parametrize(("section", "key"), STORE_SETTINGS)
def test_every_store_setting_defaults_to_auto(section: str, key: str) -> None:
    assert DEFAULTS[section][key] is AUTO


# -- what AUTO resolves to ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "backend",
    [
        LOCMEM,
        f"{__name__}.ProjectLocMem",
        "django.core.cache.backends.dummy.DummyCache",
    ],
)
def test_auto_is_the_database_store_when_the_default_cache_is_per_process(backend: str) -> None:
    with default_cache(backend):
        assert is_process_local("default")
        assert auto_alias() is None
        assert shared_store(AUTO) is database_store()


@pytest.mark.parametrize(
    "backend",
    [
        "django.core.cache.backends.redis.RedisCache",
        "django.core.cache.backends.db.DatabaseCache",
        "django.core.cache.backends.memcached.PyMemcacheCache",
        "appframework.database_store.DatabaseStore",
    ],
)
def test_auto_is_the_default_cache_when_every_process_shares_it(backend: str) -> None:
    with default_cache(backend, LOCATION="redis://127.0.0.1:1/0"):
        assert auto_alias() == "default"


def test_auto_is_the_default_cache_without_the_auth_app_whose_migration_makes_the_table() -> None:
    with override_settings(INSTALLED_APPS=without_the_auth_app()):
        assert auto_alias() == "default"


def test_an_alias_named_is_used_as_configured_even_a_per_process_one() -> None:
    assert settings.APPFRAMEWORK["AUTH"]["REVOCATION_CACHE"] == "revocations"
    assert revocation_cache() is caches["revocations"]
    assert shared_store("default") is caches["default"]
    assert isinstance(caches["default"], LocMemCache)


def test_the_answer_follows_a_change_of_caches() -> None:
    assert shared_store(AUTO) is database_store()
    with default_cache("django.core.cache.backends.db.DatabaseCache", LOCATION="t"):
        assert shared_store(AUTO) is caches["default"]
    assert shared_store(AUTO) is database_store()


# -- every record goes through it -----------------------------------------------------------------
@pytest.mark.django_db
def test_with_a_per_process_default_every_record_lands_in_the_database_store() -> None:
    with app_with(AUTH={"REVOCATION_CACHE": AUTO}):
        assert revocation_cache() is database_store()
        revoke_session("nonce-1")
        assert RateLimiter().cache is database_store()
        RateLimiter(prefix="limit").hit("someone", 5, 60)
        saml_store.remember_request("request-1", "test", None)
        assert saml_store.remember_assertion("test", "assertion-1", None) is True
        one_use = OneUseStore(
            "_test_one_use",
            "test:spent:",
            ttl=lambda: 60,
            cache_alias=lambda: app_settings.OAUTH.STATE_CACHE,
            missing_session="needs a session",
        )
        request = RequestFactory().get("/")
        request.session = {}  # type: ignore[attr-defined]
        one_use.consume(request, one_use.remember(request, "value-1", {}))
    keys = list(SharedRecord.objects.values_list("key", flat=True))
    for part in ("revoked:session:", "limit:", "saml-request:", "saml-assertion:", "test:spent:"):
        assert any(part in key for key in keys), (part, keys)
    assert not caches["default"]._cache  # type: ignore[attr-defined]  # nothing in locmem


@pytest.fixture
def redis_default() -> Iterator[None]:
    """``default`` on Redis (db 15, a key prefix of this test's own, deleted after)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        skip_or_fail_on_ci(f"Redis unreachable at {REDIS_URL} ({exc})")
    prefix = f"auto-test-{uuid.uuid4().hex}"
    try:
        with default_cache(
            "django.core.cache.backends.redis.RedisCache", LOCATION=REDIS_URL, KEY_PREFIX=prefix
        ):
            yield
            caches["default"].close()
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.mark.django_db
def test_with_redis_as_default_nothing_touches_the_database(redis_default: None) -> None:
    from django.db import connection

    with app_with(AUTH={"REVOCATION_CACHE": AUTO}), CaptureQueriesContext(connection) as queries:
        assert revocation_cache() is caches["default"]
        revoke_session("nonce-1")
        result = RateLimiter(prefix="limit").hit("someone", 5, 60)
        saml_store.remember_request("request-1", "test", None)
        assert saml_store.pop_request("request-1") == {"p": "test", "n": None}
        assert saml_store.remember_assertion("test", "assertion-1", None) is True
        assert saml_store.remember_assertion("test", "assertion-1", None) is False
    assert result.count == 1
    assert queries.captured_queries == []
    assert not SharedRecord.objects.exists()


# -- the checks -----------------------------------------------------------------------------------
def test_no_cache_warning_when_auto_resolves_to_the_database_store() -> None:
    with app_with(AUTH={"REVOCATION_CACHE": AUTO}):
        assert check_shared_caches() == []
        assert check_revocation_cache() == []
        assert check_replay_cache() == []


def test_w005_without_the_auth_app_auto_stays_on_a_per_process_default() -> None:
    with override_settings(INSTALLED_APPS=without_the_auth_app()):
        (message,) = check_shared_caches()
    assert message.id == "appframework.W005"
    assert "Cache 'default'" in message.msg and "RATE_LIMIT['CACHE'] (rate limits)" in message.msg


def test_w005_says_a_dummy_cache_keeps_nothing() -> None:
    with (
        default_cache("django.core.cache.backends.dummy.DummyCache"),
        app_with(RATE_LIMIT={"CACHE": "default"}),
    ):
        messages = check_shared_caches()
    (message,) = [m for m in messages if "Cache 'default'" in m.msg]
    assert "DummyCache, which keeps nothing at all" in message.msg


def test_w006_still_warns_when_auto_puts_revocations_and_the_throttle_on_one_shared_cache() -> None:
    with (
        default_cache("django.core.cache.backends.redis.RedisCache", LOCATION=REDIS_URL),
        app_with(AUTH={"REVOCATION_CACHE": AUTO}),
    ):
        (message,) = check_revocation_cache()
    assert message.id == "appframework.W006"
    assert "login throttle's cache" in message.msg


def test_the_database_store_is_a_cache_backend_a_project_may_name() -> None:
    with override_settings(
        CACHES={
            **settings.CACHES,
            "records": {"BACKEND": "appframework.database_store.DatabaseStore"},
        }
    ):
        assert isinstance(caches["records"], DatabaseStore)
        assert not is_process_local("records")
