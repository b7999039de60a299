"""``gunicorn tests.stores.two_workers.wsgi:application``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.stores.two_workers.settings")

application = get_wsgi_application()
