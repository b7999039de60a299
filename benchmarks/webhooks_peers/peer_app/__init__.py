"""The Django project and bench app the peers run in (``peer_driver.py``'s and its Celery
worker's): settings, the Celery app, and one model, ``bench.BenchItem``, whose creation is
the event both peers deliver.

As in any Django project with Celery, importing the project package creates the Celery app,
so that it is the current app before Django imports the peers' task modules (django-webhook
declares its tasks with ``celery.current_app.task``).
"""

from .celery_app import app as celery_app

__all__ = ["celery_app"]
