"""What a failing function returns, and where its `return` stands (its AST, never run).

Three shapes of code explain an output without any mistake in the arithmetic: a `return`
in the body of a loop (it returns after the first pass, so its list holds one item), a
result `print`ed and never returned (None), and a list of columns joined into one array
(`np.hstack`) where the list itself is expected (it reads as the transpose).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

import numpy as np

from grader.judge.compare import stack
from grader.judge.static import FunctionSource
from grader.report import Location
from grader.run.wire import Seq, Value

Answered = Sequence[tuple[Value, Value]]  # (the student's value, the reference's), per case
RETURN = re.compile(r"^\s*return\b")  # a line that returns

_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _own_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """The function's nodes, not those of functions or lambdas defined inside it."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return found


def return_in_loop(source: FunctionSource) -> tuple[str, Location] | None:
    """A `return` written straight in a loop's body (under no `if`), and the function has no
    other `return` after that loop: it stops at the end of the loop's first pass."""
    fn = source.node
    returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return)]
    for loop in (n for n in _own_nodes(fn) if isinstance(n, _LOOPS)):
        inside = next((s for s in loop.body if isinstance(s, ast.Return)), None)
        end = loop.end_lineno or loop.lineno
        if inside is None or any(r.lineno > end for r in returns):
            continue
        where = source.location(inside.lineno)
        kind = "for" if isinstance(loop, ast.For | ast.AsyncFor) else "while"
        said = (
            f"the `return` ({where.describe()}) is inside the `{kind}` loop that starts on line "
            f"{loop.lineno}, so the function returns at the end of the loop's first pass: "
            "move the `return` out of the loop (one indent less)"
        )
        return said, where
    return None


def printed_not_returned(source: FunctionSource) -> tuple[str, Location] | None:
    """No `return` with a value anywhere in the function, and a `print` call: the result is
    shown on the screen and the function returns None."""
    nodes = _own_nodes(source.node)
    if any(isinstance(n, ast.Return) and n.value is not None for n in nodes):
        return None
    prints = sorted(
        n.lineno
        for n in nodes
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
    )
    if not prints:
        return None
    where = source.location(prints[-1])
    said = (
        f"the function prints its result ({where.describe()}) but has no `return`, so it "
        "returns None: `return` the value instead of printing it"
    )
    return said, where


def _one_item_lists(expected: Value, got: Value) -> bool:
    """A list (here or in a returned tuple) of one item where the reference's has more."""
    if not (isinstance(got, Seq) and isinstance(expected, Seq)):
        return False
    if len(got.items) == 1 < len(expected.items):
        return True
    pairs = zip(expected.items, got.items, strict=False)
    return len(got.items) == len(expected.items) and any(_one_item_lists(*p) for p in pairs)


def return_place(source: FunctionSource, answered: Answered) -> tuple[str, Location] | None:
    """What the place of the `return` explains, and where: None returned in every case
    because the result is printed, or lists of one item because the `return` is in the loop."""
    if answered and all(got is None for got, _ in answered):
        return printed_not_returned(source)
    if any(_one_item_lists(expected, got) for got, expected in answered):
        return return_in_loop(source)
    return None


# A list of columns expected, one array returned: its items were joined side by side.
JOINED_LIST = (
    "returns one array with the items side by side (the list joined, as `np.hstack` does), "
    "where a list of separate items is expected, so it reads as the transpose; return the list"
)


def list_joined(answered: Answered) -> bool:
    """A list is expected and one array came back, in every case that answered."""
    return bool(answered) and all(
        isinstance(got, np.ndarray) and isinstance(expected, Seq) and expected.kind == "list"
        for got, expected in answered
    )


def joined_items(answered: Answered) -> bool:
    """A tuple of lists expected, a tuple of arrays returned, each array the matching list's
    items side by side (`np.hstack`) or one on top of the other (`np.vstack`)."""
    if not answered:
        return False
    for got, expected in answered:
        if not (isinstance(got, Seq) and isinstance(expected, Seq)):
            return False
        if len(got.items) != len(expected.items) or not got.items:
            return False
        for item, want in zip(got.items, expected.items, strict=True):
            rows = stack(want) if isinstance(want, Seq) and want.kind == "list" else None
            if not isinstance(item, np.ndarray) or rows is None or rows.ndim < 2:
                return False
            flat = rows.reshape(rows.shape[0], -1)  # one row per item
            if not any(j.shape == item.shape and np.allclose(j, item) for j in (flat.T, flat)):
                return False
    return True


# A tuple of lists expected, a tuple of joined arrays returned.
JOINED_ITEMS = (
    "returns arrays with each list's items joined (as `np.hstack` or `np.vstack` do), where "
    "the lists themselves are expected: return the lists"
)


def one_item_of_pair(answered: Answered) -> int | None:
    """A tuple expected and one array returned: the index of the tuple's item it equals."""
    found: set[int] = set()
    for got, expected in answered:
        if not (isinstance(got, np.ndarray) and isinstance(expected, Seq)):
            return None
        same = {
            k
            for k, item in enumerate(expected.items)
            if isinstance(item, np.ndarray) and item.shape == got.shape and np.allclose(item, got)
        }
        found = same if not found else found & same
        if not found:
            return None
    return min(found) if found else None


def returned_form(answered: Answered) -> list[str]:
    """The right numbers in another form: lists joined into arrays, one item of the pair."""
    if joined_items(answered):
        return [JOINED_ITEMS]
    k = one_item_of_pair(answered)
    expected = answered[0][1] if answered else None
    if k is None or not isinstance(expected, Seq):
        return []
    n = len(expected.items)
    return [
        f"returns only item [{k}] of the {n} expected (a tuple): it is right; return all "
        f"{n}, as a tuple"
    ]
