from django.db import models


class BenchItem(models.Model):
    """Creating one is one event (topic ``peer_app.BenchItem/create``)."""

    name = models.CharField(max_length=100)

    def __str__(self) -> str:
        return self.name
