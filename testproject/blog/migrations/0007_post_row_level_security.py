"""On PostgreSQL, a row-level-security policy on ``blog_post``: behind the scoped manager,
raw SQL too sees and writes only the tenant in the session setting ``app.tenant_id``,
which ``TENANCY["ROW_LEVEL_SECURITY"]`` keeps equal to the current tenant. SQLite has no
such policies; there the migration does nothing."""

from typing import Any

from django.db import migrations

from appframework_tenancy.postgres import rls_drop_sql, rls_policy_sql

TABLE = "blog_post"


def enable(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in rls_policy_sql(TABLE):
            schema_editor.execute(statement)


def disable(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in rls_drop_sql(TABLE):
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("blog", "0006_received_webhook_id_once")]

    operations = [migrations.RunPython(enable, disable, elidable=False)]
