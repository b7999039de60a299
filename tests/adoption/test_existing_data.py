"""A project's existing users and sessions survive adopting the suite.

``django-admin startproject`` makes the project; with ``class User(AbstractUser)`` and
nothing of the suite, Django writes users whose passwords each hasher of its default
``PASSWORD_HASHERS`` hashed (PBKDF2-SHA256, PBKDF2-SHA1, argon2, bcrypt-SHA256, scrypt)
and its ``LoginView`` signs one in (before.py). Then the project adopts the suite as
docs/adopting.md says (tests/adoption/project, database sessions kept), migrates the
same database, and after.py checks, in its own process:

- the session signed in before stays signed in (database sessions kept);
- every user signs in on the suite's login page and on Django's ``LoginView``, and the
  hash is upgraded to the suite's on the first success;
- Django's password reset mails each of them;
- the suite's sign-up refuses a taken username (in any case), one over the model's 150
  characters and one with characters the model's validator refuses, as a 422 naming the
  field (never a 500), and makes no account.

SQLite without ``DATABASE_URL``; with it, a PostgreSQL database of its own.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADOPTED_SETTINGS = Path(__file__).resolve().parent / "project" / "settings.py"
HASHERS = ["pbkdf2_sha256", "pbkdf2_sha1", "argon2", "bcrypt_sha256", "scrypt"]


def _adopted_secret_key() -> str:
    """The adopted project's SECRET_KEY: the same project, so the same key."""
    for node in ast.parse(ADOPTED_SETTINGS.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SECRET_KEY":
            return str(ast.literal_eval(node.value))
    raise AssertionError("no SECRET_KEY in the adopted settings")


def _env(pythonpath: list[Path], settings: str, database: dict[str, str]) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "PYTEST_"))
        and key not in ("APP_SECRET_KEY", "DATABASE_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE=settings,
        PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath),
        PYTHONDONTWRITEBYTECODE="1",
        **database,
    )
    return env


def _run(args: list[str], env: dict[str, str], stdin: str | None = None) -> str:
    result = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"$ {' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture
def database(tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """The environment naming the shared database for both projects, and the
    ``DATABASES`` literal the "before" settings get."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        path = tmp_path / "db.sqlite3"
        literal = repr({"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}})
        yield {"ADOPTION_SQLITE_PATH": str(path)}, literal
        return
    import psycopg

    name = f"adoption_existing_{os.getpid()}"
    parts = urlsplit(url)
    own = urlunsplit(parts._replace(path=f"/{name}"))
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    literal = repr(
        {
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": name,
                "USER": parts.username or "postgres",
                "PASSWORD": parts.password or "",
                "HOST": parts.hostname or "127.0.0.1",
                "PORT": str(parts.port or 5432),
            }
        }
    )
    try:
        yield {"DATABASE_URL": own}, literal
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def before_project(tmp_path: Path, database: tuple[dict[str, str], str]) -> Path:
    """``django-admin startproject before_site``, plus the project's user model."""
    where = tmp_path / "before"
    where.mkdir()
    _run(["-m", "django", "startproject", "before_site", str(where)], os.environ.copy())
    settings = where / "before_site" / "settings.py"
    settings.write_text(
        settings.read_text()
        + "\n# The project's own lines, before it adopted the suite.\n"
        + f"SECRET_KEY = {_adopted_secret_key()!r}\n"
        + 'INSTALLED_APPS += ["tests.adoption.before_accounts"]\n'
        + 'AUTH_USER_MODEL = "accounts.User"\n'
        + 'ROOT_URLCONF = "tests.adoption.before_urls"\n'
        + f'TEMPLATES[0]["DIRS"] = [{str(ADOPTED_SETTINGS.parent / "templates")!r}]\n'
        + f"DATABASES = {database[1]}\n"
    )
    return where


def test_sessions_and_password_hashes_written_before_adopting_keep_working(
    before_project: Path, database: tuple[dict[str, str], str]
) -> None:
    before_env = _env([before_project, ROOT], "before_site.settings", database[0])
    made: dict[str, Any] = json.loads(_run(["tests/adoption/before.py"], before_env))
    assert sorted(made["users"]) == sorted(HASHERS)

    after_env = _env([ROOT], "tests.adoption.project.settings_db_sessions", database[0])
    _run(["-m", "django", "migrate", "--verbosity", "0"], after_env)
    seen = json.loads(_run(["tests/adoption/after.py"], after_env, stdin=json.dumps(made)))

    assert seen["session"] == [200, 200], "the pre-adoption session was signed out"
    for hasher in HASHERS:
        assert seen["django_login"][hasher] == {
            "status": 302,
            "signed_in": True,
            "hash_after": "pbkdf2_sha256",
        }, hasher
        assert seen["suite_login"][hasher] == {"status": 302, "signed_in": True}, hasher
        assert seen["reset_mails"][hasher] == 1, hasher
    assert seen["signup"] == {
        "taken": {"status": 422, "codes": ["username_taken"]},
        "taken_other_case": {"status": 422, "codes": ["username_taken"]},
        "too_long": {"status": 422, "codes": ["max_length"]},
        "bad_characters": {"status": 422, "codes": ["invalid"]},
    }
    assert seen["signup_made"] == 0
