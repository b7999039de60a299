"""Each ``X-Webhook-Id`` is stored once by the demo's receiver: a unique index, so that two
copies of one delivery arriving at the same moment cannot both be stored (the view's
lookup alone would let both through).

Partial (non-empty ids only), because rows stored before the receiver refused unsigned
posts may have no id. Raw SQL, with no change to the model state: the model (and so
``makemigrations``) does not declare the index, and the view handles the
``IntegrityError`` it raises. Copies already stored are removed first, keeping the
earliest."""

from django.db import migrations

FORWARD = [
    """
    DELETE FROM blog_receivedwebhook
    WHERE webhook_id <> ''
      AND id NOT IN (
        SELECT MIN(id) FROM blog_receivedwebhook WHERE webhook_id <> '' GROUP BY webhook_id
      )
    """,
    """
    CREATE UNIQUE INDEX blog_receivedwebhook_id_once
    ON blog_receivedwebhook (webhook_id) WHERE webhook_id <> ''
    """,
]
BACKWARD = "DROP INDEX blog_receivedwebhook_id_once"


class Migration(migrations.Migration):
    dependencies = [
        ("blog", "0005_user_mfa"),
    ]

    operations = [
        migrations.RunSQL(FORWARD, reverse_sql=BACKWARD),
    ]
