"""Imports that work on the student's machine and fail where the course grades.

In the sandbox a notebook finds Python's standard library, NumPy and the assignment's
`preload:` modules with what they require (grader/run/view.py), nothing else of the
environment. Without the sandbox (a student's laptop, a container where bubblewrap cannot
start) it finds whatever is installed, so `import pandas` passes there and fails when the
instructor grades. A run without the sandbox therefore names each such import in a note, so
that the two runs say the same thing."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from grader.course.notebook import Submission

_ALWAYS = {"numpy", "yaml", "grader"}  # what the sandbox always holds (view.WORKER_NEEDS, itself)
_WRITTEN = re.compile(r"^\s*%%(?:writefile|file)\s+(?:-a\s+)?(\S+?)\.py\s*$", re.MULTILINE)


def _imported(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, top-level module) of each absolute import outside a `try` block (one inside is
    the notebook's own fallback)."""
    guarded = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.Try)
        for part in node.body
        for inner in ast.walk(part)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def _offered(preload: tuple[str, ...]) -> set[str]:
    """The top-level modules the sandbox stages: the preloads' distributions and what they
    require (found only when a notebook imports something past the usual, 15-20 ms)."""
    from grader.run.view import WORKER_NEEDS, distributions

    names = {m.split(".")[0] for m in (*WORKER_NEEDS, *preload)}
    for dist in distributions([*WORKER_NEEDS, *preload]):
        for file in dist.files or ():
            top = file.parts[0] if file.parts else ""
            if top.endswith((".dist-info", ".egg-info", ".data")) or top in ("..", "__pycache__"):
                continue
            names.add(Path(top).stem if top.endswith((".py", ".so", ".pyd")) else top)
    return names


def unoffered_import_notes(submission: Submission, preload: tuple[str, ...]) -> list[str]:
    """A note for each import of a module the sandbox would not have, with its cell and line.
    Only for a run without the sandbox: in it, the import fails and says so itself."""
    written = {m for cell in submission.cells for m in _WRITTEN.findall(cell.original)}
    usual = set(sys.stdlib_module_names) | _ALWAYS | written
    usual |= {m.split(".")[0] for m in preload}
    places: list[tuple[int, int, str]] = []
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        if tree is not None:
            places += [(cell.index, line, name) for line, name in _imported(tree)]
    places = [p for p in places if p[2] not in usual and not p[2].startswith("_")]
    if not places:
        return []
    offered = _offered(preload)
    listed = ", ".join(m.split(".")[0] for m in preload)
    there = (
        f"Python's standard library, NumPy and the modules your course lists ({listed})"
        if preload
        else "Python's standard library and NumPy"
    )
    return [
        f"cell {cell}, line {line}: `{name}` is imported, but a notebook graded in the sandbox "
        f"finds only {there}, so there this import fails. It worked here because this run had "
        "no sandbox"
        for cell, line, name in sorted(set(places))
        if name not in offered
    ]
