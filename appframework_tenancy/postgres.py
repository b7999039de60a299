"""PostgreSQL row-level security as a second wall behind the scoped manager.

A policy on the table compares ``tenant_id`` with a per-transaction setting, so even raw
SQL and ``connection.cursor()`` (which the manager cannot see) stay in the tenant::

    with rls_tenant():  # SET LOCAL app.tenant_id = <current tenant> in a transaction
        cursor.execute("SELECT count(*) FROM blog_post")

:func:`rls_policy_sql` gives the statements for a migration's ``RunSQL``. The database
role the application uses must not be a superuser nor have ``BYPASSRLS`` (both skip
policies); ``FORCE`` makes the table's owner obey the policy too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from .context import current_tenant_id

__all__ = ["SETTING", "rls_policy_sql", "rls_tenant"]

SETTING = "app.tenant_id"


def rls_policy_sql(table: str, *, setting: str = SETTING, column: str = "tenant_id") -> list[str]:
    """The statements enabling a tenant policy on ``table``; an unset setting matches no
    row (fail closed)."""
    quoted = connections[DEFAULT_DB_ALIAS].ops.quote_name(table)
    col = connections[DEFAULT_DB_ALIAS].ops.quote_name(column)
    return [
        f"ALTER TABLE {quoted} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {quoted} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY tenant_isolation ON {quoted} "
        f"USING ({col}::text = NULLIF(current_setting('{setting}', true), '')) "
        f"WITH CHECK ({col}::text = NULLIF(current_setting('{setting}', true), ''))",
    ]


@contextmanager
def rls_tenant(using: str = DEFAULT_DB_ALIAS, *, setting: str = SETTING) -> Iterator[None]:
    """Run the block in a transaction whose ``setting`` is the current tenant (empty, so
    no row, when there is none). ``SET LOCAL`` ends with the transaction: a pooled or
    persistent connection never keeps one request's tenant for the next."""
    tenant = current_tenant_id()
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        # Inside an outer transaction this block is only a savepoint, and a setting made
        # with SET LOCAL outlives a savepoint: put the previous value back on the way out.
        cursor.execute("SELECT current_setting(%s, true)", [setting])
        previous = cursor.fetchone()[0]
        cursor.execute(
            "SELECT set_config(%s, %s, true)", [setting, "" if tenant is None else str(tenant)]
        )
        try:
            yield
        finally:
            cursor.execute("SELECT set_config(%s, %s, true)", [setting, previous or ""])
