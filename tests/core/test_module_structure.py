"""The packages' own structure: no import cycle between files and no private name
imported from another module.

Every import counts, the ones inside a function and under ``TYPE_CHECKING`` too: an import
moved into a function still ties the two files together, it only hides the knot from
Python. A cycle found here names its files; break it by moving what both need into a
module of its own. A private name (``_x``) another module needs is a shared helper: give it
a public name in the module that owns it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("appframework", "appframework_graphql", "appframework_tenancy", "appframework_webhooks")
#: Where private names must not cross modules either: the packages and the demo.
PRIVATE_CHECKED = (*PACKAGES, "testproject")


def _modules(roots: tuple[str, ...]) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``), migrations left out."""
    found: dict[str, tuple[Path, bool]] = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = (path, is_package)
    return found


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _imports(module: str, path: Path, is_package: bool) -> Iterator[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import statement of the file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            for alias in node.names:
                yield base, alias.name


def _graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        for target, imported in _imports(name, path, is_package):
            if imported is not None and f"{target}.{imported}" in modules:
                target = f"{target}.{imported}"  # ``from pkg import submodule``
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[name].add(target)
    return edges


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_file_of_the_packages_imports_another_that_imports_it_back() -> None:
    cycles = import_cycles(_graph(_modules(PACKAGES)))
    assert cycles == [], "import cycles between files (function-level imports count): " + (
        "; ".join(" <-> ".join(cycle) for cycle in cycles)
    )


def test_no_private_name_is_imported_from_another_module() -> None:
    modules = _modules(PRIVATE_CHECKED)
    crossings = []
    for name, (path, is_package) in modules.items():
        for target, imported in _imports(name, path, is_package):
            if (
                imported is not None
                and imported.startswith("_")
                and not imported.startswith("__")
                and target in modules
                and target != name
                and f"{target}.{imported}" not in modules
            ):
                crossings.append(f"{name} imports {imported} from {target}")
    assert crossings == [], "private names imported across modules: " + "; ".join(crossings)


def test_no_module_of_the_packages_has_a_private_file_name() -> None:
    """A module other files import says what it holds in a public name."""
    private = sorted(
        str(path.relative_to(ROOT))
        for path, _ in _modules(PACKAGES).values()
        if path.stem.startswith("_") and path.stem != "__init__"
    )
    assert private == []


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_the_cycle_finder_finds_two_and_three_file_cycles_and_no_false_one(
    edges: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert import_cycles(edges) == expected


def test_a_function_level_import_makes_an_edge(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from .other import thing\n", encoding="utf-8")
    assert list(_imports("pkg.mod", source, False)) == [("pkg.other", "thing")]
