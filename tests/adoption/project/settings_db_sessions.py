"""The adopted project keeping Django's database sessions, as docs/adopting.md §4 says
to keep the sessions signed in before adopting."""

from .settings import *  # noqa: F403

SESSION_ENGINE = "django.contrib.sessions.backends.db"
