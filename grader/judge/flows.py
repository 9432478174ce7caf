"""Which names a variable's value is computed from, in a cell's top-level code (AST only),
and where top-level code assigns a name the notebook defines as a function.

A cell often fills several graded variables in one loop (`all_queries.append(…)`,
`all_keys.append(…)`): each is computed from what its own statements read, and from the
cell's temporaries those read in turn, never from a list the same loop merely fills
beside it. Reading every name the cell mentions would tell a student to fix `all_keys`
before `all_queries`, and `all_queries` before `all_keys`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from grader.course.notebook import Submission
from grader.report import Location

FILLERS = ("append", "extend", "insert")  # `name.append(…)` changes `name`, reads nothing


@dataclass
class _Step:
    """One simple statement (or a loop's header): the names it sets and those it reads."""

    writes: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)


def _filled(node: ast.AST) -> ast.Name | None:
    """The receiver of `name.append(…)` (or `extend`, `insert`)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.attr in FILLERS
    ):
        return node.func.value
    return None


def _subscript_root(target: ast.expr) -> ast.Name | None:
    """`name` in an assignment to `name[…]` (or `name[…][…]`): that changes `name`."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return target if isinstance(target, ast.Name) else None


def _step(nodes: list[ast.AST], targets: list[ast.expr]) -> _Step:
    """What the nodes read, what they set (stored names, filled lists, subscript targets)."""
    step = _Step()
    written: set[int] = set()
    for target in targets:
        if (root := _subscript_root(target)) is not None:
            step.writes.add(root.id)
            written.add(id(root))
    for node in (n for top in nodes for n in ast.walk(top)):
        if (receiver := _filled(node)) is not None:
            step.writes.add(receiver.id)
            written.add(id(receiver))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            step.writes.add(node.id)
    names = (n for top in nodes for n in ast.walk(top) if isinstance(n, ast.Name))
    for name in names:
        if isinstance(name.ctx, ast.Load) and id(name) not in written:
            step.reads.add(name.id)
    return step


def _steps(body: list[ast.stmt]) -> list[_Step]:
    """The steps of a block, loops and branches opened (their bodies run in this cell);
    definitions of functions and classes are not computations of the cell."""
    found: list[_Step] = []
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(statement, ast.For | ast.AsyncFor):
            found.append(_step([statement.target, statement.iter], []))
            found += _steps(statement.body) + _steps(statement.orelse)
        elif isinstance(statement, ast.If | ast.While):
            found += _steps(statement.body) + _steps(statement.orelse)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            found += _steps(statement.body)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody):
                found += _steps(block)
        elif isinstance(statement, ast.Assign):
            found.append(_step([statement], statement.targets))
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
            found.append(_step([statement], [statement.target]))
        else:
            found.append(_step([statement], []))
    return found


def computed_from(tree: ast.Module, name: str) -> set[str]:
    """The names the cell's value of `name` is computed from: read by the statements that
    set or fill it, and, through the cell's own temporaries, by those that set them."""
    steps = _steps(tree.body)
    found: set[str] = set()
    todo, seen = [name], {name}
    while todo:
        wanted = todo.pop()
        for step in steps:
            if wanted not in step.writes:
                continue
            for read in step.reads - seen:
                found.add(read)
                seen.add(read)
                if any(read in s.writes for s in steps):  # a temporary of this cell: follow it
                    todo.append(read)
    return found - {name}


def _top_level_stores(body: list[ast.stmt], name: str) -> list[ast.Name]:
    """The places where a cell's own code (not a function it defines) assigns `name`."""
    found: list[ast.Name] = []
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        todo: list[ast.AST] = [statement]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                found.append(node)
            todo.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def rebound(submission: Submission, name: str) -> tuple[str, Location] | None:
    """The first assignment to `name` after its last `def` (`softmax = softmax(scores)`):
    from there on the name holds that value, not the function. Its line's text, and where."""
    defined: tuple[int, int] | None = None
    found: tuple[str, Location] | None = None
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == name:
                defined, found = (cell.index, node.lineno), None
        if defined is None or found is not None or tree is None:
            continue
        lines = cell.original.split("\n")
        for store in _top_level_stores(tree.body, name):
            if (cell.index, store.lineno) > defined:
                text = lines[store.lineno - 1].strip() if store.lineno <= len(lines) else name
                found = (text, Location(cell.index, store.lineno))
                break
    return found
