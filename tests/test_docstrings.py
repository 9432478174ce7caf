"""Every module in `grader/` says what it holds, and every public function, method and class
says what it is for (issue 15): read from the source with `ast`, so nothing is imported.

Public means a name not starting with "_"; methods count inside public classes only, and
functions nested inside functions are helpers, not surface.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "grader"

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def public_definitions(body: list[ast.stmt]) -> Iterator[Definition]:
    """The public functions and classes in a module or class body, and the public methods and
    nested classes of each public class."""
    for node in body:
        if not isinstance(node, Definition) or node.name.startswith("_"):
            continue
        yield node
        if isinstance(node, ast.ClassDef):
            yield from public_definitions(node.body)


def missing_docstrings(path: Path, root: Path = REPO) -> list[str]:
    """Each undocumented module or public definition in one file, as "path:line name" with the
    path relative to `root`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(root).as_posix()
    missing = [] if ast.get_docstring(tree) else [f"{where}:1 (module)"]
    for node in public_definitions(tree.body):
        if not ast.get_docstring(node):
            missing.append(f"{where}:{node.lineno} {node.name}")
    return missing


def test_every_module_and_public_definition_has_a_docstring() -> None:
    missing = [m for path in sorted(PACKAGE.rglob("*.py")) for m in missing_docstrings(path)]
    assert not missing, f"{len(missing)} missing docstrings:\n" + "\n".join(missing)


def test_the_check_sees_what_is_missing(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "class Shown:\n"
        "    def method(self):\n"
        "        pass\n"
        "    def _private(self):\n"
        "        pass\n"
        "class _Hidden:\n"
        "    def method(self):\n"
        "        pass\n"
        "def outer():\n"
        '    """Documented."""\n'
        "    def inner():\n"
        "        pass\n"
        "async def waits():\n"
        "    pass\n",
        encoding="utf-8",
    )
    assert missing_docstrings(source, tmp_path) == [
        "sample.py:1 (module)",
        "sample.py:1 Shown",
        "sample.py:2 method",
        "sample.py:13 waits",
    ]
