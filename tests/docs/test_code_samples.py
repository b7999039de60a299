"""Every code sample in README.md and docs/**/*.md is executed by a test.

One test per fenced block, named after its file and the line of its opening fence
(``docs/webhooks.md:42``). Every block is accounted for: a block no rule below covers
fails its test, so a new sample cannot go untested without anyone noticing.

The convention
==============

Python blocks (```python) run as written:

- in a fresh module namespace, with the database (pytest-django's ``db``), as the demo's
  public tenant (tests/conftest.py);
- top-level ``await`` is allowed: such a block runs as a coroutine in an event loop
  (``async_to_sync``, so the ORM behind the async API sees the test's data), and any
  synchronous database call in it fails as it would in an async view;
- every name comes from the block itself (imports included) or from a ``setup=``;
- model classes land in a throwaway app registry (app label "docs"): a sample may define
  ``class User(...)`` or ``class Invoice(TenantModel)``; the next block of a chain gets
  a table for each model whose relations resolve;
- a comment ``# -> <python literal>`` after an expression statement is checked: the
  value (an HttpResponse's status code, for an int) must equal the literal; words may
  follow the literal (``# -> False: TOTP is on``);
- import strings naming ``myproject.*`` resolve to tests/docs/myproject, a stand-in
  for the reader's project built on the demo (testproject/).

One HTML comment on the line directly above the opening fence (GitHub does not render
it) changes that. Its words, in any order:

- ``<!-- sample: settings -->``: a settings.py / urls.py fragment. It runs in the
  namespace of a new ``django-admin startproject`` project (settings.py, urls.py's
  ``urlpatterns`` and ``path``, and ``include``) plus ``APPFRAMEWORK = {}``. Then each
  setting it adds or changes must be a Django setting, ``APPFRAMEWORK`` or ``CELERY_*``;
  APPFRAMEWORK's sections and keys must be the suite's and its import strings import;
  INSTALLED_APPS, MIDDLEWARE and AUTHENTICATION_BACKENDS entries import; ``handlerNNN``
  answers NNN in the problem format; and with the fragment applied over the test
  settings, Django's system checks report nothing new. A list the fragment assigns
  whole (``MIDDLEWARE = [...]``) replaces the test settings' list for those checks; a
  list it changes (``+=``, ``.insert``) changes it the same way. ``...`` cannot stand
  for "your other entries": write ``INSTALLED_APPS += [...]`` with real entries.
- ``continues``: runs after the block of the same kind above it on the page (which runs
  first, in the same namespace, with its own setups).
- ``setup=<name>[,<name>...]``: names put into the namespace (a request, a user, a post,
  ...) by the setups of tests/docs/samples_setup.py; a setup may also patch something
  for the duration (a fixed OpenID discovery document, a fresh Gate).
- ``check=<name>[,<name>...]``: after the run, the checks of tests/docs/samples_setup.py
  assert what the sample claims (a 401, a delivered signature, ...).
- ``raises=<ExceptionName>``: the block must raise it (a check can inspect it).
- ``postgresql``: the test carries the ``postgresql`` marker (runs in the PostgreSQL run).

Other blocks (json, sh, bash, text, no language, ...) need a directive: a ``check=``,
which gets the block's text and proves it against the running code, and/or
``not run: <reason>`` (the reason is required and stays in the markdown source). Example:
``<!-- sample: check=quick_start not run: tests/demo/... runs ./scripts/demo; ... -->``
(``not run:`` comes last: the rest of the comment is the reason).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import samples_setup
from .samples import (
    Block,
    Run,
    SampleError,
    chain,
    collect,
    collect_file,
    create_tables,
    execute,
    fresh_namespace,
    parse_directive,
)
from .settings_samples import check_fragment, snapshot, startproject_namespace

BLOCKS = collect()


def _param(block: Block) -> Any:
    marks = [pytest.mark.postgresql] if block.directive and block.directive.postgresql else []
    return pytest.param(block, id=block.id, marks=marks)


def _problems(block: Block) -> list[str]:
    if block.directive_error:
        return [block.directive_error]
    directive = block.settings
    problems = []
    for name in directive.setups:
        if name not in samples_setup.SETUPS:
            problems.append(f"unknown setup {name!r}")
    for name in directive.checks:
        if name not in samples_setup.CHECKS:
            problems.append(f"unknown check {name!r}")
    if not block.is_python and not directive.checks and directive.not_run is None:
        problems.append(
            f"a {block.language or 'plain'} block with no directive: add "
            "'<!-- sample: check=<name> -->' or '<!-- sample: not run: <reason> -->' "
            "on the line above its fence"
        )
    if block.is_python and directive.not_run is not None:
        problems.append("python samples are executed; 'not run' is for other languages")
    return problems


@pytest.mark.django_db
@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_code_sample(block: Block, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    problems = _problems(block)
    assert not problems, f"{block.id}: " + "; ".join(problems)
    if block.is_python:
        run_python(block, request, tmp_path)
        return
    run = Run(block, {"text": block.text}, pytest_request=request)
    for name in block.settings.checks:
        samples_setup.CHECKS[name](run)
    if not block.settings.checks:
        # Only the stated reason vouches for this block; print it so a run shows it.
        print(f"{block.id}: not run: {block.settings.not_run}")


def run_python(block: Block, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    request.getfixturevalue("_myproject")
    blocks = chain(block, BLOCKS)
    kind = block.settings.kind
    namespace = startproject_namespace(tmp_path) if kind == "settings" else fresh_namespace()
    run = Run(block, namespace, pytest_request=request)
    with samples_setup.entered([name for b in blocks for name in b.settings.setups], run):
        before = snapshot(namespace)
        for index, current in enumerate(blocks):
            if index:
                create_tables(namespace)
            if current is block and block.settings.raises:
                with pytest.raises(Exception) as caught:
                    execute(current, run)
                names = {cls.__name__ for cls in type(caught.value).__mro__}
                assert block.settings.raises in names, (
                    f"raised {caught.value!r}, not {block.settings.raises}"
                )
                run.exception = caught.value
            else:
                execute(current, run)
        if kind == "settings":
            check_fragment(namespace, before, [b.text for b in blocks])
        for name in block.settings.checks:
            # Inside the setups: a check may need what they patched (a fresh Gate, ...).
            samples_setup.CHECKS[name](run)


# -- the collector itself -------------------------------------------------------------


def test_every_markdown_file_is_read_and_python_blocks_are_found() -> None:
    paths = {b.path for b in BLOCKS}
    assert "README.md" in paths
    assert any(p.startswith("docs/") for p in paths)
    assert sum(b.is_python for b in BLOCKS) >= 30


def test_an_unclassified_block_fails(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("Text.\n\n```sh\nrm -rf /\n```\n", encoding="utf-8")
    [block] = collect_file(tmp_path / "page.md", tmp_path)
    assert block.language == "sh" and block.directive is None
    assert _problems(block) and "no directive" in _problems(block)[0]


def test_indented_fences_in_list_items_are_found(tmp_path: Path) -> None:
    page = "1. Point:\n\n   <!-- sample: settings -->\n   ```python\n   X = 1\n   ```\n"
    (tmp_path / "page.md").write_text(page, encoding="utf-8")
    [block] = collect_file(tmp_path / "page.md", tmp_path)
    assert (block.line, block.text, block.settings.kind) == (4, "X = 1\n", "settings")


def test_a_directive_away_from_its_fence_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text(
        "<!-- sample: settings -->\n\n```python\nX = 1\n```\n", encoding="utf-8"
    )
    with pytest.raises(SampleError, match="directly above"):
        collect_file(tmp_path / "page.md", tmp_path)


def test_an_unclosed_fence_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("```python\nX = 1\n", encoding="utf-8")
    with pytest.raises(SampleError, match="never closed"):
        collect_file(tmp_path / "page.md", tmp_path)


def test_directive_words() -> None:
    directive = parse_directive("settings continues setup=a,b check=c raises=KeyError postgresql")
    assert (directive.kind, directive.continues, directive.setups, directive.checks) == (
        "settings",
        True,
        ("a", "b"),
        ("c",),
    )
    assert (directive.raises, directive.postgresql) == ("KeyError", True)
    assert parse_directive("not run: needs the network").not_run == "needs the network"
    with pytest.raises(SampleError, match="reason"):
        parse_directive("not run:")
    with pytest.raises(SampleError, match="unknown word"):
        parse_directive("setings")
