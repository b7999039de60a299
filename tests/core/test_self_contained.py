"""The repository stands alone: no file points its reader at a document it does not ship.

Docs, docstrings, comments, test names and error messages must say what they mean in the
project's own words rather than cite the planning documents the code was built from (a
specification, a design document, working notes kept outside the repository). The
patterns below are assembled from pieces so this file does not match itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import skip_or_fail_on_ci

ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()

# Kinds of file a reader reads: source, docs, templates, config, scripts.
SUFFIXES = frozenset({".py", ".md", ".html", ".txt", ".toml", ".cfg", ".ini", ".sh"})

_SPEC = "SP" + "EC"
_DESIGN = "DES" + "IGN"
_NOTES = "re" + "search"
_SHARED = "sha" + "red"

# (what the hit cites, pattern)
CITATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the specification document", re.compile(rf"\b{_SPEC}\b")),
    ("a planning document", re.compile(rf"\b(?:{_SPEC}|{_DESIGN})\.md\b", re.IGNORECASE)),
    ("a path outside the repository", re.compile(rf"\.\./{_SHARED}\b|\b{_SHARED}/{_NOTES}\b")),
    ("the working notes", re.compile(rf"\b{_NOTES}\b", re.IGNORECASE)),
)


def _git_files(*args: str) -> list[str]:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", *args],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def _files_to_check() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        skip_or_fail_on_ci("not a git checkout: the tracked files cannot be listed")
    # Tracked files, plus new files not yet added (but not ignored ones).
    names = set(_git_files()) | set(_git_files("--others", "--exclude-standard"))
    return sorted(
        name
        for name in names
        if name != THIS_FILE
        and (Path(name).suffix in SUFFIXES or name.startswith("scripts/"))
        and (ROOT / name).is_file()
    )


def test_no_file_cites_documents_outside_the_repository() -> None:
    hits = []
    for name in _files_to_check():
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            cited = [what for what, pattern in CITATIONS if pattern.search(line)]
            if cited:
                hits.append(f"{name}:{number}: cites {', '.join(cited)}: {line.strip()[:120]}")
    assert not hits, (
        "Files cite documents that are not in the repository; say what is meant in the "
        "project's own words instead:\n" + "\n".join(hits)
    )


def test_the_patterns_catch_what_they_are_meant_to() -> None:
    cited = [
        f"Exempt by {_SPEC} rule 3",
        f"see {_DESIGN}.md",
        f"see {_SPEC.lower()}.md",
        f"in ../{_SHARED}/{_NOTES}/auth.md",
        f"as {_NOTES.capitalize()} X4 asks",
    ]
    clean = [
        f"where the HTTP {_SPEC.lower()} itself recommends 200",
        "importlib.util.spec_from_file_location",
        "the design of the Gate",
    ]
    assert all(any(p.search(line) for _, p in CITATIONS) for line in cited)
    assert not any(p.search(line) for line in clean for _, p in CITATIONS)
