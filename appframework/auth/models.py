"""``SharedRecord``: one row of the suite's database store (``appframework.database_store``),
where ended sessions, throttle counters and one-use values live when no shared cache is
configured."""

from __future__ import annotations

from django.db import models

__all__ = ["SharedRecord"]


class SharedRecord(models.Model):
    """One key of the store. An integer lives in ``number``, so that ``incr`` is a single
    ``UPDATE`` the database makes atomic; anything else is JSON in ``value``. ``expires``
    is seconds since the epoch: a row past it is never read, and culled later."""

    key = models.CharField(max_length=255, primary_key=True)
    value = models.TextField(null=True)
    number = models.BigIntegerField(null=True)
    expires = models.FloatField(db_index=True)

    class Meta:
        db_table = "appframework_shared_records"

    def __str__(self) -> str:
        return self.key
