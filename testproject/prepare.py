"""Getting a fresh demo database ready from outside the process that will serve it, as
``scripts/demo``, the browser tests and the load script do: ``migrate`` then
``seed_demo``, each in a child process with the given environment."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

#: The folder of manage.py.
ROOT = Path(__file__).resolve().parent.parent


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
