"""docs/adopting.md, end to end: an existing project (``startproject`` + ``class
User(AbstractUser)`` + the admin + ``django.contrib.auth.urls`` + its own forms and AJAX)
that adopted the suite as the page says, in tests/adoption/project.

The project runs in subprocesses, under its own settings (the main run's test settings
stay untouched), with this interpreter (``sys.executable``: the 5.2 or the 6.x venv) and
this run's ``DATABASE_URL`` (SQLite without it, PostgreSQL with it):

- ``python -m pytest -c tests/adoption/inner.ini tests/adoption/flows.py``: migrations,
  the admin with and without TOTP, createsuperuser/changepassword, Django's password
  change and reset views, ``@login_required``, the ``{% csrf_token %}`` form and the
  ``X-CSRFToken`` AJAX POST, with the suite's sessions and with database sessions kept;
- ``manage.py check`` (nothing) and ``check --deploy`` with the production settings
  (only the deliberate ``security.W003``: the suite's CsrfMiddleware replaces Django's).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: What `check --deploy` reports for the production settings, each on purpose.
DELIBERATE_DEPLOY_ITEMS = {
    # appframework.security.CsrfMiddleware replaces Django's CsrfViewMiddleware
    # (docs/security.md); Django's check only looks for its own middleware.
    "security.W003",
}


def _run(*args: str, settings: str = "tests.adoption.project.settings") -> str:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "PYTEST_")) and key != "APP_SECRET_KEY"
    }
    env.update(DJANGO_SETTINGS_MODULE=settings, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = f"$ {' '.join(args)}\n{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, output
    return output


def test_the_adopted_project_passes_its_flows() -> None:
    output = _run(
        "-m",
        "pytest",
        "-c",
        "tests/adoption/inner.ini",
        "--rootdir",
        "tests/adoption",
        "--confcutdir",
        "tests/adoption",
        "-q",
        "-s",
        "tests/adoption/flows.py",
    )
    print(output)
    wanted = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    assert f"database: {wanted}" in output, output
    # Every flow passed; none skipped, failed or errored (the summary says "passed", at most with warnings).
    assert re.search(r"^\d+ passed(, \d+ warnings?)? in ", output, re.MULTILINE), output


def test_check_reports_nothing() -> None:
    output = _run("-m", "django", "check")
    assert "System check identified no issues (0 silenced)." in output, output


def test_check_deploy_reports_only_the_deliberate_items() -> None:
    output = _run(
        "-m",
        "django",
        "check",
        "--deploy",
        "--fail-level",
        "CRITICAL",
        settings="tests.adoption.project.settings_deploy",
    )
    reported = set(re.findall(r"\(([\w.]+\.[A-Z]\d{3})\)", output))
    assert reported == DELIBERATE_DEPLOY_ITEMS, output


def test_the_adoption_migration_only_adds_the_suites_columns() -> None:
    """`makemigrations` after mixing in Authenticatable, HasRoles and MfaEnrollable: new
    columns on the existing table, nothing else (0002 was made that way)."""
    source = (HERE / "project/accounts/migrations/0002_adopt_appframework.py").read_text()
    operations = [
        (node.func.attr, next(k.value.value for k in node.keywords if k.arg == "name"))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"AddField", "AlterField", "RemoveField", "CreateModel"}
    ]
    assert sorted(operations) == [
        ("AddField", "mfa_enabled"),
        ("AddField", "mfa_last_counter"),
        ("AddField", "mfa_recovery_codes"),
        ("AddField", "mfa_secret"),
        ("AddField", "roles"),
    ]
