"""The recipe for a ``tenant`` foreign key (TenantModelMixin), with a tenant found, or
made, per database rather than a fixed id; all in one migration, which on PostgreSQL
needs the deferred foreign-key checks fired before the AlterField."""

from django.db import migrations, models

from appframework_tenancy.operations import BackfillTenant


def acme(apps, schema_editor):
    tenant, _created = apps.get_model("shop", "Tenant").objects.get_or_create(
        slug="acme", defaults={"name": "Acme"}
    )
    return tenant.pk


class Migration(migrations.Migration):
    dependencies = [("shop", "0002_invoice_tenant")]

    operations = [
        migrations.AddField(
            "order",
            "tenant",
            models.ForeignKey(null=True, on_delete=models.PROTECT, to="shop.tenant"),
        ),
        BackfillTenant("order", tenant=acme),
        migrations.AlterField(
            "order",
            "tenant",
            models.ForeignKey(on_delete=models.PROTECT, to="shop.tenant"),
        ),
    ]
