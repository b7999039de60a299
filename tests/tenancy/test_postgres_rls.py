"""PostgreSQL row-level security behind the scoped manager: with the policy of
``rls_policy_sql`` on a table and the application connected as a role that is neither a
superuser nor ``BYPASSRLS``, raw SQL inside ``rls_tenant()`` sees and writes only the
current tenant's rows, and sees nothing when no tenant is selected (fail closed).

Everything runs inside the test's transaction, which is rolled back: the policy, the
role and the grants never outlive the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import ProgrammingError, connection, transaction

from appframework_tenancy import all_tenants, as_tenant
from appframework_tenancy.postgres import SETTING, carry_tenant, rls_policy_sql, rls_tenant
from tests.tenancy.lab.models import Post

pytestmark = [
    pytest.mark.postgresql,
    pytest.mark.django_db,
]

A, B = 1, 2
TABLE = "tenancy_lab_post"
APP_ROLE = "lab_rls_app"


def execute(sql: str, params: Any = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def titles() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT title FROM {TABLE} ORDER BY title")
        return [row[0] for row in cursor.fetchall()]


def insert(title: str, tenant: int) -> None:
    execute(f"INSERT INTO {TABLE} (title, tenant_id) VALUES (%s, %s)", [title, tenant])


def enable_policy() -> None:
    # ALTER TABLE refuses to run while rows written earlier in this transaction still
    # have deferred foreign-key checks pending: run them now, then defer again.
    execute("SET CONSTRAINTS ALL IMMEDIATE")
    for statement in rls_policy_sql(TABLE):
        execute(statement)
    execute("SET CONSTRAINTS ALL DEFERRED")


@contextmanager
def without_carry_tenant() -> Iterator[None]:
    """The connection without the execute wrapper that ``ROW_LEVEL_SECURITY`` installs
    (the demo's settings turn it on for PostgreSQL): these tests are about ``rls_tenant()``
    alone."""
    present = carry_tenant in connection.execute_wrappers
    if present:
        connection.execute_wrappers.remove(carry_tenant)
    try:
        yield
    finally:
        if present:
            connection.execute_wrappers.insert(0, carry_tenant)


def grant_app_role(role: str = APP_ROLE) -> None:
    execute(
        "DO $$ BEGIN "
        f"IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') "
        f"THEN CREATE ROLE {role} NOLOGIN; END IF; END $$"
    )
    execute(f"GRANT USAGE ON SCHEMA public TO {role}")
    execute(f"GRANT SELECT, INSERT ON {TABLE} TO {role}")


@pytest.fixture
def app_role(two_tenants: dict[str, Any]) -> Iterator[None]:
    """The policy on the lab's post table, and the connection switched (for this
    transaction only) to a plain role, as an application's database user would be."""
    assert connection.vendor == "postgresql"
    assert connection.in_atomic_block  # the test transaction, rolled back afterwards
    with without_carry_tenant():
        # The fixtures' rows were written through the wrapper, which left their last
        # tenant in the session (until the test's rollback): start from none.
        execute("SELECT set_config(%s, '', false)", [SETTING])
        enable_policy()
        grant_app_role()
        execute(f"SET LOCAL ROLE {APP_ROLE}")
        try:
            yield
        finally:
            execute("RESET ROLE")


def test_the_policy_statements_enable_and_force_row_level_security_on_the_table() -> None:
    statements = rls_policy_sql(TABLE)
    assert statements[0] == f'ALTER TABLE "{TABLE}" ENABLE ROW LEVEL SECURITY'
    assert statements[1] == f'ALTER TABLE "{TABLE}" FORCE ROW LEVEL SECURITY'
    assert "USING" in statements[2]
    assert "WITH CHECK" in statements[2]
    assert f"current_setting('{SETTING}', true)" in statements[2]


def test_raw_select_inside_rls_tenant_returns_only_the_current_tenants_rows(
    app_role: None,
) -> None:
    with as_tenant(A), rls_tenant():
        assert titles() == ["A-post"]
    with as_tenant(B), rls_tenant():
        assert titles() == ["B-post"]


def test_raw_select_inside_rls_tenant_with_no_tenant_returns_no_row(app_role: None) -> None:
    with rls_tenant():
        assert titles() == []


def test_raw_select_inside_rls_tenant_under_all_tenants_returns_no_row(app_role: None) -> None:
    """The database has no "every tenant" state: maintenance code uses a role that
    bypasses the policy, not the application's."""
    with all_tenants(), rls_tenant():
        assert titles() == []


def test_raw_select_with_the_setting_never_set_returns_no_row(app_role: None) -> None:
    assert titles() == []


def test_the_unscoped_manager_inside_rls_tenant_still_sees_only_the_current_tenant(
    app_role: None,
) -> None:
    with as_tenant(A), rls_tenant():
        assert [p.title for p in Post.unscoped.all()] == ["A-post"]
        with all_tenants():
            assert [p.title for p in Post.objects.all()] == ["A-post"]


def test_raw_insert_of_another_tenants_row_is_refused_by_the_policy(app_role: None) -> None:
    with as_tenant(A), rls_tenant():
        refused = pytest.raises(ProgrammingError, match="row-level security")
        with refused, transaction.atomic():
            insert("smuggled", B)
        insert("A-raw", A)
        assert titles() == ["A-post", "A-raw"]
    execute("RESET ROLE")
    assert not Post.unscoped.filter(title="smuggled").exists()
    assert Post.unscoped.get(title="A-raw").tenant_id == A


def test_raw_insert_with_no_tenant_is_refused_by_the_policy(app_role: None) -> None:
    refused = pytest.raises(ProgrammingError, match="row-level security")
    with rls_tenant(), refused, transaction.atomic():
        insert("orphan", A)


def test_rls_tenant_sets_the_setting_for_its_transaction(app_role: None) -> None:
    with as_tenant(B), rls_tenant(), connection.cursor() as cursor:
        cursor.execute("SELECT current_setting(%s, true)", [SETTING])
        assert cursor.fetchone() == (str(B),)


def test_a_superuser_connection_bypasses_the_policy(two_tenants: dict[str, Any]) -> None:
    """Why the application's role must not be a superuser: superusers skip every policy."""
    with without_carry_tenant(), connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == (True,)
    enable_policy()
    with as_tenant(A), rls_tenant():
        assert titles() == ["A-post", "B-post"]


def test_the_setting_of_an_rls_tenant_block_nested_in_a_transaction_ends_with_the_block(
    app_role: None,
) -> None:
    """Nested in an outer transaction (``ATOMIC_REQUESTS``, a command's ``atomic()``),
    the block is a savepoint; after it, raw SQL under another tenant, or none, must not
    keep seeing the block's tenant's rows."""
    with as_tenant(A), rls_tenant():
        assert titles() == ["A-post"]
    with as_tenant(B):
        assert titles() == []
    assert titles() == []


def test_no_policy_role_or_grant_outlives_its_test(db: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relrowsecurity FROM pg_class WHERE relname = %s", [TABLE])
        assert cursor.fetchone() == (False,)
        cursor.execute("SELECT count(*) FROM pg_policy WHERE polrelid = %s::regclass", [TABLE])
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", [APP_ROLE])
        assert cursor.fetchone() == (0,)
