"""The reference pages say what the code does, and every page is reachable.

- docs/settings.md: every ``APPFRAMEWORK`` section and key, with its real default and a
  type that admits it; every environment variable ``appframework.env`` reads, with its
  format, targets and default.
- docs/checks.md: every system check id the code can emit, with its level and whether
  it is a deployment check; no id the code cannot emit.
- docs/async.md: every public callable of the suite follows the sync/async naming rules
  the page states, apart from the exceptions it lists.
- docs/index.md links every page; every relative link of README.md and docs/ resolves.

A key, check, variable, twin or page added later without its documentation fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from asgiref.sync import iscoroutinefunction as asgiref_iscoroutinefunction

from appframework import env as env_module
from appframework.conf import AUTO, DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SUITE_PACKAGES = (
    "appframework",
    "appframework_graphql",
    "appframework_tenancy",
    "appframework_webhooks",
)
# Where system checks live: the suite, and the demo project's own deploy checks.
CHECK_SOURCES = (*SUITE_PACKAGES, "testproject")
CHECK_ID = re.compile(r"[a-z][a-z0-9_]*\.[CEWID]\d{3}")


# -- markdown helpers ------------------------------------------------------------------------
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _without_fences(text: str) -> str:
    """The text with fenced code blocks blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence is None and marker:
            fence = marker.group(1)[0] * len(marker.group(1))
            out.append("")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def _cells(line: str) -> list[str]:
    """The cells of a table row; ``\\|`` is a pipe inside a cell."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", body)]


def _tables(text: str) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """(the heading above the table, its rows as {column: cell}) for every table."""
    heading = ""
    lines = _without_fences(text).split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        is_table = (
            line.lstrip().startswith("|")
            and index + 1 < len(lines)
            and re.fullmatch(r"\s*\|?\s*:?-{3,}.*", lines[index + 1])
        )
        if not is_table:
            index += 1
            continue
        columns = [c.lower() for c in _cells(line)]
        rows = []
        index += 2
        while index < len(lines) and lines[index].lstrip().startswith("|"):
            cells = _cells(lines[index])
            assert len(cells) == len(columns), (
                f"a row under {heading!r} has {len(cells)} cells, the header {len(columns)}: "
                f"{lines[index][:100]}"
            )
            rows.append(dict(zip(columns, cells, strict=True)))
            index += 1
        yield heading, rows


def _spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


# -- docs/settings.md ----------------------------------------------------------------------
SETTINGS_PAGE = DOCS / "settings.md"
_SECTION_HEADING = re.compile(r'`APPFRAMEWORK\["(\w+)"\]`')


@cache
def _settings_sections() -> dict[str, dict[str, dict[str, str]]]:
    """{section: {key: row}} from docs/settings.md; a section without a table maps to {}."""
    text = _without_fences(_read(SETTINGS_PAGE))
    sections: dict[str, dict[str, dict[str, str]]] = {}
    for line in text.split("\n"):
        found = re.match(r"##\s+" + _SECTION_HEADING.pattern, line)
        if found:
            assert found.group(1) not in sections, f"section {found.group(1)} documented twice"
            sections[found.group(1)] = {}
    for heading, rows in _tables(_read(SETTINGS_PAGE)):
        found = _SECTION_HEADING.match(heading)
        if not found:
            continue
        for row in rows:
            keys = _spans(row["key"])
            assert len(keys) == 1, f"{heading}: key cell {row['key']!r} must be one `KEY`"
            assert keys[0] not in sections[found.group(1)], f"{heading}: {keys[0]} twice"
            sections[found.group(1)][keys[0]] = row
    return sections


def test_every_settings_section_is_documented() -> None:
    assert set(_settings_sections()) == set(DEFAULTS), (
        "docs/settings.md needs one '## `APPFRAMEWORK[\"SECTION\"]`' heading per section of "
        "appframework.conf.DEFAULTS (missing: "
        f"{sorted(set(DEFAULTS) - set(_settings_sections()))}, unknown: "
        f"{sorted(set(_settings_sections()) - set(DEFAULTS))})"
    )


@pytest.mark.parametrize("section", sorted(DEFAULTS))
def test_every_key_of_the_section_is_documented(section: str) -> None:
    documented = set(_settings_sections().get(section, {}))
    real = set(DEFAULTS[section])
    assert documented == real, (
        f"docs/settings.md, APPFRAMEWORK[{section!r}]: undocumented keys "
        f"{sorted(real - documented)}, documented keys the code does not have "
        f"{sorted(documented - real)}"
    )


def _documented_default(cell: str) -> tuple[bool, Any]:
    """(required?, value) of a default cell: ``required``, or a literal in the first
    code span (``AUTO`` is the sentinel)."""
    if cell.strip().lower().startswith("required"):
        return True, None
    spans = _spans(cell)
    assert spans, f"default cell {cell!r} has no `value`"
    if spans[0] == "AUTO":
        return False, AUTO
    try:
        return False, ast.literal_eval(spans[0])
    except (ValueError, SyntaxError):
        pytest.fail(f"default `{spans[0]}` is not a Python literal")


@pytest.mark.parametrize("section", sorted(DEFAULTS))
def test_documented_defaults_are_the_real_ones(section: str) -> None:
    wrong = []
    for key, row in _settings_sections().get(section, {}).items():
        if key not in DEFAULTS[section]:
            continue  # reported by the key-set test
        real = DEFAULTS[section][key]
        required, documented = _documented_default(row["default"])
        if required:
            if real is not None:
                wrong.append(f"{key}: documented as required, but defaults to {real!r}")
        elif repr(documented) != repr(real):
            wrong.append(f"{key}: documented {documented!r}, real {real!r}")
    assert not wrong, f"docs/settings.md, APPFRAMEWORK[{section!r}]:\n" + "\n".join(wrong)


# Names a type cell may use: Python's, the suite's sentinel, and classes the suite exports.
_TYPE_CLASS_HOMES = ("appframework.oauth", "appframework.saml", "graphql")


def _type_admits(member: str, value: Any) -> bool:
    generic = re.fullmatch(r"(list|dict)\[(.+)\]", member)
    if generic:
        container = list if generic.group(1) == "list" else dict
        if not isinstance(value, container):
            return False
        if container is list:
            return all(_type_admits(generic.group(2).strip(), item) for item in value)
        return True
    if member == "None":
        return value is None
    if member == "AUTO":
        return value is AUTO
    if member == "bool":
        return isinstance(value, bool)
    if member == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if member == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if member == "str":
        return isinstance(value, str)
    if member == "callable":
        return callable(value)
    if member == "type":
        return isinstance(value, type)
    cls = _suite_class(member)
    return isinstance(value, cls)


_PYTHON_TYPES = frozenset({"None", "AUTO", "bool", "int", "float", "str", "callable", "type"})


def _known_type(member: str) -> None:
    """Fails on a name that is neither a Python type nor a class the suite exports."""
    generic = re.fullmatch(r"(?:list|dict)\[(.+)\]", member)
    if generic:
        for inner in generic.group(1).split(","):
            _known_type(inner.strip())
    elif member not in _PYTHON_TYPES:
        _suite_class(member)


def _suite_class(name: str) -> type:
    for home in _TYPE_CLASS_HOMES:
        cls = getattr(importlib.import_module(home), name, None)
        if isinstance(cls, type):
            return cls
    raise AssertionError(
        f"type `{name}` is neither a Python type nor a class of {', '.join(_TYPE_CLASS_HOMES)}"
    )


@pytest.mark.parametrize("section", sorted(DEFAULTS))
def test_documented_types_admit_the_defaults(section: str) -> None:
    wrong = []
    for key, row in _settings_sections().get(section, {}).items():
        members = _spans(row["type"])
        if not members:
            wrong.append(f"{key}: no type")
            continue
        # Every name must be known, also where the default is required (None).
        for member in members:
            _known_type(member)
        required, _ = _documented_default(row["default"])
        if required or key not in DEFAULTS[section]:
            continue
        real = DEFAULTS[section][key]
        if not any(_type_admits(member, real) for member in members):
            wrong.append(f"{key}: default {real!r} is not a {' or '.join(members)}")
    assert not wrong, f"docs/settings.md, APPFRAMEWORK[{section!r}]:\n" + "\n".join(wrong)


# -- environment variables ------------------------------------------------------------------
_FORMATS: dict[Callable[..., Any], str] = {
    env_module.parse_bool: "boolean",
    env_module.parse_seconds: "seconds",
    env_module.parse_name: "name",
    env_module._text: "text",
    env_module._secret: "secret",
}


def _environment_rows() -> dict[str, dict[str, str]]:
    for heading, rows in _tables(_read(SETTINGS_PAGE)):
        if heading == "Environment variables":
            return {_spans(row["variable"])[0]: row for row in rows}
    pytest.fail("docs/settings.md has no table under '## Environment variables'")


def _variables_read_directly() -> set[str]:
    """Names env.py reads with a literal (``os.environ["X"]``, ``getenv("X")``,
    ``environ.get("X")``), beside its table: a later direct read must be documented too."""
    tree = ast.parse(_read(Path(env_module.__file__)))
    names = set()
    for node in ast.walk(tree):
        argument = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in {"get", "getenv", "pop"}:
                argument = node.args[0]
        elif isinstance(node, ast.Subscript):
            argument = node.slice
        if (
            isinstance(argument, ast.Constant)
            and isinstance(argument.value, str)
            and re.fullmatch(r"[A-Z][A-Z0-9_]+", argument.value)
        ):
            names.add(argument.value)
    return names


def test_every_environment_variable_is_documented() -> None:
    documented = set(_environment_rows())
    real = set(env_module.ENVIRONMENT_VARIABLES) | _variables_read_directly()
    assert documented == real, (
        "docs/settings.md, environment variables: undocumented "
        f"{sorted(real - documented)}, documented but never read {sorted(documented - real)}"
    )


def _env_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_environment_variables_are_documented_with_their_format_target_and_default() -> None:
    rows = _environment_rows()
    wrong = []
    for variable, targets, parser, default in env_module._VARIABLES:
        row = rows.get(variable)
        if row is None:
            continue  # reported by the list test
        expected_format = _FORMATS.get(parser)
        if expected_format is None:
            wrong.append(f"{variable}: parser {parser.__name__} has no documented format yet")
        elif row["format"].strip() != expected_format:
            wrong.append(
                f"{variable}: format {row['format']!r}, the parser reads {expected_format}"
            )
        real_targets = {".".join(t) if isinstance(t, tuple) else t for t in targets}
        if set(_spans(row["becomes"])) != real_targets:
            wrong.append(
                f"{variable}: becomes {_spans(row['becomes'])}, really {sorted(real_targets)}"
            )
        cell = row["default"].strip()
        if default is None:
            if not cell.lower().startswith("unset"):
                wrong.append(f"{variable}: no default in the code, documented {cell!r}")
        elif not _spans(cell) or _spans(cell)[0] != _env_text(default):
            wrong.append(f"{variable}: default {cell!r}, real `{_env_text(default)}`")
    assert not wrong, "docs/settings.md, environment variables:\n" + "\n".join(wrong)


# -- docs/checks.md -------------------------------------------------------------------------
CHECKS_PAGE = DOCS / "checks.md"
_LEVEL_CALLS = {
    "check_error": "error",
    "check_warning": "warning",
    "Error": "error",
    "Warning": "warning",
    "Info": "info",
    "Critical": "critical",
    "Debug": "debug",
}


def _source_files(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def _deploy_flags(module: ModuleType, name: str, callers: dict[str, set[str]]) -> set[bool]:
    """Whether ``module.name`` runs under ``check --deploy`` only: True/False for a
    registered check; for a helper, the flags of the registered checks calling it."""
    from django.core.checks.registry import registry

    flags: set[bool] = set()
    todo, seen = [name], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        function = getattr(module, current, None)
        if function in registry.deployment_checks:
            flags.add(True)
        elif function in registry.registered_checks:
            flags.add(False)
        else:
            todo.extend(callers.get(current, ()))
    return flags


@cache
def _emitted_checks() -> dict[str, set[tuple[str, bool]]]:
    """{check id: {(level, deploy?)}} read from the source.

    An id is a string literal that is exactly ``app.E001``-shaped; it must be the id of
    a ``checks.Error/Warning/Info(...)`` or of the suite's ``check_error/check_warning`` helpers, so
    its level is known. Whether it is a deployment check comes from Django's registry:
    the function around it, or the registered check calling that helper, is registered
    with ``deploy=True`` or not.
    """
    found: dict[str, set[tuple[str, bool]]] = {}
    stray: list[str] = []
    for package in CHECK_SOURCES:
        for path in _source_files(package):
            tree = ast.parse(_read(path))
            module_name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            functions = [
                node
                for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            # callee -> the module's functions calling it by name
            callers: dict[str, set[str]] = {}
            for function in functions:
                for call in ast.walk(function):
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                        callers.setdefault(call.func.id, set()).add(function.name)
            for function in functions:
                placed: set[int] = set()
                for call in ast.walk(function):
                    if not isinstance(call, ast.Call):
                        continue
                    func = call.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    level = _LEVEL_CALLS.get(name)
                    if level is None:
                        continue
                    candidates = [
                        *call.args[:1],
                        *(k.value for k in call.keywords if k.arg == "id"),
                    ]
                    for node in candidates:
                        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                            continue
                        if not CHECK_ID.fullmatch(node.value):
                            continue
                        placed.add(id(node))
                        module = importlib.import_module(module_name)
                        flags = _deploy_flags(module, function.name, callers)
                        if len(flags) != 1:
                            stray.append(
                                f"{module_name}.{function.name} emits {node.value}, but "
                                + (
                                    "no registered check runs it"
                                    if not flags
                                    else "deploy and non-deploy checks both run it"
                                )
                            )
                            continue
                        found.setdefault(node.value, set()).add((level, flags.pop()))
                for node in ast.walk(function):
                    if (
                        isinstance(node, ast.Constant)
                        and isinstance(node.value, str)
                        and CHECK_ID.fullmatch(node.value)
                        and id(node) not in placed
                    ):
                        stray.append(
                            f"{module_name}.{function.name}: {node.value} outside a check call"
                        )
    assert not stray, "check ids whose level cannot be read:\n" + "\n".join(stray)
    assert found, "no check ids found in the source: the scan is broken"
    return found


@cache
def _documented_checks() -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    for _heading, table in _tables(_read(CHECKS_PAGE)):
        for row in table:
            ids = [s for s in _spans(row["id"]) if CHECK_ID.fullmatch(s)]
            assert len(ids) == 1, f"docs/checks.md: id cell {row['id']!r} must hold one `app.E001`"
            assert ids[0] not in rows, f"docs/checks.md lists {ids[0]} twice"
            rows[ids[0]] = row
    return rows


def test_every_check_id_the_code_can_emit_is_documented() -> None:
    missing = sorted(set(_emitted_checks()) - set(_documented_checks()))
    assert not missing, f"docs/checks.md lacks these check ids: {missing}"


def test_every_documented_check_id_exists_in_the_code() -> None:
    unknown = sorted(set(_documented_checks()) - set(_emitted_checks()))
    assert not unknown, f"docs/checks.md lists ids no code emits: {unknown}"


def test_documented_check_levels_match_the_code() -> None:
    wrong = []
    for check_id, row in _documented_checks().items():
        real = _emitted_checks().get(check_id)
        if real is None:
            continue
        level = row["level"].strip()
        documented = (level.split(" ")[0], "(deploy)" in level)
        if real != {documented}:
            shown = ", ".join(f"{lv}{' (deploy)' if dep else ''}" for lv, dep in sorted(real))
            wrong.append(f"{check_id}: documented {level!r}, the code: {shown}")
    assert not wrong, "docs/checks.md:\n" + "\n".join(wrong)


def test_every_check_row_carries_the_anchor_its_hint_links_to() -> None:
    # Hints end with "See docs/checks.md#<app>-<id>": the row must hold that anchor.
    wrong = [
        check_id
        for check_id, row in _documented_checks().items()
        if f'<a id="{check_id.replace(".", "-")}"></a>' not in row["id"]
    ]
    assert not wrong, f"docs/checks.md rows without their <a id> anchor: {wrong}"


def test_check_ids_mentioned_anywhere_in_the_docs_exist() -> None:
    mention = re.compile(r"\b(?:appframework(?:_[a-z]+)?|blog)\.[CEWID]\d{3}\b")
    unknown = []
    for page in _pages():
        for number, line in enumerate(_read(page).split("\n"), start=1):
            for check_id in mention.findall(line):
                if check_id not in _emitted_checks():
                    unknown.append(f"{page.relative_to(ROOT)}:{number}: {check_id}")
    assert not unknown, "the docs name check ids no code emits:\n" + "\n".join(unknown)


# -- docs/async.md ------------------------------------------------------------------------
ASYNC_PAGE = DOCS / "async.md"


def _is_async(obj: Any) -> bool:
    return (
        inspect.iscoroutinefunction(obj)
        or inspect.isasyncgenfunction(obj)
        or asgiref_iscoroutinefunction(obj)
        or isinstance(obj, SyncToAsync)
    )


def _ours(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in SUITE_PACKAGES


@cache
def _public_modules() -> tuple[ModuleType, ...]:
    """Every module of the suite that is not private (no ``_`` part) nor a migration."""
    modules = []
    for top in SUITE_PACKAGES:
        package = importlib.import_module(top)
        names = [top] + [info.name for info in pkgutil.walk_packages(package.__path__, f"{top}.")]
        for name in names:
            parts = name.split(".")
            if any(p.startswith("_") for p in parts) or "migrations" in parts:
                continue
            modules.append(importlib.import_module(name))
    return tuple(modules)


Namespace = tuple[str, dict[str, Any], set[str]]


def _namespaces(modules: tuple[ModuleType, ...]) -> Iterator[Namespace]:
    """(label, {name: callable}, names the suite defines there) for each module's
    ``__all__`` and each of the suite's classes in it. Methods Django defines on a base
    class (``aget_user``, ``asave``) are left out of the names to check: they are Django's."""
    seen: set[int] = set()
    for module in modules:
        exported = {n: getattr(module, n) for n in getattr(module, "__all__", ())}
        functions = {n: o for n, o in exported.items() if callable(o) and not inspect.isclass(o)}
        yield module.__name__, functions, set(functions)
        for name, cls in exported.items():
            if not inspect.isclass(cls) or not _ours(cls) or id(cls) in seen:
                continue
            seen.add(id(cls))
            members: dict[str, Any] = {}
            for attr in dir(cls):
                if attr.startswith("_"):
                    continue
                try:
                    value = inspect.getattr_static(cls, attr)
                except AttributeError:
                    continue
                if isinstance(value, staticmethod | classmethod):
                    value = value.__func__
                if callable(value) and not inspect.isclass(value):
                    members[attr] = value
            django_names = {
                attr
                for base in cls.__mro__[1:]
                if not _ours(base) and base is not object
                for attr in vars(base)
            }
            defined = {
                attr
                for base in cls.__mro__
                if _ours(base)
                for attr in vars(base)
                if attr in members and attr not in django_names
            }
            yield f"{module.__name__}.{name}", members, defined


def _rule_breaks(modules: tuple[ModuleType, ...]) -> dict[str, str]:
    """{"module.name" or "module.Class.name": the rule it breaks}."""
    breaks: dict[str, str] = {}
    for label, members, defined in _namespaces(modules):
        for name in sorted(defined):
            obj = members[name]
            where = f"{label}.{name}"
            if name.endswith("_sync"):
                plain = members.get(name[: -len("_sync")])
                if _is_async(obj):
                    breaks[where] = "ends in _sync but is a coroutine function"
                elif plain is None or not _is_async(plain):
                    breaks[where] = (
                        f"ends in _sync, but no coroutine function {name[:-5]} is beside it"
                    )
            elif _is_async(obj):
                sync_twin = members.get(f"{name}_sync")
                plain = members.get(name[1:]) if name.startswith("a") else None
                if sync_twin is not None and not _is_async(sync_twin):
                    continue  # rule 1
                if plain is not None and not _is_async(plain):
                    continue  # rule 2
                breaks[where] = (
                    f"coroutine function without a sync twin ({name}_sync, or a sync {name[1:]})"
                )
            elif name.startswith("a") and name[1:] in members and name[1:] in defined:
                breaks[where] = f"sync, yet named like the async twin of {name[1:]}"
    return breaks


def _resolve(dotted: str) -> Any:
    """The object at ``module[.Class].name``."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            obj = getattr(obj, part)
        return obj
    raise LookupError(dotted)


def _documented_exceptions() -> dict[str, str]:
    """{async name: its sync twin} from the table under '## Exceptions' of docs/async.md."""
    for heading, rows in _tables(_read(ASYNC_PAGE)):
        if heading == "Exceptions":
            return {_spans(row["async"])[0]: _spans(row["sync twin"])[0] for row in rows}
    return {}


def test_every_public_callable_follows_the_sync_async_naming_rules() -> None:
    excepted = [_resolve(name) for name in _documented_exceptions()]
    breaks = {
        where: why
        for where, why in _rule_breaks(_public_modules()).items()
        if not any(_resolve(where) is obj for obj in excepted)
    }
    assert not breaks, (
        "names that break the rules of docs/async.md (rename, add the twin, or list the "
        "exception there with its reason):\n"
        + "\n".join(f"{where}: {why}" for where, why in breaks.items())
    )


def test_each_documented_exception_still_breaks_the_rules_and_names_its_twin() -> None:
    exceptions = _documented_exceptions()
    assert exceptions, "docs/async.md lists its exceptions in a table under '## Exceptions'"
    broken = [_resolve(where) for where in _rule_breaks(_public_modules())]
    for async_name, sync_name in exceptions.items():
        obj, twin = _resolve(async_name), _resolve(sync_name)
        assert any(obj is b for b in broken), (
            f"{async_name} follows the rules now: drop it from the exceptions of docs/async.md"
        )
        assert _is_async(obj), f"{async_name} is listed as an async twin but is not async"
        assert not _is_async(twin), f"{sync_name} is listed as a sync twin but is async"


Twin = tuple[str, str, Any, Any]  # (label of the plain name, rule, plain, twin)


def _twins(modules: tuple[ModuleType, ...]) -> list[Twin]:
    pairs: list[Twin] = []
    for label, members, defined in _namespaces(modules):
        for name in sorted(defined):
            obj = members[name]
            if name.endswith("_sync") and _is_async(members.get(name[:-5])):
                pairs.append((f"{label}.{name[:-5]}", "1", members[name[:-5]], obj))
            elif (
                name.startswith("a")
                and _is_async(obj)
                and name[1:] in members
                and not _is_async(members[name[1:]])
            ):
                pairs.append((f"{label}.{name[1:]}", "2", members[name[1:]], obj))
    return pairs


def _parameters(func: Any) -> tuple[list[str], set[str], bool]:
    """(positional parameter names, keyword-only names, takes ``**kwargs``)."""
    parameters = inspect.signature(func).parameters.values()
    kind = inspect.Parameter
    positional = [
        p.name
        for p in parameters
        if p.kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD, kind.VAR_POSITIONAL)
    ]
    keyword = {p.name for p in parameters if p.kind is kind.KEYWORD_ONLY}
    return positional, keyword, any(p.kind is kind.VAR_KEYWORD for p in parameters)


def test_twins_take_the_same_parameters() -> None:
    wrong = []
    for label, _rule, plain, twin in _twins(_public_modules()):
        plain_pos, plain_kw, plain_var = _parameters(plain)
        twin_pos, twin_kw, twin_var = _parameters(twin)
        if plain_pos != twin_pos:
            wrong.append(f"{label}: positional {plain_pos} vs {twin_pos}")
        # A twin forwarding **kwargs accepts the other's keyword-only parameters.
        if (plain_kw - twin_kw and not twin_var) or (twin_kw - plain_kw and not plain_var):
            wrong.append(f"{label}: keyword-only {sorted(plain_kw)} vs {sorted(twin_kw)}")
    assert not wrong, "twins whose parameters differ:\n" + "\n".join(wrong)


def _short(label: str) -> str:
    """``appframework.auth.AuthManager.attempt`` -> ``AuthManager.attempt``; a function
    keeps its bare name."""
    parts = label.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def _listed_twins() -> dict[str, tuple[str, str]]:
    """{plain name: (rule, twin name)} from the bullet lists under '## Rule 1' and
    '## Rule 2' of docs/async.md. A pair is "`plain` / `twin`"; a bare name after a
    ``Class.method`` pair of the same bullet belongs to that class."""
    listed: dict[str, tuple[str, str]] = {}
    rule, owner = None, ""
    for line in _without_fences(_read(ASYNC_PAGE)).split("\n"):
        heading = re.match(r"## Rule (\d)", line)
        if line.startswith("## "):
            rule = heading.group(1) if heading else None
            continue
        if rule not in {"1", "2"} or not line.startswith(("- ", "  ")):
            continue
        if line.startswith("- "):
            owner = ""
        for plain, twin in re.findall(r"`([\w.]+)` / `([\w.]+)`", line):
            if "." in plain:
                owner = plain.rsplit(".", 1)[0]
            elif owner:
                plain = f"{owner}.{plain}"
            listed[plain] = (rule, twin)
    return listed


def test_the_rule_lists_name_every_twin_of_the_packages() -> None:
    # What `from appframework.auth import ...` and the like give: each package's __all__.
    packages = tuple(m for m in _public_modules() if hasattr(m, "__path__"))
    listed = _listed_twins()
    missing = sorted(
        f"{_short(label)} (rule {rule})"
        for label, rule, _plain, _twin in _twins(packages)
        if listed.get(_short(label), ("", ""))[0] != rule
    )
    assert not missing, "docs/async.md does not list these twins under their rule:\n" + "\n".join(
        missing
    )


def test_every_twin_the_rule_lists_name_exists() -> None:
    real = {_short(label): rule for label, rule, _p, _t in _twins(_public_modules())}
    listed = _listed_twins()
    assert listed, "no twins found under '## Rule 1' / '## Rule 2' of docs/async.md"
    wrong = []
    for plain, (rule, twin) in listed.items():
        expected = (
            f"{plain.rsplit('.', 1)[-1]}_sync" if rule == "1" else f"a{plain.rsplit('.', 1)[-1]}"
        )
        if real.get(plain) != rule:
            wrong.append(
                f"{plain}: listed under rule {rule}, the code: {real.get(plain, 'no twin')}"
            )
        if twin.rsplit(".", 1)[-1] != expected:
            wrong.append(f"{plain} / {twin}: rule {rule} names the twin {expected}")
    assert not wrong, "docs/async.md:\n" + "\n".join(wrong)


def _one_name_table() -> dict[str, str]:
    for heading, rows in _tables(_read(ASYNC_PAGE)):
        if heading.startswith("Rule 4"):
            return {_spans(row["name"])[0]: row["kind"] for row in rows}
    pytest.fail("docs/async.md has no table under '## Rule 4'")


def _find_public(name: str) -> Any:
    for module in _public_modules():
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    raise LookupError(f"{name} is in no __all__ of the suite")


def test_every_public_middleware_is_listed_and_runs_sync_and_async() -> None:
    listed = _one_name_table()
    middleware = {
        name
        for module in _public_modules()
        for name in getattr(module, "__all__", ())
        if name.endswith("Middleware") and inspect.isclass(getattr(module, name))
    }
    assert middleware <= set(listed), (
        f"docs/async.md rule 4 lacks {sorted(middleware - set(listed))}"
    )

    def sync_handler(request: Any) -> Any:
        return None

    async def async_handler(request: Any) -> Any:
        return None

    for name in middleware:
        cls = _find_public(name)
        assert cls.sync_capable and cls.async_capable, f"{name} is not sync and async capable"
        assert _is_async(cls(async_handler)), f"{name} around an async handler is not async"
        assert not _is_async(cls(sync_handler)), f"{name} around a sync handler is not sync"


def test_the_listed_decorators_keep_the_kind_of_the_view() -> None:
    def view(request: Any) -> Any:
        return None

    async def aview(request: Any) -> Any:
        return None

    decorators = [n for n, kind in _one_name_table().items() if kind.startswith("decorator")]
    assert decorators, "docs/async.md rule 4 lists no decorator"
    for name in decorators:
        decorator = _find_public(name)
        # A decorator factory (authorized("ability")) gives the decorator when called.
        if name == "authorized":
            decorator = decorator("any-ability")
        assert _is_async(decorator(aview)), f"@{name} on an async view is not async"
        assert not _is_async(decorator(view)), f"@{name} on a sync view is not sync"


def test_gate_checks_may_be_sync_or_async_under_both_entry_points() -> None:
    from asgiref.sync import async_to_sync

    from appframework.authorization import Gate

    async def async_check(user: Any) -> bool:
        return True

    def sync_check(user: Any) -> bool:
        return True

    gate = Gate()
    gate.define("sync", sync_check)
    gate.define("async", async_check)
    for ability in ("sync", "async"):
        assert gate.allows_sync(object(), ability)
        assert async_to_sync(gate.allows)(object(), ability)


# -- docs/index.md and links ------------------------------------------------------------
INDEX_PAGE = DOCS / "index.md"
_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_HTML_LINK = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.IGNORECASE)


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _links(path: Path) -> Iterator[tuple[int, str]]:
    """(line, target) of every link outside code blocks and code spans."""
    for number, line in enumerate(_without_fences(_read(path)).split("\n"), start=1):
        prose = re.sub(r"`[^`]*`", "", line)
        for pattern in (_LINK, _HTML_LINK):
            for target in pattern.findall(prose):
                yield number, target
        for target in _REFERENCE_LINK.findall(prose):
            yield number, target


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped
    (letters, digits, ``_`` and ``-`` kept), spaces to ``-``."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML (<a id>) is not part of it
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -" or category[0] in "LMN" or category == "Pc":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


@cache
def _anchors(path: Path) -> frozenset[str]:
    text = _read(path)
    anchors: set[str] = set(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", text))
    counts: dict[str, int] = {}
    for line in _without_fences(text).split("\n"):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = _slug(heading.group(1))
            # A repeated heading gets -1, -2, ... as on GitHub.
            seen = counts.get(slug, 0)
            anchors.add(slug if seen == 0 else f"{slug}-{seen}")
            counts[slug] = seen + 1
    return frozenset(anchors)


def test_every_relative_link_of_the_docs_resolves() -> None:
    broken = []
    for page in _pages():
        for number, target in _links(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
                continue  # http:, https:, mailto:: not checked here
            where = f"{page.relative_to(ROOT)}:{number}: {target}"
            path_part, _, anchor = target.partition("#")
            destination = (page.parent / path_part).resolve() if path_part else page
            if not destination.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
                broken.append(f"{where} (no heading or id {anchor!r} in {destination.name})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_index_links_every_docs_page() -> None:
    linked = {
        (INDEX_PAGE.parent / target.partition("#")[0]).resolve()
        for _, target in _links(INDEX_PAGE)
        if target.partition("#")[0].endswith(".md")
    }
    pages = {page.resolve() for page in DOCS.rglob("*.md")} - {INDEX_PAGE.resolve()}
    missing = sorted(str(page.relative_to(ROOT)) for page in pages - linked)
    assert not missing, f"docs/index.md does not link: {missing}"


def test_the_index_gives_each_page_one_line() -> None:
    # "- [page.md](page.md): what it covers" — a link alone tells a reader nothing.
    bare = [
        line
        for line in _read(INDEX_PAGE).split("\n")
        if line.startswith("- [") and not re.search(r"\]\([^)]+\):\s*\S", line)
    ]
    assert not bare, "docs/index.md entries without a description:\n" + "\n".join(bare)
