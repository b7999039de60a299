# shop/migrations/0002_invoice_tenant.py
from django.db import migrations, models

from appframework_tenancy.operations import BackfillTenant


class Migration(migrations.Migration):
    dependencies = [("shop", "0001_initial")]

    operations = [
        # 1. The column, nullable: the rows that exist have no tenant yet.
        migrations.AddField(
            "invoice",
            "tenant_id",
            models.BigIntegerField(db_index=True, editable=False, null=True),
        ),
        # 2. Their tenant: here tenant 1, the organisation that owned everything so far.
        BackfillTenant("invoice", tenant=1),
        # 3. NOT NULL, as TenantModel declares it.
        migrations.AlterField(
            "invoice",
            "tenant_id",
            models.BigIntegerField(db_index=True, editable=False),
        ),
    ]
