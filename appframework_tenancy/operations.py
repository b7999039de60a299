"""Migration operations: :class:`BackfillTenant` gives the existing rows of a table their
tenant, between the ``AddField`` of a nullable ``tenant_id`` and the ``AlterField`` that
makes it NOT NULL (docs/tenancy.md, "Adding tenant_id to a table that has rows").

An operation rather than a management command: it runs in the migration history, in
order, on every database that migrates (a colleague's, CI's, production), and the
``AlterField`` after it cannot run before it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.migrations.operations.base import Operation

__all__ = ["BackfillTenant"]

TenantSource = Callable[[Any, Any], Any]


class BackfillTenant(Operation):
    """``BackfillTenant("invoice", tenant=1)``: every row of ``invoice`` whose
    ``tenant_id`` is NULL gets tenant 1, in one ``UPDATE``.

    ``tenant`` is the id, or a function ``(apps, schema_editor) -> id`` for an id that
    differs between databases (a tenant looked up by slug, or created first). It may
    answer None only when no row needs a tenant (a new database).

    Works for a ``tenant_id`` column and for a ``tenant`` foreign key (whose column is
    ``tenant_id`` too); the rows are checked against the key's constraint at once. Going
    backwards does nothing: the reversed ``AddField`` drops the column anyway.
    """

    reduces_to_sql = False
    reversible = True

    def __init__(self, model_name: str, tenant: Any | TenantSource) -> None:
        self.model_name = model_name
        self.tenant = tenant

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass  # rows only: the models are unchanged

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        connection = schema_editor.connection
        if not self.allow_migrate_model(connection.alias, model):
            return
        # The historical model's plain manager: no tenant scope and no write guards,
        # which would refuse to set a tenant on rows that exist.
        pending = model._base_manager.using(connection.alias).filter(tenant_id__isnull=True)
        tenant = (
            self.tenant(from_state.apps, schema_editor) if callable(self.tenant) else self.tenant
        )
        if tenant is None:
            count = pending.count()
            if count:
                raise ValueError(
                    f"BackfillTenant: {count} row(s) of {app_label}.{self.model_name} have no "
                    "tenant, and no tenant id was given for them."
                )
            return
        pending.update(tenant_id=tenant)
        # A tenant foreign key's values are checked now rather than at commit. On
        # PostgreSQL this also runs the deferred checks the UPDATE queued on a key that
        # existed before this migration: any later schema change of the table in the same
        # migration (an index, a constraint) would fail with "pending trigger events".
        connection.check_constraints(table_names=[model._meta.db_table])

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        pass

    def describe(self) -> str:
        return f"Give the rows of {self.model_name} without a tenant their tenant"

    @property
    def migration_name_fragment(self) -> str:
        return f"backfill_tenant_{self.model_name.lower()}"
