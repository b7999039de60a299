from django.db import migrations, models

ACME, GLOBEX = 1, 2


def create_tenants(apps, schema_editor):
    Tenant = apps.get_model("blog", "Tenant")
    Tenant.objects.get_or_create(id=ACME, defaults={"name": "Acme", "slug": "acme"})
    Tenant.objects.get_or_create(id=GLOBEX, defaults={"name": "Globex", "slug": "globex"})


class Migration(migrations.Migration):
    dependencies = [("blog", "0002_user_roles")]

    operations = [
        migrations.CreateModel(
            name="Tenant",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("slug", models.SlugField(unique=True)),
            ],
        ),
        migrations.RunPython(create_tenants, migrations.RunPython.noop),
        migrations.AddField(
            model_name="user",
            name="tenants",
            field=models.ManyToManyField(blank=True, related_name="members", to="blog.tenant"),
        ),
        # Posts written before tenancy belong to Acme.
        migrations.AddField(
            model_name="post",
            name="tenant_id",
            field=models.BigIntegerField(db_index=True, default=ACME, editable=False),
            preserve_default=False,
        ),
    ]
