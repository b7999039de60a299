"""Finds the fenced blocks of README.md and docs/**/*.md and runs the Python ones.

The convention (the ``<!-- sample: ... -->`` comments) is described at the top of
tests/docs/test_code_samples.py; this module is its machinery: the collector, the
directive parser, and the executor (plain code, settings fragments, top-level ``await``,
model classes in an isolated app registry, values of expression statements).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: A fence opens with three or more backticks or tildes, possibly indented (a block in
#: a list item); the info string's first word is the language.
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
#: The one directive form; anything else starting with "<!-- sample" is an error.
_DIRECTIVE = re.compile(r"^<!--\s*sample:\s*(?P<body>.*?)\s*-->$")
_NOT_RUN = re.compile(r"(?:^|\s)not run:\s*(?P<reason>.*)$")

PYTHON_LANGUAGES = frozenset({"python", "py", "python3", "pycon"})
KINDS = frozenset({"code", "settings"})


class SampleError(Exception):
    """A block or directive the convention does not accept."""


@dataclass(frozen=True)
class Directive:
    kind: str = "code"
    continues: bool = False
    setups: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    raises: str | None = None
    postgresql: bool = False
    not_run: str | None = None


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository, e.g. "docs/webhooks.md"
    line: int  # 1-based line of the opening fence
    language: str  # first word of the info string, lower case; "" when none
    text: str  # the content, with the fence's indentation removed
    directive: Directive | None
    directive_error: str | None = None

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def is_python(self) -> bool:
        return self.language in PYTHON_LANGUAGES

    @property
    def first_content_line(self) -> int:
        return self.line + 1

    @property
    def settings(self) -> Directive:
        return self.directive or Directive()


def parse_directive(body: str) -> Directive:
    """``settings continues setup=a,b check=c raises=E postgresql not run: reason``."""
    not_run = None
    match = _NOT_RUN.search(body)
    if match:
        not_run = match.group("reason").strip()
        if not not_run:
            raise SampleError("'not run:' needs a reason after the colon")
        body = body[: match.start()]
    values: dict[str, Any] = {"not_run": not_run}
    for word in body.split():
        name, eq, value = word.partition("=")
        if name in KINDS and not eq:
            values["kind"] = name
        elif name == "continues" and not eq:
            values["continues"] = True
        elif name == "postgresql" and not eq:
            values["postgresql"] = True
        elif name in ("setup", "check") and eq and value:
            values[f"{name}s"] = tuple(v for v in value.split(",") if v)
        elif name == "raises" and eq and value:
            values["raises"] = value
        else:
            raise SampleError(f"unknown word {word!r} in the sample directive")
    return Directive(**values)


def markdown_files(root: Path = ROOT) -> list[Path]:
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [f for f in files if f.is_file()]


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


def collect_file(path: Path, root: Path = ROOT) -> list[Block]:
    """Every fenced block of one file. An unterminated fence or a directive that is not
    directly above a fence raises SampleError: a sample must never be skipped silently."""
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    used_directives: set[int] = set()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = opening.group("indent"), opening.group("fence")
        info = opening.group("info").strip()
        if fence[0] == "`" and "`" in info:
            index += 1  # inline code that starts a line, not a fence
            continue
        start = index
        body: list[str] = []
        index += 1
        closed = False
        while index < len(lines):
            closing = _FENCE.match(lines[index])
            if (
                closing
                and closing.group("fence")[0] == fence[0]
                and len(closing.group("fence")) >= len(fence)
                and not closing.group("info").strip()
                and len(closing.group("indent")) <= len(indent) + 3
            ):
                closed = True
                break
            body.append(_dedent(lines[index], indent))
            index += 1
        if not closed:
            raise SampleError(f"{rel}:{start + 1}: the fence is never closed")
        index += 1
        directive = None
        error = None
        above = lines[start - 1].strip() if start > 0 else ""
        if above.startswith("<!--") and "sample" in above:
            used_directives.add(start - 1)
            match = _DIRECTIVE.match(above)
            try:
                if not match:
                    raise SampleError(f"malformed sample directive {above!r}")
                directive = parse_directive(match.group("body"))
            except SampleError as exc:
                error = str(exc)
        language = info.split()[0].lower() if info else ""
        blocks.append(Block(rel, start + 1, language, "\n".join(body) + "\n", directive, error))
    for number, line in enumerate(lines):
        if line.strip().startswith("<!-- sample") and number not in used_directives:
            raise SampleError(
                f"{rel}:{number + 1}: a sample directive must be on the line directly "
                "above the block's opening fence"
            )
    return blocks


def collect(root: Path = ROOT) -> list[Block]:
    return [block for path in markdown_files(root) for block in collect_file(path, root)]


def chain(block: Block, blocks: list[Block]) -> list[Block]:
    """``block`` and, when it continues, the python blocks of the same kind before it on
    its page that it continues (recursively), first to last."""
    result = [block]
    current = block
    while current.settings.continues:
        earlier = [
            b
            for b in blocks
            if b.path == current.path
            and b.line < current.line
            and b.is_python
            and b.settings.kind == current.settings.kind
        ]
        if not earlier:
            raise SampleError(f"{current.id} continues, but no earlier block of its kind exists")
        current = earlier[-1]
        result.insert(0, current)
    return result


# -- execution ----------------------------------------------------------------------------

#: ``# -> <literal>`` anywhere in the statement's comment; text may follow the literal.
_CLAIM = re.compile(r"#[^#]*?->\s*(?P<value>.+?)\s*$")


@dataclass
class Run:
    """What one executed chain left behind, for the checks."""

    block: Block
    namespace: dict[str, Any]
    #: Values of expression statements (outside functions and classes): (path, line, source, value).
    values: list[tuple[str, int, str, Any]] = field(default_factory=list)
    exception: BaseException | None = None
    pytest_request: Any = None

    def value(self, source_start: str) -> Any:
        """The value of the last expression statement whose source starts with ``source_start``."""
        found = [v for (_, _, src, v) in self.values if src.startswith(source_start)]
        if not found:
            raise AssertionError(f"no expression statement starting with {source_start!r} ran")
        return found[-1]

    def __getitem__(self, name: str) -> Any:
        return self.namespace[name]


class _RecordExpressions(ast.NodeTransformer):
    """``expr`` → ``__sample_record__(line, expr)``, outside function and class bodies,
    so a check can see what each statement of the sample evaluated to."""

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Constant):  # `...` bodies, docstrings
            return node
        call = ast.Call(
            func=ast.Name("__sample_record__", ast.Load()),
            args=[ast.Constant(node.lineno), node.value],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(call), node)


def compile_block(block: Block) -> Any:
    source = block.text
    tree = ast.parse(source, filename=str(ROOT / block.path), mode="exec")
    tree = _RecordExpressions().visit(tree)
    ast.fix_missing_locations(tree)
    # Tracebacks point at the markdown file's own lines.
    ast.increment_lineno(tree, block.first_content_line - 1)
    return compile(
        tree,
        str(ROOT / block.path),
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
        dont_inherit=True,
    )


def _run_coroutine(coroutine: Any) -> Any:
    # async_to_sync from the test's own thread: thread-sensitive sync code called from
    # the sample (the ORM behind the async API) comes back to this thread, so it sees
    # the test's transaction and data.
    from asgiref.sync import async_to_sync

    async def runner() -> Any:
        return await coroutine

    return async_to_sync(runner)()


def execute(block: Block, run: Run) -> None:
    code = compile_block(block)
    lines = (ROOT / block.path).read_text(encoding="utf-8").splitlines()

    def record(line: int, value: Any) -> Any:
        line += block.first_content_line - 1  # the block's line → the file's
        source = lines[line - 1].strip()
        run.values.append((block.path, line, source, value))
        return value

    run.namespace["__sample_record__"] = record
    with model_registry():
        if code.co_flags & inspect.CO_COROUTINE:
            _run_coroutine(eval(code, run.namespace))
        else:
            exec(code, run.namespace)
    check_claims(block, run, lines)


def check_claims(block: Block, run: Run, lines: list[str]) -> None:
    """A comment ``# -> <python literal>`` after an expression statement is a claim: the
    statement's value (an HttpResponse's status code) must equal the literal."""
    for path, line, _, value in run.values:
        if path != block.path or not (block.line < line):
            continue
        match = _CLAIM.search(lines[line - 1])
        if not match:
            continue
        claim, expected = literal_prefix(match.group("value"))
        if isinstance(expected, int) and not isinstance(expected, bool):
            actual = getattr(value, "status_code", value)
        else:
            actual = value
        assert actual == expected, f"{path}:{line} claims {claim}, but the statement gave {value!r}"


def literal_prefix(text: str) -> tuple[str, Any]:
    """The longest start of ``text`` that is a Python literal (``False: TOTP is on`` →
    False); a claim that starts with no literal is an error, not a comment."""
    for end in range(len(text), 0, -1):
        candidate = text[:end].strip()
        try:
            return candidate, ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    raise SampleError(f"'# -> {text}' claims no Python literal")


def fresh_namespace() -> dict[str, Any]:
    # Inside the "docs" app (tests.docs), so model classes a sample defines get an app.
    return {"__name__": "tests.docs.sample", "__builtins__": builtins}


_DOCS_APP_LABEL = "docs"


@contextlib.contextmanager
def model_registry() -> Iterator[None]:
    """Model classes defined by a sample land in a throwaway app registry (app label
    "docs"), never in the project's: a sample's ``class User`` replaces nothing."""
    from django.apps import AppConfig, apps
    from django.test.utils import isolate_apps

    # Django finds a model's app through the global registry by module name; the isolated
    # registry is where it is then registered.
    added = _DOCS_APP_LABEL not in apps.app_configs
    if added:
        config = AppConfig.create("tests.docs")
        config.apps = apps
        config.models = {}
        apps.app_configs[_DOCS_APP_LABEL] = config
    try:
        with isolate_apps("tests.docs"):
            yield
    finally:
        if added:
            del apps.app_configs[_DOCS_APP_LABEL]


def create_tables(namespace: dict[str, Any]) -> None:
    """Tables for the concrete models a sample defined whose relations all resolve,
    inside the test's transaction (rolled back with it), so the next block can query."""
    from django.db import connection, models

    editor = connection.schema_editor()
    editor.deferred_sql = []
    existing = set(connection.introspection.table_names())
    for value in list(namespace.values()):
        if not (
            isinstance(value, type)
            and issubclass(value, models.Model)
            and not value._meta.abstract
            and value._meta.app_label == _DOCS_APP_LABEL
        ):
            continue
        related = [f for f in value._meta.get_fields() if f.is_relation and f.concrete]
        if any(not isinstance(f.remote_field.model, type) for f in related):
            continue
        if value._meta.db_table in existing:
            continue
        # Not `with connection.schema_editor()`: SQLite refuses that inside a transaction
        # (it would switch foreign keys off); a plain CREATE TABLE is allowed.
        editor.create_model(value)
        existing.add(value._meta.db_table)
    for statement in editor.deferred_sql:
        editor.execute(statement)
