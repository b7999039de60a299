"""The side of ``benchmarks/login_page.py`` that serves the demo's login page from one
source tree (this checkout, or the baseline's worktree), in a process of its own.

    python benchmarks/login_page_child.py TREE

puts ``TREE`` first on ``sys.path`` (ahead of the editable install), builds the demo's
WSGI handler there (in-memory SQLite, Redis as the cache, PBKDF2 at 1,000 iterations),
then answers lines on stdin: ``<scenario> <n>`` prints the mean CPU seconds per request
of ``n`` requests; ``check`` prints the status of each scenario. Only the standard
library, Django and the tree are imported: this file must work against an old tree.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
EMAIL = "bench@example.com"
PASSWORD = "benchmark password 1"
ITERATIONS = 1000
REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379"
REDIS_DB = 12  # flushed at start; none the test suite or another benchmark uses


def configure(tree: Path) -> None:
    sys.path[:0] = [str(tree), str(HERE)]
    os.chdir(tree)
    import django
    from django.conf import settings

    import testproject.settings as project

    ns: dict[str, Any] = {name: getattr(project, name) for name in dir(project) if name.isupper()}
    apps = json.loads(json.dumps(ns["APPFRAMEWORK"], default=str))
    auth = apps.setdefault("AUTH", {})
    if (tree / "appframework" / "auth" / "signup.py").exists():
        auth["EMAIL_VERIFICATION"] = "none"  # a setting the baseline does not know
    apps["RATE_LIMIT"] = {"LOGIN_ATTEMPTS": 10**9, "LOGIN_ADDRESS_ATTEMPTS": 10**9}
    ns.update(
        APPFRAMEWORK=apps,
        DEBUG=False,
        ALLOWED_HOSTS=["testserver"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": f"{REDIS.rstrip('/')}/{REDIS_DB}",
            },
            "revocations": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        },
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
        MIDDLEWARE=[m for m in ns["MIDDLEWARE"] if not m.endswith(".TenantMiddleware")],
    )
    from appframework.env import apply_environment

    apply_environment(ns, environ={})
    settings.configure(**ns)
    django.setup()
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    PBKDF2PasswordHasher.iterations = ITERATIONS


def requests(
    handler: Any,
    *,
    path: str = "/login",
    login_field: str = "email",
    csrf_cookie: str = "csrf_token",
    **post_headers: Any,
) -> dict[str, tuple[dict[str, Any], bytes]]:
    """(environ, body) of a GET of the page at ``path``, a right and a wrong password,
    each as a fresh anonymous browser holding the page's CSRF cookie sends it (also for
    ``login_peers/allauth_child.py``: its field and cookie names differ)."""
    from django.test import RequestFactory
    from wsgi_driver import call

    def environ(method: str, cookies: dict[str, str], **extra: Any) -> dict[str, Any]:
        env = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD=method)
        env.update(HTTP_HOST="testserver", HTTP_ACCEPT="text/html", HTTP_USER_AGENT="bench")
        if cookies:
            env["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        env.update(extra)
        return env

    get = environ("GET", {})
    _status, headers, page = call(handler, get)
    jar = {
        key: morsel.value
        for name, value in headers
        if name.lower() == "set-cookie"
        for key, morsel in SimpleCookie(value).items()
    }
    # The page's own CSRF field, whatever the tree names it.
    fields = dict(re.findall(r'name="(_token|csrfmiddlewaretoken)" value="([^"]+)"', page.decode()))

    def post(password: str) -> tuple[dict[str, Any], bytes]:
        body = urlencode({login_field: EMAIL, "password": password, **fields}).encode()
        env = environ(
            "POST",
            {csrf_cookie: jar[csrf_cookie]},
            CONTENT_TYPE="application/x-www-form-urlencoded",
            CONTENT_LENGTH=str(len(body)),
            HTTP_ORIGIN="http://testserver",
            **post_headers,
        )
        return env, body

    return {"get": (get, b""), "good": post(PASSWORD), "wrong": post("not the password")}


def serve(handler: Any, scenarios: dict[str, tuple[dict[str, Any], bytes]]) -> None:
    """Say ``ready``, then answer ``check`` and ``<scenario> <n>`` lines until stdin ends."""
    from wsgi_driver import call, run_batch

    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words == ["check"]:
            statuses = {key: call(handler, env, body)[0] for key, (env, body) in scenarios.items()}
            print(json.dumps(statuses), flush=True)
            continue
        env, body = scenarios[words[0]]
        print(run_batch(handler, env, int(words[1]), time.process_time, body), flush=True)


def main() -> int:
    configure(Path(sys.argv[1]).resolve())
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    cache.clear()
    call_command("migrate", verbosity=0, interactive=False)
    get_user_model()._default_manager.create_user(EMAIL, PASSWORD)
    handler = get_wsgi_application()
    serve(handler, requests(handler))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
