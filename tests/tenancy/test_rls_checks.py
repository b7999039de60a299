"""System checks of ``TENANCY["ROW_LEVEL_SECURITY"]``: E007 for a value that is not a list
of PostgreSQL aliases; with ``--database`` (and so during ``migrate``), W003 when the
application's role skips every policy and W004 for a tenant model's table with no forced
policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.core import checks

from appframework_tenancy.checks import (
    check_row_level_security,
    check_row_level_security_database,
)
from tests.tenancy.conftest import row_level_security
from tests.tenancy.test_postgres_rls import APP_ROLE, enable_policy, execute, grant_app_role

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages]


def documented(message: checks.CheckMessage) -> bool:
    anchor = message.id.replace(".", "-")
    return message.hint.endswith(f"See docs/checks.md#{anchor}.") and (
        f'<a id="{anchor}"></a>' in DOCS.read_text(encoding="utf-8")
    )


def test_both_checks_are_registered_the_second_only_with_the_database_tag() -> None:
    registry = checks.registry.registry
    assert check_row_level_security in registry.get_checks()
    assert check_row_level_security_database in registry.get_checks()
    assert "database" in check_row_level_security_database.tags  # type: ignore[attr-defined]
    assert "database" not in getattr(check_row_level_security, "tags", ())


def test_an_empty_list_is_fine() -> None:
    with row_level_security([]):
        assert check_row_level_security() == []


@pytest.mark.parametrize("value", ["default", None, [1]], ids=["a string", "None", "not names"])
def test_a_value_that_is_not_a_list_of_aliases_is_e007(value: Any) -> None:
    with row_level_security(value):
        (message,) = check_row_level_security()
    assert message.id == "appframework_tenancy.E007"
    assert "must be a list of database aliases" in message.msg
    assert documented(message)


def test_an_alias_missing_from_databases_is_e007() -> None:
    with row_level_security(["reports"]):
        (message,) = check_row_level_security()
    assert message.id == "appframework_tenancy.E007"
    assert "'reports'" in message.msg
    assert documented(message)


def test_an_sqlite_database_is_e007(monkeypatch: pytest.MonkeyPatch) -> None:
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    monkeypatch.setitem(settings.DATABASES, "local", sqlite)
    with row_level_security(["local"]):
        (message,) = check_row_level_security()
    assert message.id == "appframework_tenancy.E007"
    assert "needs PostgreSQL" in message.msg


def test_without_the_database_option_the_database_check_says_nothing() -> None:
    with row_level_security(["default"]):
        assert check_row_level_security_database(databases=None) == []


# -- on PostgreSQL, with --database ------------------------------------------------------------
def lab_and_blog() -> list[Any]:
    return [apps.get_app_config("tenancy_lab"), apps.get_app_config("blog")]


@pytest.mark.postgresql
@pytest.mark.django_db
def test_a_superuser_role_is_w003() -> None:
    with row_level_security(["default"]):
        messages = check_row_level_security_database(
            app_configs=lab_and_blog(), databases=["default"]
        )
    (w003,) = [m for m in messages if m.id == "appframework_tenancy.W003"]
    assert "superuser or has BYPASSRLS" in w003.msg
    assert documented(w003)


@pytest.mark.postgresql
@pytest.mark.django_db
def test_a_tenant_table_without_a_policy_is_w004_and_one_with_the_policy_is_not() -> None:
    """blog_post has its policy from the demo's migration; the lab's post table has none
    until it gets one."""
    with row_level_security(["default"]):
        before = check_row_level_security_database(
            app_configs=lab_and_blog(), databases=["default"]
        )
        w004 = [m for m in before if m.id == "appframework_tenancy.W004"]
        labels = {m.obj._meta.label for m in w004}
        assert "tenancy_lab.Post" in labels
        assert "blog.Post" not in labels
        assert all(documented(m) for m in w004)
        enable_policy()
        after = check_row_level_security_database(app_configs=lab_and_blog(), databases=["default"])
    assert "tenancy_lab.Post" not in {
        m.obj._meta.label for m in after if m.id == "appframework_tenancy.W004"
    }


@pytest.mark.postgresql
@pytest.mark.django_db
def test_an_ordinary_role_is_not_w003() -> None:
    grant_app_role()
    execute(f"SET LOCAL ROLE {APP_ROLE}")
    try:
        with row_level_security(["default"]):
            messages = check_row_level_security_database(
                app_configs=lab_and_blog(), databases=["default"]
            )
    finally:
        execute("RESET ROLE")
    assert "appframework_tenancy.W003" not in ids(messages)


@pytest.mark.postgresql
@pytest.mark.django_db
def test_a_tenant_model_whose_table_does_not_exist_yet_is_not_w004() -> None:
    """migrate runs the checks before it migrates: a table it is about to create (and
    put the policy on) is not reported."""
    from django.test.utils import isolate_apps

    from appframework_tenancy import TenantModel

    with isolate_apps("tests.tenancy.lab") as registry:

        class Unmigrated(TenantModel):
            class Meta:
                app_label = "tenancy_lab"

        with row_level_security(["default"]):
            messages = check_row_level_security_database(
                app_configs=registry.get_app_configs(), databases=["default"]
            )
    assert "appframework_tenancy.W004" not in ids(messages)
