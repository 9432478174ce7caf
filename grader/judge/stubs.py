"""Never misleading about stubs and crashes: what the code and the notebook's errors show.

"Still the unfinished stub" is said only when a function's body is, statement for statement,
the body the exercise notebook gave (compared as ASTs: comments, blank lines and the
docstring do not count). A variable whose cell crashed is told so, with the crash and its
line, before any guess about its numbers.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from grader.course.notebook import Submission, load_submission
from grader.errors import GraderError
from grader.judge.flows import computed_from
from grader.judge.static import FunctionSource


def _statements(node: ast.FunctionDef) -> list[ast.stmt]:
    """The body of a function without a leading docstring."""
    body = list(node.body)
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and len(body) > 1
    ):
        body = body[1:]
    return body


def body_key(node: ast.FunctionDef) -> str:
    """The body of a function as an AST dump without positions or a leading docstring."""
    return "\n".join(ast.dump(statement) for statement in _statements(node))


def _same_body(node: ast.FunctionDef, key: str) -> bool:
    """`body_key(node) == key`, without dumping a body of another length (each statement's
    dump is one line: `ast.dump` writes a newline in a string constant as an escape)."""
    return len(_statements(node)) == (key.count("\n") + 1 if key else 0) and body_key(node) == key


@lru_cache(maxsize=32)
def _stubs_at(path: Path, stamp: int) -> dict[str, str]:
    """Each top-level function of the exercise notebook at `path`, by its body key."""
    del stamp  # part of the cache key only: a changed exercise is read again
    try:
        exercise = load_submission(path)
    except (GraderError, OSError, ValueError):
        return {}
    found: dict[str, str] = {}
    for cell in exercise.cells:
        tree = exercise.tree(cell.index)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef):
                found[node.name] = body_key(node)
    return found


def exercise_stubs(path: Path | None) -> dict[str, str]:
    """The exercise's function bodies by name; empty without an exercise notebook."""
    if path is None or not path.is_file():
        return {}
    return _stubs_at(path, path.stat().st_mtime_ns)


def is_exercise_stub(function: FunctionSource | None, stubs: Mapping[str, str]) -> bool:
    """Whether the student's function is still the body the exercise handed out, or a body
    that computes nothing at all (the textbook's own stubs: `return data_in`, zeros)."""
    if function is None:
        return False
    if function.node.name in stubs and _same_body(function.node, stubs[function.node.name]):
        return True
    return _computes_nothing(function.node)


_PLACEHOLDERS = {"zeros", "zeros_like", "copy", "empty", "empty_like"}


def _placeholder(node: ast.expr, names: set[str]) -> bool:
    """A parameter or placeholder name, its `.copy()`, or `np.zeros(…)`-like filler."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "copy" and not node.args:
            return _placeholder(node.func.value, names)
        return node.func.attr in _PLACEHOLDERS and isinstance(node.func.value, ast.Name)
    return False


def _computes_nothing(node: ast.FunctionDef) -> bool:
    """Only `pass`, placeholders assigned to names, and a return of one of them."""
    names = {a.arg for a in node.args.args}
    for statement in node.body:
        if isinstance(statement, ast.Pass) or (
            isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        ):
            continue
        if isinstance(statement, ast.Assign) and _placeholder(statement.value, names):
            names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
            continue
        if isinstance(statement, ast.Return) and statement.value is not None:
            return _placeholder(statement.value, names)
        return False
    return False


def binds(tree: ast.Module, name: str) -> bool:
    """Whether top-level code of a cell assigns `name` or fills it (`name.append(…)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.func.attr in ("append", "extend", "insert")
        ):
            return True
    return False


def crashed_cells(
    submission: Submission, name: str, cell_errors: Mapping[int, Mapping[str, Any]]
) -> list[int]:
    """The cells that set or fill the variable `name` and raised before they finished."""
    cells = []
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        if cell.index in cell_errors and tree is not None and binds(tree, name):
            cells.append(cell.index)
    return cells


def read_where_set(submission: Submission, name: str) -> set[str]:
    """The names the cells that set or fill the variable `name` compute it from (its inputs,
    when they are other graded variables): not the lists the same loop fills beside it."""
    found: set[str] = set()
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        if tree is not None and binds(tree, name):
            found |= computed_from(tree, name)
    return found - {name}


def _defines(tree: ast.Module, name: str) -> list[int]:
    """The lines of a cell that give `name` a value: an assignment, an import, a `def` or a
    `class` (at any depth: a `for` or `if` at the top level counts)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            lines.append(node.lineno)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound = [(a.asname or a.name.split(".")[0]) for a in node.names]
            if name in bound:
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ):
            lines.append(node.lineno)
    return sorted(lines)


def unset_by_crash(
    submission: Submission, name: str, cell_errors: Mapping[int, Mapping[str, Any]]
) -> list[tuple[int, int]]:
    """(cell, line) of each place that would have given `name` its value but never ran: its
    cell raised on an earlier line (a failed `import matplotlib` before `import numpy as np`)."""
    found = []
    for cell in submission.cells:
        error = cell_errors.get(cell.index)
        tree = submission.tree(cell.index)
        if error is None or tree is None:
            continue
        where = error.get("where")
        stopped = 0
        if isinstance(where, Mapping) and where.get("cell") == cell.index:
            line = where.get("line")
            stopped = line if isinstance(line, int) else 0
        later = [line for line in _defines(tree, name) if line > stopped]
        if later:
            found.append((cell.index, later[0]))
    return found
