"""The shipped translations: German, French and Spanish catalogues of every string the
account layer marks (pages, forms, mails, errors, the admin's), complete and compiled.

The strings are extracted afresh from the source with Django's ``makemessages`` (into a
copy of the package), so a string marked since the catalogues were last updated fails
here until it is translated (``scripts/messages`` updates and compiles them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail_on_ci

from .po import Entry, read

LANGUAGES = ("de", "fr", "es")
PACKAGE = Path(__file__).resolve().parents[2] / "appframework"
REPO = PACKAGE.parent


def _catalogue(language: str) -> Path:
    return PACKAGE / "auth" / "locale" / language / "LC_MESSAGES" / "django.po"


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str | None, str], Entry]:
    """Every marked string of the package now, by (context, id)."""
    if shutil.which("xgettext") is None:
        skip_or_fail_on_ci("xgettext (the gettext package) is not installed")
    work = tmp_path_factory.mktemp("messages")
    shutil.copytree(PACKAGE, work / "appframework", ignore=shutil.ignore_patterns("locale"))
    (work / "appframework" / "locale").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "django", "makemessages", "-l", "xx", "--no-wrap"],
        cwd=work,
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "PYTHONPATH": str(REPO),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    entries = read(work / "appframework" / "locale" / "xx" / "LC_MESSAGES" / "django.po")
    return {e.key: e for e in entries if e.msgid}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_marked_string_has_a_translation(
    language: str, extracted: dict[tuple[str | None, str], Entry]
) -> None:
    shipped = {e.key: e for e in read(_catalogue(language)) if e.msgid and not e.obsolete}
    missing = sorted(msgid for key, _e in extracted.items() if key not in shipped for msgid in [key[1]])
    untranslated = sorted(
        key[1] for key in extracted if key in shipped and not shipped[key].translated
    )
    assert not missing, f"{language}: {len(missing)} strings not in the catalogue: {missing[:10]}"
    assert not untranslated, f"{language}: {len(untranslated)} untranslated: {untranslated[:10]}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_plural_forms_are_all_translated(language: str) -> None:
    for entry in read(_catalogue(language)):
        if entry.msgid_plural and not entry.obsolete:
            assert len(entry.msgstr) >= 2 and all(entry.msgstr.values()), entry.msgid


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalogue_is_the_current_one(language: str, tmp_path: Path) -> None:
    if shutil.which("msgfmt") is None:
        skip_or_fail_on_ci("msgfmt (the gettext package) is not installed")
    compiled = tmp_path / "django.mo"
    subprocess.run(
        ["msgfmt", "--check-format", "-o", str(compiled), str(_catalogue(language))], check=True
    )
    shipped = _catalogue(language).with_suffix(".mo")
    assert shipped.read_bytes() == compiled.read_bytes(), f"run scripts/messages ({language})"
