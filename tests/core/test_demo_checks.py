"""Deployment checks appframework.E007, E008, W005 and the demo's blog.E001/E002 (docs/checks.md).

Each is shown firing and staying quiet, directly and through Django's registry: they run
under ``manage.py check --deploy`` only, never at a plain ``check``/``runserver``.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.conf import settings
from django.core import checks
from django.core.cache.backends.locmem import LocMemCache
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import OperationalError
from django.test import override_settings

from appframework.checks import (
    check_demo_secret_key,
    check_session_cookie_secure,
    check_shared_caches,
)
from testproject.blog.checks import check_demo_secret_key_file, check_no_seeded_demo_user
from testproject.blog.management.commands.seed_demo import DEMO_EMAIL, SEEDED_EMAILS
from testproject.blog.models import User
from tests.system_checks import run_checks

# blog.E001 queries the database whenever deployment checks run (as `check --deploy` does).
pytestmark = pytest.mark.django_db

OLD_DEMO_KEY = "demo-only-insecure-key-do-not-deploy-0123456789abcdef"
GOOD_KEY = "a-long-random-production-key-0123456789-abcdefghijklmnopqrstuvwxyz"
LOCMEM = "django.core.cache.backends.locmem.LocMemCache"
DB_CACHE = "django.core.cache.backends.db.DatabaseCache"
SESSION = "django.contrib.sessions.middleware.SessionMiddleware"
ERRORS = "appframework.middleware.ErrorMiddleware"


class MyLocMem(LocMemCache):
    """A project's own subclass is still per process."""


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages]


def _deploy_ids() -> list[str]:
    return _ids(run_checks(include_deployment_checks=True))


def _assert_documented(messages: list[checks.CheckMessage]) -> None:
    for message in messages:
        assert message.msg
        anchor = message.id.replace(".", "-")
        assert message.hint and f"docs/checks.md#{anchor}" in message.hint, message
        assert f'<a id="{anchor}"></a>' in DOCS


DOCS = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text()


def _app(**sections: dict[str, Any]) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    for section, values in sections.items():
        app.setdefault(section, {}).update(values)
    return override_settings(APPFRAMEWORK=app)


def _caches(**aliases: str) -> Any:
    return override_settings(CACHES={alias: {"BACKEND": b} for alias, b in aliases.items()})


# -- registration ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "check",
    [
        check_demo_secret_key,
        check_session_cookie_secure,
        check_shared_caches,
        check_no_seeded_demo_user,
        check_demo_secret_key_file,
    ],
)
def test_registered_as_deployment_checks_only(check: Any) -> None:
    assert check in checks.registry.registry.get_checks(include_deployment_checks=True)
    assert check not in checks.registry.registry.get_checks()


def test_a_plain_check_run_reports_none_of_them() -> None:
    with override_settings(SECRET_KEY=OLD_DEMO_KEY, DEBUG=False, SESSION_COOKIE_SECURE=False):
        ids = _ids(run_checks())
    assert not {"appframework.E007", "appframework.E008", "appframework.W005"} & set(ids)


# -- E007: a known key ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [OLD_DEMO_KEY, "django-insecure-w#0pl6x@3m!kq2$z5hd^u&8)xv1(y+o_n4s7e9r*tb-cfgj"],
    ids=["old-demo-constant", "startproject-prefix"],
)
def test_e007_published_keys(key: str) -> None:
    with override_settings(SECRET_KEY=key):
        messages = check_demo_secret_key()
        assert "appframework.E007" in _deploy_ids()
    assert _ids(messages) == ["appframework.E007"]
    assert isinstance(messages[0], checks.Error)
    assert key not in messages[0].msg  # the report does not spread the key further
    _assert_documented(messages)


def test_blog_e002_the_demo_file_key(tmp_path: Path) -> None:
    key_file = tmp_path / ".demo-secret-key"
    key_file.write_text("per-machine-random-key-0123456789-abcdefghijklmnopqrstuvwxyz\n")
    with override_settings(
        DEMO_SECRET_KEY_FILE=key_file,
        SECRET_KEY="per-machine-random-key-0123456789-abcdefghijklmnopqrstuvwxyz",
    ):
        messages = check_demo_secret_key_file()
        assert check_demo_secret_key() == []  # not a published key: the library's E007 is quiet
    assert _ids(messages) == ["blog.E002"]
    assert str(key_file) in messages[0].msg
    _assert_documented(messages)


def test_e007_and_blog_e002_quiet_for_a_key_of_its_own(tmp_path: Path) -> None:
    key_file = tmp_path / ".demo-secret-key"
    key_file.write_text("the-demo-key-on-this-machine-0123456789-abcdefghijklmnopqrstuvw\n")
    with override_settings(DEMO_SECRET_KEY_FILE=key_file, SECRET_KEY=GOOD_KEY):
        assert check_demo_secret_key() == []
        assert check_demo_secret_key_file() == []
        assert not {"appframework.E007", "blog.E002"} & set(_deploy_ids())


@pytest.mark.parametrize("where", ["missing-file", "no-setting", "empty-file"])
def test_blog_e002_quiet_without_a_readable_demo_file(tmp_path: Path, where: str) -> None:
    key_file = tmp_path / ".demo-secret-key"
    if where == "empty-file":
        key_file.write_text("")
    with override_settings(SECRET_KEY=GOOD_KEY, DEMO_SECRET_KEY_FILE=key_file):
        if where == "no-setting":
            del settings.DEMO_SECRET_KEY_FILE
        assert check_demo_secret_key_file() == []


def test_e007_leaves_a_missing_key_to_e001() -> None:
    with override_settings(SECRET_KEY=""):
        assert check_demo_secret_key() == []


# -- E008: session cookie over plain HTTP --------------------------------------------------------
def test_e008_insecure_session_cookie_in_production() -> None:
    with override_settings(DEBUG=False, SESSION_COOKIE_SECURE=False):
        messages = check_session_cookie_secure()
        assert "appframework.E008" in _deploy_ids()
    assert _ids(messages) == ["appframework.E008"]
    assert isinstance(messages[0], checks.Error)
    assert "SESSION_HTTPS_ONLY" in messages[0].hint
    _assert_documented(messages)


def test_e008_quiet_with_secure_cookies() -> None:
    with override_settings(DEBUG=False, SESSION_COOKIE_SECURE=True):
        assert check_session_cookie_secure() == []
        assert "appframework.E008" not in _deploy_ids()


def test_e008_session_https_only_is_what_turns_it_off() -> None:
    from appframework.env import apply_environment

    namespace = apply_environment({}, {"SESSION_HTTPS_ONLY": "true"})
    with override_settings(DEBUG=False, SESSION_COOKIE_SECURE=namespace["SESSION_COOKIE_SECURE"]):
        assert check_session_cookie_secure() == []


def test_e008_quiet_in_debug() -> None:
    with override_settings(DEBUG=True, SESSION_COOKIE_SECURE=False):
        assert check_session_cookie_secure() == []


def test_e008_quiet_without_sessions() -> None:
    apps = [a for a in settings.INSTALLED_APPS if a != "appframework.auth"]
    with override_settings(
        DEBUG=False, SESSION_COOKIE_SECURE=False, INSTALLED_APPS=apps, MIDDLEWARE=[ERRORS]
    ):
        assert check_session_cookie_secure() == []
    with override_settings(
        DEBUG=False, SESSION_COOKIE_SECURE=False, INSTALLED_APPS=apps, MIDDLEWARE=[SESSION]
    ):
        assert _ids(check_session_cookie_secure()) == ["appframework.E008"]


# -- W005: per-process caches ------------------------------------------------------------------
def test_w005_one_locmem_alias_for_both_uses() -> None:
    with (
        _caches(default=LOCMEM),
        _app(AUTH={"REVOCATION_CACHE": "default"}, RATE_LIMIT={"CACHE": "default"}),
    ):
        messages = check_shared_caches()
        assert "appframework.W005" in _deploy_ids()
    assert _ids(messages) == ["appframework.W005"]
    assert isinstance(messages[0], checks.Warning)
    assert "'default'" in messages[0].msg
    assert "REVOCATION_CACHE" in messages[0].msg
    assert "RATE_LIMIT['CACHE']" in messages[0].msg
    _assert_documented(messages)


def test_w005_names_only_the_alias_on_locmem() -> None:
    with _caches(default=DB_CACHE, limits=LOCMEM), _app(RATE_LIMIT={"CACHE": "limits"}):
        messages = check_shared_caches()
    assert _ids(messages) == ["appframework.W005"]
    assert "'limits'" in messages[0].msg
    assert "RATE_LIMIT['CACHE']" in messages[0].msg
    assert "REVOCATION_CACHE" not in messages[0].msg


def test_w005_revocation_cache_alone() -> None:
    with _caches(default=DB_CACHE, revoked=LOCMEM), _app(AUTH={"REVOCATION_CACHE": "revoked"}):
        messages = check_shared_caches()
    assert _ids(messages) == ["appframework.W005"]
    assert "'revoked'" in messages[0].msg
    assert "RATE_LIMIT" not in messages[0].msg


def test_w005_a_locmem_subclass_counts() -> None:
    with _caches(default=f"{__name__}.MyLocMem"), _app(RATE_LIMIT={"CACHE": "default"}):
        assert _ids(check_shared_caches()) == ["appframework.W005"]


def test_w005_quiet_on_shared_caches() -> None:
    with _caches(default=DB_CACHE, other=LOCMEM):
        assert check_shared_caches() == []
        assert "appframework.W005" not in _deploy_ids()


def test_w005_quiet_for_an_alias_not_in_caches() -> None:
    with _caches(default=DB_CACHE), _app(RATE_LIMIT={"CACHE": "nowhere"}):
        assert check_shared_caches() == []


# -- blog.E001: the seeded demo user -----------------------------------------------------------
def test_blog_e001_quiet_without_the_demo_user(user: Any) -> None:
    assert check_no_seeded_demo_user() == []
    assert "blog.E001" not in _deploy_ids()


def test_blog_e001_after_seed_demo_names_every_seeded_account() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    messages = check_no_seeded_demo_user()
    assert _ids(messages) == ["blog.E001"]
    assert isinstance(messages[0], checks.Error)
    assert DEMO_EMAIL in SEEDED_EMAILS
    for email in SEEDED_EMAILS:
        assert email in messages[0].msg
    _assert_documented(messages)
    assert "blog.E001" in _deploy_ids()


def test_blog_e001_still_fires_while_one_seeded_account_is_left() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    User.objects.filter(email__in=SEEDED_EMAILS).exclude(email="reader@example.com").delete()
    messages = check_no_seeded_demo_user()
    assert _ids(messages) == ["blog.E001"]
    assert "reader@example.com" in messages[0].msg


def test_blog_e001_quiet_once_the_seeded_accounts_are_deleted() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    User.objects.filter(email__in=SEEDED_EMAILS).delete()
    assert check_no_seeded_demo_user() == []


def test_blog_e001_passes_when_the_table_does_not_exist() -> None:
    # What an un-migrated (or unreachable) database answers; no test database needed.
    broken = mock.patch.object(
        User.objects, "filter", side_effect=OperationalError("no such table: blog_user")
    )
    with broken:
        assert check_no_seeded_demo_user() == []


# -- end to end: manage.py check --deploy ------------------------------------------------------
def test_manage_py_check_deploy_refuses_the_demo_configuration(tmp_path: Path) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    key_file = tmp_path / ".demo-secret-key"
    key_file.write_text("demo-key-of-this-machine-0123456789-abcdefghijklmnopqrstuvwxyz")
    with (
        override_settings(
            SECRET_KEY=key_file.read_text(),
            DEMO_SECRET_KEY_FILE=key_file,
            DEBUG=False,
            SESSION_COOKIE_SECURE=False,
        ),
        pytest.raises(SystemCheckError) as raised,
    ):
        call_command("check", deploy=True, stdout=io.StringIO())
    report = str(raised.value)
    for id_ in ("blog.E002", "appframework.E008", "appframework.W005", "blog.E001"):
        assert id_ in report
