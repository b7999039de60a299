"""The same project after adopting the suite (tests.adoption.project.settings, migrated
over the "before" database), run in a subprocess by test_existing_data.py with what
before.py printed on stdin. Prints one JSON object of what it saw:

- ``session``: the pages the pre-adoption session cookie opened (twice: Django's
  ``get_user`` has by then stored the suite's hash in it);
- ``suite_login`` / ``django_login``: per hasher, whether the suite's login page and
  Django's ``LoginView`` signed the user in, and the algorithm of the stored hash after;
- ``reset_mails``: per hasher, how many mails Django's password reset page sent;
- ``signup``: the status and error code of sign-ups the username rules refuse.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core import mail  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

setup_test_environment()
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
JSON_ACCEPT = {"HTTP_ACCEPT": "application/json"}
made: dict[str, Any] = json.load(sys.stdin)
User = get_user_model()


def form_post(client: Client, path: str, data: dict[str, str], **extra: Any) -> Any:
    """A browser's form POST: the page's CSRF field, whatever its name."""
    page = client.get(path, **HTML).content.decode()
    match = re.search(r'name="(csrfmiddlewaretoken|_token)" value="([^"]+)"', page)
    assert match, page[:2000]
    return client.post(path, {**data, match.group(1): match.group(2)}, **HTML, **extra)


def private(client: Client) -> int:
    return int(client.get("/private/", **HTML).status_code)


def algorithm(username: str) -> str:
    return str(User.objects.get(username=username).password.split("$", 1)[0])


seen: dict[str, Any] = {}

old = Client(enforce_csrf_checks=True)
old.cookies[settings.SESSION_COOKIE_NAME] = made["session"]
seen["session"] = [private(old), private(old)]

seen["suite_login"], seen["django_login"], seen["reset_mails"] = {}, {}, {}
for hasher, user in made["users"].items():
    mail.outbox.clear()
    reset = form_post(
        Client(enforce_csrf_checks=True),
        "/accounts/password_reset/",
        {"email": f"{user['username']}@example.com"},
    )
    assert reset.status_code == 302, reset.content[:500]
    seen["reset_mails"][hasher] = len(mail.outbox)

    django_browser = Client(enforce_csrf_checks=True)
    answer = form_post(django_browser, "/accounts/login/", user)
    seen["django_login"][hasher] = {
        "status": answer.status_code,
        "signed_in": private(django_browser) == 200,
        "hash_after": algorithm(user["username"]),
    }
    suite_browser = Client(enforce_csrf_checks=True)
    answer = form_post(suite_browser, "/account/login/", user)
    seen["suite_login"][hasher] = {
        "status": answer.status_code,
        "signed_in": private(suite_browser) == 200,
    }

seen["signup"] = {}
existing = made["users"]["scrypt"]["username"]
for case, username in {
    "taken": existing,
    "taken_other_case": existing.upper(),
    "too_long": "u" * 151,
    "bad_characters": "has space/and#slash",
}.items():
    answer = Client().post(
        "/account/signup/",
        {"username": username, "email": f"{case}@example.com", "password": "a new passphrase 42!"},
        **JSON_ACCEPT,
    )
    body = answer.json() if answer["Content-Type"].startswith("application/") else {}
    codes = [error.get("code") for error in body.get("errors", {}).get("username", [])]
    seen["signup"][case] = {"status": answer.status_code, "codes": codes}
seen["signup_made"] = (
    User.objects.filter(email__endswith="@example.com")
    .exclude(username__startswith="user_")
    .count()
)
json.dump(seen, sys.stdout)
