"""The life of a project before it adopts the suite, run in a subprocess by
test_existing_data.py under the settings ``django-admin startproject`` wrote (plus
``AUTH_USER_MODEL``): Django's migrations, users whose passwords Django's own hashers
hashed (one per hasher of Django's default ``PASSWORD_HASHERS``), and a session that
Django's ``LoginView`` signed in. Prints what it made as JSON."""

from __future__ import annotations

import json
import sys

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.hashers import get_hashers, make_password  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

assert "appframework" not in " ".join(settings.INSTALLED_APPS), settings.INSTALLED_APPS
setup_test_environment()  # testserver allowed, mail kept in memory
call_command("migrate", verbosity=0)

users = {}
for hasher in get_hashers():
    name = f"user_{hasher.algorithm}"
    password = f"pre-adoption passphrase of {name}"
    get_user_model().objects.create(
        username=name,
        email=f"{name}@example.com",
        password=make_password(password, hasher=hasher.algorithm),
    )
    users[hasher.algorithm] = {"username": name, "password": password}

# Signed in by Django's LoginView (django.contrib.auth.urls), as a browser would.
browser = Client()
signed = browser.post(
    "/accounts/login/",
    {
        "username": users["pbkdf2_sha256"]["username"],
        "password": users["pbkdf2_sha256"]["password"],
    },
)
assert signed.status_code == 302, signed.content
assert browser.get("/private/").status_code == 200
json.dump(
    {"users": users, "session": browser.cookies[settings.SESSION_COOKIE_NAME].value},
    sys.stdout,
)
