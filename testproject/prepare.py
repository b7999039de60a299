"""Starting the demo from outside, as the browser tests, the ``scripts/demo`` test and the
load script do: a free port, an environment of the demo's own, and a fresh database
(``migrate`` then ``seed_demo``, each in a child process with that environment)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from appframework.env import ENVIRONMENT_VARIABLES

#: The folder of manage.py.
ROOT = Path(__file__).resolve().parent.parent


#: What a child demo must not inherit from the process starting it (pytest's settings
#: module and database, a developer's own demo variables, the suite's environment
#: settings): it gets its configuration from the caller only.
_NOT_INHERITED = frozenset(
    {
        "DJANGO_SETTINGS_MODULE",
        "DATABASE_URL",
        "SQLITE_PATH",
        "DEBUG",
        "DEMO_BASE_URL",
        "DEMO_WEBHOOK_SECRET",
        "GRAPHIQL_ASSETS_DIR",
        "CELERY_BROKER_URL",
        *ENVIRONMENT_VARIABLES,
    }
)
_NOT_INHERITED_PREFIXES = ("OAUTH_", "SAML_", "LOCAL_IDP_", "GOOGLE_", "GITHUB_", "MICROSOFT_")


def demo_environment(**values: str) -> dict[str, str]:
    """This process's environment without the demo's and the suite's variables, plus
    ``values``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _NOT_INHERITED and not name.startswith(_NOT_INHERITED_PREFIXES)
    }
    env.update(PYTHONUNBUFFERED="1", **values)
    return env


def free_port() -> int:
    """A port free right now. Servers such as runserver need a number up front (they
    cannot report the port of ``:0``); the gap until they bind is short enough."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DemoSetupError(RuntimeError):
    """A management command failed; the message carries its output."""


def manage(env: Mapping[str, str], *args: str, timeout: float = 300) -> None:
    """``manage.py <args>`` with ``env``; :class:`DemoSetupError` when it fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise DemoSetupError(
            f"manage.py {' '.join(args)} failed (exit status {done.returncode}):\n"
            f"{done.stdout}{done.stderr}"
        )


def prepare_database(env: Mapping[str, str]) -> None:
    """Migrate and seed the database ``env`` names (``SQLITE_PATH`` or ``DATABASE_URL``)."""
    manage(env, "migrate", "--noinput", "--verbosity=0")
    manage(env, "seed_demo", "--verbosity=0")
