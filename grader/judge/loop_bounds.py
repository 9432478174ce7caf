"""Loops that stop one item early, read from the code (AST only, never run).

A list one item short in every case is the classic off-by-one of a loop's bounds: a
`range(len(x) - 1)` (a `range(n)` already stops before `n`), a `range(1, n)`, or a loop over
`x[:-1]` or `x[1:]`. Said only with the numbers' evidence (each list one short), never alone.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from grader.course.notebook import CodeCell
from grader.report import Location
from grader.run.wire import Seq, Value


def _minus_one(node: ast.AST | None) -> bool:
    """`n - 1`, or the literal `-1`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return isinstance(node.right, ast.Constant) and node.right.value == 1
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value == 1
    )


def _early(iterable: ast.expr) -> str | None:
    """Why a loop over `iterable` misses one item: its stop is one less, or a slice drops one."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        args = iterable.args
        # a step makes the count another sum
        if iterable.func.id == "range" and 0 < len(args) < 3 and _minus_one(args[-1]):
            return "stops one early (`range(n)` already stops before `n`)"
        one = len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == 1
        if iterable.func.id == "range" and one:
            return "starts at 1 and leaves out the first item (`range(n)` starts at 0)"
    if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
        part = iterable.slice
        if part.step is None and part.lower is None and _minus_one(part.upper):
            return "leaves out the last item"
        lower = part.lower
        first = isinstance(lower, ast.Constant) and lower.value == 1
        if part.step is None and part.upper is None and first:
            return "leaves out the first item"
    if isinstance(iterable, ast.Call) and iterable.args:  # enumerate(x[:-1]), zip(…)
        return next(filter(None, map(_early, iterable.args)), None)
    return None


def early_stops(tree: ast.AST, cell: CodeCell) -> list[tuple[str, Location]]:
    """Each loop (or comprehension) of the code whose bounds miss one item: what it does,
    with the loop's text, and where."""
    lines = cell.original.split("\n")
    found = []
    for node in ast.walk(tree):
        loop = node if isinstance(node, ast.For | ast.comprehension) else None
        if loop is None or (why := _early(loop.iter)) is None:
            continue
        line = getattr(loop.iter, "lineno", 1)
        start, end = loop.iter.col_offset, loop.iter.end_col_offset
        text = lines[line - 1][start:end] if 0 < line <= len(lines) else ""
        text = text or ast.unparse(loop.iter)
        found.append((f"the loop over `{text}` {why}", Location(cell.index, line)))
    return sorted(found, key=lambda f: f[1].line)


def one_short(expected: Value, got: Value) -> bool:
    """A list (here or in a returned tuple) one item shorter than the reference's (of two or
    more)."""
    if not (isinstance(got, Seq) and isinstance(expected, Seq)):
        return False
    if len(got.items) == len(expected.items) - 1 >= 1:
        return True
    pairs = zip(expected.items, got.items, strict=False)
    return len(got.items) == len(expected.items) and any(one_short(*p) for p in pairs)


def all_one_short(answered: Sequence[tuple[Value, Value]]) -> bool:
    """Every case that answered holds a list one item short."""
    return bool(answered) and all(one_short(expected, got) for got, expected in answered)


def early_stop(
    answered: Sequence[tuple[Value, Value]], stops: Sequence[tuple[str, Location]]
) -> tuple[str, Location] | None:
    """Lists one item short in every case, and the first loop of the code that misses one."""
    if not stops or not all_one_short(answered):
        return None
    what, where = stops[0]
    return f"one item short in every case: {what} ({where.describe()})", where
