from __future__ import annotations

from django.db import models


class BenchItem(models.Model):
    """What the events are about: creating one is one event."""

    name = models.CharField(max_length=100)

    def __str__(self) -> str:
        return self.name
