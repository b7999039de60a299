"""The demo settings' safe defaults: no committed secret key, DEBUG off unless asked.

``load_or_create_secret_key`` is tested in a temporary directory; the settings module
itself is imported in a subprocess from a copy placed in a temporary directory, so these
tests never write next to the real ``manage.py``.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from testproject.settings import load_or_create_secret_key
from tests.conftest import skip_or_fail_on_ci

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "testproject" / "settings.py"


# -- the key file ------------------------------------------------------------------------------
def test_first_use_creates_a_random_key_readable_by_the_owner_only(tmp_path: Path) -> None:
    path = tmp_path / ".demo-secret-key"
    key = load_or_create_secret_key(path)
    assert len(key) >= 50
    assert path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".demo-secret-key"]  # no temp files left


def test_later_uses_read_the_same_key(tmp_path: Path) -> None:
    path = tmp_path / ".demo-secret-key"
    assert load_or_create_secret_key(path) == load_or_create_secret_key(path)


def test_each_machine_gets_its_own_key(tmp_path: Path) -> None:
    one = load_or_create_secret_key(tmp_path / "a")
    two = load_or_create_secret_key(tmp_path / "b")
    assert one != two


def test_an_existing_key_is_kept(tmp_path: Path) -> None:
    path = tmp_path / ".demo-secret-key"
    path.write_text("kept-key\n")
    assert load_or_create_secret_key(path) == "kept-key"


def test_an_empty_file_is_filled(tmp_path: Path) -> None:
    path = tmp_path / ".demo-secret-key"
    path.write_text("")
    key = load_or_create_secret_key(path)
    assert key and path.read_text().strip() == key


def test_unwritable_location_falls_back_to_a_per_process_key(tmp_path: Path) -> None:
    # A directory that does not exist stands for a read-only checkout (root, which may
    # run these tests, ignores permission bits).
    path = tmp_path / "missing" / ".demo-secret-key"
    one, two = load_or_create_secret_key(path), load_or_create_secret_key(path)
    assert len(one) >= 50 and len(two) >= 50
    assert one != two
    assert not path.parent.exists()


def test_unreadable_file_falls_back_too(tmp_path: Path) -> None:
    path = tmp_path / ".demo-secret-key"
    path.mkdir()  # reading a directory fails
    assert len(load_or_create_secret_key(path)) >= 50


def test_processes_starting_together_agree_on_one_key(tmp_path: Path) -> None:
    """runserver's reloader starts two processes at once; both must sign with one key."""
    path = tmp_path / ".demo-secret-key"
    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = set(pool.map(lambda _: load_or_create_secret_key(path), range(32)))
    assert keys == {path.read_text().strip()}


# -- the settings module ---------------------------------------------------------------------
def _import_settings(tmp_path: Path, **env: str) -> dict[str, str]:
    """Import a copy of testproject/settings.py living in ``tmp_path/proj/``."""
    package = tmp_path / "proj"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    shutil.copy(SETTINGS, package / "settings.py")
    environ = {
        k: v for k, v in os.environ.items() if k not in ("DEBUG", "APP_SECRET_KEY", "DATABASE_URL")
    }
    environ.update(env)
    environ["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    code = (
        "import proj.settings as s; "
        "print(s.DEBUG); print(s.SECRET_KEY); print(s.DEMO_SECRET_KEY_FILE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return {"DEBUG": out[0], "SECRET_KEY": out[1], "DEMO_SECRET_KEY_FILE": out[2]}


def test_settings_default_to_debug_off_and_a_key_file_next_to_manage_py(tmp_path: Path) -> None:
    values = _import_settings(tmp_path)
    key_file = tmp_path / ".demo-secret-key"
    assert values["DEBUG"] == "False"
    assert values["DEMO_SECRET_KEY_FILE"] == str(key_file)
    assert values["SECRET_KEY"] == key_file.read_text().strip()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    # The next start reads the same key: sessions survive a restart.
    assert _import_settings(tmp_path)["SECRET_KEY"] == values["SECRET_KEY"]


def test_debug_1_turns_debug_on(tmp_path: Path) -> None:
    assert _import_settings(tmp_path, DEBUG="1")["DEBUG"] == "True"
    assert _import_settings(tmp_path, DEBUG="true")["DEBUG"] == "False"  # only "1" means on


def test_app_secret_key_wins_and_no_file_is_written(tmp_path: Path) -> None:
    values = _import_settings(tmp_path, APP_SECRET_KEY="from-the-environment")
    assert values["SECRET_KEY"] == "from-the-environment"
    assert not (tmp_path / ".demo-secret-key").exists()


def test_no_secret_key_constant_in_the_repository() -> None:
    source = SETTINGS.read_text()
    assert "demo-only-insecure-key" not in source
    assert "SECRET_KEY = load_or_create_secret_key(" in source


def test_the_key_file_is_git_ignored() -> None:
    patterns = (ROOT / ".gitignore").read_text().splitlines()
    assert any(line.strip().startswith(".demo-secret-key") for line in patterns)


def test_git_agrees_the_key_file_is_ignored() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        skip_or_fail_on_ci("git is not installed, or this is not a git checkout")
    for name in (".demo-secret-key", ".demo-secret-key.abc123"):  # the key, a temp file
        result = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT, capture_output=True)
        assert result.returncode == 0, name


def test_scripts_demo_turns_debug_on() -> None:
    script = (ROOT / "scripts" / "demo").read_text()
    assert "export DEBUG=1" in script
