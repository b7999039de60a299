"""Adding ``tenant_id`` to a table that already has rows, as docs/tenancy.md says: AddField
nullable → BackfillTenant → AlterField NOT NULL. The migrations of the throwaway app
tests/tenancy/shop_recipe (label "shop") are applied for real with Django's
MigrationExecutor, on SQLite and on PostgreSQL, then rolled back."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, connection, migrations, models, transaction
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState
from django.db.migrations.writer import OperationWriter
from django.test.utils import isolate_apps

from appframework_tenancy.models import AbstractTenant, TenantModel, TenantModelMixin
from appframework_tenancy.operations import BackfillTenant

# Schema changes on SQLite cannot run inside the test's transaction.
pytestmark = pytest.mark.django_db(transaction=True)

APP = "shop"
PACKAGE = "tests.tenancy.shop_recipe.migrations"
NAMES = ("0001_initial", "0002_invoice_tenant", "0003_order_tenant")
ROOT = Path(__file__).resolve().parents[2]
BEFORE = (APP, "0001_initial")
AFTER = (APP, "0003_order_tenant")


def executor(*extra: migrations.Migration) -> MigrationExecutor:
    """An executor whose graph holds the shop app's migrations (and ``extra``) beside the
    project's, without installing the app."""

    class RecipeLoader(MigrationLoader):
        def load_disk(self) -> None:
            super().load_disk()
            for name in NAMES:
                module = importlib.import_module(f"{PACKAGE}.{name}")
                self.disk_migrations[APP, name] = module.Migration(name, APP)
            for migration in extra:
                self.disk_migrations[APP, migration.name] = migration
            self.migrated_apps.add(APP)

    result = MigrationExecutor(connection)
    result.loader = RecipeLoader(connection)
    return result


def migrate(target: tuple[str, str | None], *extra: migrations.Migration) -> MigrationExecutor:
    runner = executor(*extra)
    runner.migrate([target])
    return executor(*extra)  # a fresh graph, which knows what is applied now


def historical(runner: MigrationExecutor, node: tuple[str, str], name: str) -> Any:
    return runner.loader.project_state(node, at_end=True).apps.get_model(APP, name)


def columns(table: str) -> dict[str, Any]:
    with connection.cursor() as cursor:
        return {c.name: c for c in connection.introspection.get_table_description(cursor, table)}


def indexed(table: str, column: str) -> bool:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return any(c["columns"] == [column] and c["index"] for c in constraints.values())


@pytest.fixture
def shop_with_rows() -> Iterator[MigrationExecutor]:
    """The shop app at 0001 (no tenant anywhere) with two invoices and an order; every
    shop migration is rolled back afterwards."""
    runner = migrate(BEFORE)
    invoice = historical(runner, BEFORE, "Invoice")
    invoice.objects.create(number="2024-001")
    invoice.objects.create(number="2024-002")
    historical(runner, BEFORE, "Order").objects.create(reference="PO-7")
    try:
        yield runner
    finally:
        executor().migrate([(APP, None)])
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM django_migrations WHERE app = %s", [APP])
        assert not {"shop_tenant", "shop_invoice", "shop_order"} & set(
            connection.introspection.table_names()
        )


# -- the recipe, applied ----------------------------------------------------------------------
def test_the_recipe_gives_existing_rows_the_tenant_and_ends_with_a_not_null_indexed_column(
    shop_with_rows: MigrationExecutor,
) -> None:
    assert "tenant_id" not in columns("shop_invoice")
    runner = migrate(AFTER)
    invoice = historical(runner, AFTER, "Invoice")
    assert sorted(invoice.objects.values_list("number", "tenant_id")) == [
        ("2024-001", 1),
        ("2024-002", 1),
    ]
    assert columns("shop_invoice")["tenant_id"].null_ok is False
    assert indexed("shop_invoice", "tenant_id")
    with pytest.raises(IntegrityError), transaction.atomic():
        invoice.objects.create(number="2024-003")  # no tenant: refused by the database


def test_the_recipe_with_a_tenant_foreign_key_and_a_tenant_made_by_the_migration_runs_in_one_migration(
    shop_with_rows: MigrationExecutor,
) -> None:
    """0003 updates a deferred foreign key and alters its column in one transaction:
    PostgreSQL refuses that unless the deferred checks ran in between."""
    runner = migrate(AFTER)
    tenant = historical(runner, AFTER, "Tenant").objects.get(slug="acme")
    order = historical(runner, AFTER, "Order").objects.get()
    assert order.tenant_id == tenant.pk
    assert columns("shop_order")["tenant_id"].null_ok is False


def acme(apps: Any, schema_editor: Any) -> Any:
    return importlib.import_module(f"{PACKAGE}.0003_order_tenant").acme(apps, schema_editor)


def test_a_backfill_of_a_foreign_key_added_earlier_allows_more_schema_changes_in_its_migration(
    shop_with_rows: MigrationExecutor,
) -> None:
    """The key exists before the backfill's migration, so PostgreSQL queues a deferred
    check per updated row, and refuses any schema change of the table in the same
    transaction until those checks ran."""

    class AddKey(migrations.Migration):
        dependencies = [(APP, "0002_invoice_tenant")]
        operations = [
            migrations.AddField(
                "order",
                "tenant",
                models.ForeignKey(null=True, on_delete=models.PROTECT, to="shop.tenant"),
            ),
        ]

    class Backfill(migrations.Migration):
        dependencies = [(APP, "0003_add_key")]
        operations = [
            BackfillTenant("order", tenant=acme),
            migrations.AlterField(
                "order", "tenant", models.ForeignKey(on_delete=models.PROTECT, to="shop.tenant")
            ),
            migrations.AddIndex("order", models.Index(fields=["reference"], name="order_ref")),
        ]

    add_key, backfill = AddKey("0003_add_key", APP), Backfill("0004_backfill", APP)
    runner = migrate((APP, backfill.name), add_key, backfill)
    order = historical(runner, (APP, backfill.name), "Order").objects.get()
    assert order.tenant.slug == "acme"
    assert columns("shop_order")["tenant_id"].null_ok is False
    assert indexed("shop_order", "reference")
    runner.migrate([BEFORE])


def end_of_the_migrate_process() -> None:
    """On SQLite, Django's schema editor checks foreign keys again as it exits, and that
    second IntegrityError skips the end of its transaction; ``migrate`` would stop there
    and its process end, and the transaction with it: roll back as that end would."""
    for block in reversed(connection.atomic_blocks):
        block.__exit__(IntegrityError, IntegrityError(), None)
    connection.enable_constraint_checking()


def test_a_backfill_to_a_tenant_that_does_not_exist_fails_at_once_and_rolls_back(
    shop_with_rows: MigrationExecutor,
) -> None:
    class Backfill(migrations.Migration):
        dependencies = [(APP, "0002_invoice_tenant")]
        operations = [
            migrations.AddField(
                "order",
                "tenant",
                models.ForeignKey(null=True, on_delete=models.PROTECT, to="shop.tenant"),
            ),
            BackfillTenant("order", tenant=404),
        ]

    migration = Backfill("0003_missing_tenant", APP)
    with pytest.raises(IntegrityError, match="shop_order"):
        executor(migration).migrate([(APP, migration.name)])
    end_of_the_migrate_process()
    assert "tenant_id" not in columns("shop_order")
    executor().migrate([BEFORE])


def test_the_recipe_migrates_back_to_the_table_without_tenant_id_keeping_its_rows(
    shop_with_rows: MigrationExecutor,
) -> None:
    migrate(AFTER)
    runner = migrate(BEFORE)
    assert "tenant_id" not in columns("shop_invoice")
    assert "tenant_id" not in columns("shop_order")
    numbers = historical(runner, BEFORE, "Invoice").objects.values_list("number", flat=True)
    assert sorted(numbers) == ["2024-001", "2024-002"]


def test_after_the_recipe_makemigrations_finds_nothing_to_change_for_the_declared_models(
    shop_with_rows: MigrationExecutor,
) -> None:
    """The recipe ends where ``class Invoice(TenantModel)`` (and a ``tenant`` foreign key
    with TenantModelMixin) start: no further migration, no one-off default asked."""

    with isolate_apps("tests.tenancy.shop_recipe") as isolated:

        class Tenant(AbstractTenant):
            class Meta:
                app_label = APP

        class Invoice(TenantModel):
            number = models.CharField(max_length=20)

            class Meta:
                app_label = APP

        class Order(TenantModelMixin):
            reference = models.CharField(max_length=20)
            tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT)

            class Meta:
                app_label = APP

    runner = executor()
    declared = ProjectState.from_apps(isolated)
    migrated = runner.loader.project_state(AFTER, at_end=True)
    changes = MigrationAutodetector(migrated, declared).changes(graph=runner.loader.graph)
    assert changes.get(APP, []) == []
    # The comparison sees these models: against the tables before the recipe, it would
    # add the columns.
    before = runner.loader.project_state(BEFORE, at_end=True)
    (pending,) = MigrationAutodetector(before, declared).changes(graph=runner.loader.graph)[APP]
    assert {(op.model_name, op.name) for op in pending.operations} == {
        ("invoice", "tenant_id"),
        ("order", "tenant"),
    }


# -- BackfillTenant on its own ----------------------------------------------------------------
def backfill_migration(name: str, tenant: Any) -> migrations.Migration:
    """0002 in another shape: the nullable column and a backfill, nothing after."""

    class Migration(migrations.Migration):
        dependencies = [BEFORE]
        operations = [
            migrations.AddField(
                "invoice", "tenant_id", models.BigIntegerField(null=True, db_index=True)
            ),
            BackfillTenant("invoice", tenant=tenant),
        ]

    return Migration(name, APP)


def no_tenant(apps: Any, schema_editor: Any) -> None:
    return None


def test_a_backfill_with_no_tenant_for_rows_that_need_one_fails_and_rolls_the_migration_back(
    shop_with_rows: MigrationExecutor,
) -> None:
    migration = backfill_migration("0002_no_tenant", no_tenant)
    with pytest.raises(ValueError, match=r"2 row\(s\) of shop.invoice have no tenant"):
        executor(migration).migrate([(APP, migration.name)])
    assert "tenant_id" not in columns("shop_invoice")
    assert (APP, migration.name) not in executor(migration).loader.applied_migrations


def test_a_backfill_with_no_tenant_on_an_empty_table_does_nothing(
    shop_with_rows: MigrationExecutor,
) -> None:
    historical(shop_with_rows, BEFORE, "Invoice").objects.all().delete()
    migration = backfill_migration("0002_no_tenant", no_tenant)
    runner = migrate((APP, migration.name), migration)
    assert (APP, migration.name) in runner.loader.applied_migrations
    runner.migrate([BEFORE])


def test_a_backfill_gives_a_tenant_only_to_rows_without_one(
    shop_with_rows: MigrationExecutor,
) -> None:
    first = backfill_migration("0002_first", 7)
    runner = migrate((APP, first.name), first)
    historical(runner, (APP, first.name), "Invoice").objects.create(number="2024-003")

    class Second(migrations.Migration):
        dependencies = [(APP, first.name)]
        operations = [BackfillTenant("invoice", tenant=8)]

    second = Second("0003_second", APP)
    runner = migrate((APP, second.name), first, second)
    invoice = historical(runner, (APP, second.name), "Invoice")
    assert sorted(invoice.objects.values_list("number", "tenant_id")) == [
        ("2024-001", 7),
        ("2024-002", 7),
        ("2024-003", 8),
    ]
    runner.migrate([BEFORE])


def test_backfill_tenant_is_written_into_a_squashed_or_generated_migration_as_an_import() -> None:
    """``squashmigrations`` rewrites the operation from its deconstruction."""
    text, imports = OperationWriter(BackfillTenant("invoice", tenant=1), indentation=0).serialize()
    assert text == (
        "appframework_tenancy.operations.BackfillTenant(\n"
        "    model_name='invoice',\n"
        "    tenant=1,\n"
        "),"
    )
    assert imports == {"import appframework_tenancy.operations"}


def test_backfill_tenant_says_what_it_does_in_migrate_and_sqlmigrate() -> None:
    operation = BackfillTenant("Invoice", tenant=1)
    assert operation.describe() == "Give the rows of Invoice without a tenant their tenant"
    assert operation.migration_name_fragment == "backfill_tenant_invoice"
    assert operation.reduces_to_sql is False
    assert operation.reversible is True


# -- the docs ---------------------------------------------------------------------------------
def test_the_migration_in_the_docs_is_the_one_these_tests_apply() -> None:
    text = (ROOT / "docs" / "tenancy.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    documented = [b for b in blocks if "class Migration" in b and "BackfillTenant(" in b]
    assert len(documented) == 1
    applied = (ROOT / "tests/tenancy/shop_recipe/migrations/0002_invoice_tenant.py").read_text()
    assert documented[0] == applied
