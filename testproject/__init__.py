"""Demo project: every appframework feature, runnable with ./scripts/demo."""

try:  # Celery is an optional extra ("webhooks"); the demo installs it.
    from .celery import app as celery_app
except ImportError:  # pragma: no cover - only without the extra
    celery_app = None

__all__ = ["celery_app"]
