"""A small reader of gettext ``.po`` files: each entry's context, id, plural id,
translations and flags, enough to check a catalogue is complete."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Entry:
    msgctxt: str | None = None
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False

    @property
    def key(self) -> tuple[str | None, str]:
        return (self.msgctxt, self.msgid)

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr.values()) and "fuzzy" not in self.flags


def _string(text: str) -> str:
    value = ast.literal_eval(text.strip())
    assert isinstance(value, str), text
    return value


def read(path: Path) -> list[Entry]:
    """The entries of ``path`` (the header, msgid "", included)."""
    entries: list[Entry] = []
    entry = Entry()
    target: tuple[str, int] | None = None

    def flush() -> None:
        nonlocal entry
        if entry.msgid or entry.msgstr:
            entries.append(entry)
        entry = Entry()

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            flush()
            target = None
            continue
        if line.startswith("#~"):
            entry.obsolete = True
            continue
        if line.startswith("#,"):
            entry.flags |= {f.strip() for f in line[2:].split(",")}
            continue
        if line.startswith("#"):
            continue
        if line.startswith("msgctxt "):
            if entry.msgid or entry.msgstr:
                flush()
            entry.msgctxt = _string(line[len("msgctxt ") :])
            target = ("msgctxt", 0)
        elif line.startswith("msgid_plural "):
            entry.msgid_plural = _string(line[len("msgid_plural ") :])
            target = ("msgid_plural", 0)
        elif line.startswith("msgid "):
            if entry.msgid or entry.msgstr:
                flush()
            entry.msgid = _string(line[len("msgid ") :])
            target = ("msgid", 0)
        elif line.startswith("msgstr["):
            index = int(line[len("msgstr[") : line.index("]")])
            entry.msgstr[index] = _string(line[line.index("]") + 1 :])
            target = ("msgstr", index)
        elif line.startswith("msgstr "):
            entry.msgstr[0] = _string(line[len("msgstr ") :])
            target = ("msgstr", 0)
        elif line.startswith('"') and target is not None:
            name, index = target
            more = _string(line)
            if name == "msgstr":
                entry.msgstr[index] += more
            elif name == "msgid":
                entry.msgid += more
            elif name == "msgid_plural":
                entry.msgid_plural = (entry.msgid_plural or "") + more
            else:
                entry.msgctxt = (entry.msgctxt or "") + more
    flush()
    return entries
