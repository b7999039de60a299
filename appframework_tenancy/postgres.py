"""PostgreSQL row-level security as a second wall behind the scoped manager.

A policy on the table compares ``tenant_id`` with the session setting ``app.tenant_id``,
so even raw SQL and ``connection.cursor()`` (which the manager cannot see) stay in the
tenant. Two ways to keep that setting equal to the current tenant:

* ``TENANCY["ROW_LEVEL_SECURITY"] = ["default"]``: every query on that database carries
  the tenant of the code that runs it (a request, a Celery task, ``as_tenant()``), through
  :func:`carry_tenant`, installed on each new connection;
* ``with rls_tenant():`` around a block, in a transaction, for code that does not use it.

:func:`rls_policy_sql` gives the statements for a migration's ``RunSQL``. The database
role the application uses must not be a superuser nor have ``BYPASSRLS`` (both skip
policies); ``FORCE`` makes the table's owner obey the policy too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from .context import current_tenant_id

__all__ = [
    "SETTING",
    "carry_tenant",
    "install_carry_tenant",
    "rls_drop_sql",
    "rls_policy_sql",
    "rls_tenant",
    "role_skips_policies",
]

SETTING = "app.tenant_id"
#: The attribute of a database wrapper remembering what its session's setting holds.
_APPLIED = "_appframework_rls_applied"


def _setting_value() -> str:
    # No tenant and all_tenants() both become '', which the policy matches with no row:
    # the database has no "every tenant" state (maintenance uses a role that bypasses it).
    tenant = current_tenant_id()
    return "" if tenant is None else str(tenant)


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


def role_skips_policies(connection: Any) -> bool:
    """Whether ``connection``'s role is a superuser or has ``BYPASSRLS``: PostgreSQL then
    applies no row-level-security policy to it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
    return bool(row and row[0])


def rls_drop_sql(table: str) -> list[str]:
    """The statements undoing :func:`rls_policy_sql` (a migration's reverse)."""
    quoted = connections[DEFAULT_DB_ALIAS].ops.quote_name(table)
    return [
        f"DROP POLICY IF EXISTS tenant_isolation ON {quoted}",
        f"ALTER TABLE {quoted} NO FORCE ROW LEVEL SECURITY",
        f"ALTER TABLE {quoted} DISABLE ROW LEVEL SECURITY",
    ]


@contextmanager
def rls_tenant(using: str = DEFAULT_DB_ALIAS, *, setting: str = SETTING) -> Iterator[None]:
    """Run the block in a transaction whose ``setting`` is the current tenant (empty, so
    no row, when there is none). ``SET LOCAL`` ends with the transaction: a pooled or
    persistent connection never keeps one request's tenant for the next."""
    value = _setting_value()
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        # Inside an outer transaction this block is only a savepoint, and a setting made
        # with SET LOCAL outlives a savepoint: put the previous value back on the way out.
        cursor.execute("SELECT current_setting(%s, true)", [setting])
        previous = cursor.fetchone()[0]
        cursor.execute("SELECT set_config(%s, %s, true)", [setting, value])
        try:
            yield
        finally:
            cursor.execute("SELECT set_config(%s, %s, true)", [setting, previous or ""])


class _Applied:
    """The value last given to the session's setting, on which DB-API connection, and,
    when it was given inside a transaction, the transaction's list of on-commit hooks."""

    __slots__ = ("hooks", "raw", "value")

    def __init__(self, wrapper: Any, value: str) -> None:
        self.raw = wrapper.connection
        self.value = value
        self.hooks: list[Any] | None = wrapper.run_on_commit if wrapper.in_atomic_block else None

    def holds(self, wrapper: Any, value: str) -> bool:
        if self.raw is not wrapper.connection or self.value != value:
            return False
        # A setting changed in a transaction is undone by its rollback, or by the rollback
        # of the savepoint it was made in. Django replaces the connection's list of
        # on-commit hooks on every commit and rollback, savepoints' included, and only
        # then: the same list means nothing could have undone the value. A new list may
        # mean a commit too; setting the value once more is the cheap, certain answer.
        return self.hooks is None or self.hooks is wrapper.run_on_commit


#: libpq's state of a transaction that has failed (psycopg 3's
#: ``pq.TransactionStatus.INERROR``, psycopg2's ``TRANSACTION_STATUS_INERROR``).
_FAILED = 3
#: Statements after which the session's value may no longer be the one given: a rollback
#: (whole, or to a savepoint) takes it back, RESET/DISCARD/SET change it.
_FORGETTING = ("ROLLBACK", "ABORT", "RESET", "DISCARD", "SET ")


def _transaction_status(raw: Any) -> int | None:
    info = getattr(raw, "info", None)  # psycopg 3
    if info is not None:
        return int(info.transaction_status)
    get_status = getattr(raw, "get_transaction_status", None)  # psycopg2
    return int(get_status()) if get_status is not None else None


def _apply(wrapper: Any, value: str) -> None:
    # The DB-API cursor, not the wrapper's: this runs inside the execute wrappers, and a
    # server-side cursor of the query being wrapped must not run a second statement.
    with wrapper.wrap_database_errors, wrapper.connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, false)", [SETTING, value])
    # Manual transaction management gives no way to know when the value could be rolled
    # back (connection.rollback() runs no statement through the wrappers): remember
    # nothing, so the next query sets it again.
    manual = not wrapper.in_atomic_block and not wrapper.get_autocommit()
    setattr(wrapper, _APPLIED, None if manual else _Applied(wrapper, value))


def carry_tenant(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    """An execute wrapper giving the session's ``app.tenant_id`` the current tenant before
    a query runs, when it does not hold it already: one extra statement per change of
    tenant on a connection, none otherwise. Install it with
    ``connection.execute_wrapper(carry_tenant)``, or for every connection of a database
    with ``TENANCY["ROW_LEVEL_SECURITY"]``."""
    wrapper = context["connection"]
    value = _setting_value()
    applied: _Applied | None = getattr(wrapper, _APPLIED, None)
    # In a failed transaction only a rollback can run (Django's own ROLLBACK TO SAVEPOINT
    # among them), and it replaces the hooks list anyway; a statement of ours would fail
    # and doom the transaction for good.
    if (
        (applied is None or not applied.holds(wrapper, value))
        and not wrapper.needs_rollback
        and _transaction_status(wrapper.connection) != _FAILED
    ):
        _apply(wrapper, value)
    try:
        return execute(sql, params, many, context)
    finally:
        if isinstance(sql, str) and sql[:24].lstrip()[:8].upper().startswith(_FORGETTING):
            setattr(wrapper, _APPLIED, None)


def install_carry_tenant(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: :func:`carry_tenant` on each new connection of the
    PostgreSQL databases listed in ``TENANCY["ROW_LEVEL_SECURITY"]`` (another database is
    appframework_tenancy.E007)."""
    from appframework.conf import app_settings

    if connection.vendor != "postgresql":
        return
    if connection.alias not in app_settings.TENANCY.ROW_LEVEL_SECURITY:
        return
    setattr(connection, _APPLIED, None)  # a new session holds no value yet
    if carry_tenant not in connection.execute_wrappers:
        # First, not last: connection.execute_wrapper() pops the last wrapper on exit,
        # and this connection may have been opened inside such a block.
        connection.execute_wrappers.insert(0, carry_tenant)
