"""Where a failing function's `return` stands, read from its code (AST only, never run).

Two shapes of code explain an output without any mistake in the arithmetic: a function
whose only `return` sits in the body of a loop (it returns after the first pass, so its
list holds one item), and a function that `print`s its result and returns nothing.
"""

from __future__ import annotations

import ast

from grader.judge.static import FunctionSource
from grader.report import Location

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
