"""Deployment check appframework.W006 (docs/checks.md): the record of ended sessions and
revoked tokens sits where it can be evicted — then a kept cookie or a revoked token
works again.

It fires when ``AUTH["REVOCATION_CACHE"]`` is ``RATE_LIMIT["CACHE"]`` (the throttle writes
a key per attempt) or a Memcached backend (only the ``BACKEND`` string is read: no server
is needed), and is quiet for an alias of its own on a non-evicting cache.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from appframework.checks import check_revocation_cache
from tests.auth.test_revocation_async_caches import (  # noqa: F401 (an autouse fixture)
    _caches_initialized_again_after_override,
)

from .test_demo_checks import (
    DB_CACHE,
    DOCS,
    LOCMEM,
    _app,
    _assert_documented,
    _caches,
    _deploy_ids,
    _ids,
)

# _deploy_ids() runs every deployment check, blog.E001's query included.
pytestmark = pytest.mark.django_db

W006 = "appframework.W006"
PYMEMCACHE = "django.core.cache.backends.memcached.PyMemcacheCache"
PYLIBMC = "django.core.cache.backends.memcached.PyLibMCCache"


def test_w006_is_a_deployment_check_only() -> None:
    assert check_revocation_cache in checks.registry.registry.get_checks(
        include_deployment_checks=True
    )
    assert check_revocation_cache not in checks.registry.registry.get_checks()


def test_w006_is_documented_in_docs_checks_md() -> None:
    assert '<a id="appframework-W006"></a>`appframework.W006`' in DOCS


def test_w006_fires_when_revocations_share_the_throttles_alias() -> None:
    with (
        _caches(default=LOCMEM, shared=DB_CACHE),
        _app(AUTH={"REVOCATION_CACHE": "shared"}, RATE_LIMIT={"CACHE": "shared"}),
    ):
        messages = check_revocation_cache()
        assert W006 in _deploy_ids()
    assert _ids(messages) == [W006]
    assert isinstance(messages[0], checks.Warning)
    assert "'shared'" in messages[0].msg
    assert "login throttle" in messages[0].msg
    assert "Memcached" not in messages[0].msg
    _assert_documented(messages)


@pytest.mark.parametrize("backend", [PYMEMCACHE, PYLIBMC], ids=["pymemcache", "pylibmc"])
def test_w006_fires_for_a_memcached_revocation_cache(backend: str) -> None:
    with (
        _caches(default=LOCMEM, revoked=backend),
        _app(AUTH={"REVOCATION_CACHE": "revoked"}, RATE_LIMIT={"CACHE": "default"}),
    ):
        # Only the BACKEND string is read (no pymemcache/pylibmc, no server); the full
        # deploy run is left out: Django's own cache check instantiates every cache.
        messages = check_revocation_cache()
    assert _ids(messages) == [W006]
    assert "'revoked'" in messages[0].msg
    assert "Memcached evicts" in messages[0].msg
    assert "login throttle" not in messages[0].msg
    _assert_documented(messages)


def test_w006_names_both_reasons_for_memcached_shared_with_the_throttle() -> None:
    with (
        _caches(default=PYMEMCACHE),
        _app(AUTH={"REVOCATION_CACHE": "default"}, RATE_LIMIT={"CACHE": "default"}),
    ):
        messages = check_revocation_cache()
    assert _ids(messages) == [W006]  # one warning, not one per reason
    assert "login throttle" in messages[0].msg
    assert "Memcached evicts" in messages[0].msg


def test_w006_hint_says_how_to_fix_it_and_links_the_docs() -> None:
    with _caches(default=PYMEMCACHE), _app(AUTH={"REVOCATION_CACHE": "default"}):
        (message,) = check_revocation_cache()
    assert message.hint is not None
    assert "REVOCATION_CACHE" in message.hint
    assert "database store" in message.hint
    assert "docs/checks.md#appframework-W006" in message.hint


@pytest.mark.parametrize(
    "caches",
    [
        {"default": LOCMEM, "revoked": DB_CACHE},
        {"default": PYMEMCACHE, "revoked": DB_CACHE},  # Memcached for the throttle only
    ],
    ids=["locmem-throttle", "memcached-throttle"],
)
def test_w006_quiet_for_a_separate_database_cache_alias(caches: dict[str, str]) -> None:
    with (
        _caches(**caches),
        _app(AUTH={"REVOCATION_CACHE": "revoked"}, RATE_LIMIT={"CACHE": "default"}),
    ):
        assert check_revocation_cache() == []


def test_w006_quiet_for_the_demo_settings() -> None:
    """The demo keeps revocations on their own ``revocations`` alias (locmem: W005's
    business, not W006's)."""
    assert check_revocation_cache() == []
    assert W006 not in _deploy_ids()


def test_w006_quiet_without_the_auth_app(settings: Any) -> None:
    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with (
        override_settings(INSTALLED_APPS=apps),
        _caches(default=PYMEMCACHE),
        _app(AUTH={"REVOCATION_CACHE": "default"}),
    ):
        assert check_revocation_cache() == []


def test_manage_py_check_deploy_reports_w006() -> None:
    with (
        _caches(default=LOCMEM, shared=DB_CACHE),
        _app(AUTH={"REVOCATION_CACHE": "shared"}, RATE_LIMIT={"CACHE": "shared"}),
        override_settings(DEBUG=False),
    ):
        out = io.StringIO()
        try:
            call_command("check", deploy=True, fail_level="ERROR", stdout=out, stderr=out)
        except SystemCheckError as failed:  # other deploy errors (a demo key) may be present
            out.write(str(failed))
    assert W006 in out.getvalue()


def test_w006_quiet_for_a_separate_database_cache_alias_in_a_full_deploy_run() -> None:
    with (
        _caches(default=LOCMEM, revoked=DB_CACHE),
        _app(AUTH={"REVOCATION_CACHE": "revoked"}, RATE_LIMIT={"CACHE": "default"}),
    ):
        assert W006 not in _deploy_ids()
