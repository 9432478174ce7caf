"""Where a mutant's change shows in a student's function: patterns for the line that holds
the changed expression, so that its words point there and not at the `def` line. The
student's names may differ from the reference's, so the patterns go from precise to loose.
"""

from __future__ import annotations

import ast
import copy
import re

_LIBRARIES = ("np", "math")  # module names, not the student's variables


CELL = "_grader_cell_"  # the name of a cell's code made a function (mutants.cell_function)


def cell_variable(function: ast.FunctionDef, node: ast.AST) -> str | None:
    """The variable a cell's function returns when `node` is what its added `return` holds
    (a change there is one to the variable's final value, made by no line of the cell)."""
    last = function.body[-1] if function.body else None
    if function.name.startswith(CELL) and isinstance(last, ast.Return) and last.value is node:
        return function.name[len(CELL) :]
    return None


def _filled(variable: str) -> list[str]:
    """The lines that put values into `variable`: `.append(…)` and its kin first, then an
    assignment to it or an item of it that is not an empty start (`all_keys = []`)."""
    name = re.escape(variable)
    return [
        rf"^\s*{name}\s*\.\s*(?:append|extend|insert)\s*\(",
        rf"^\s*{name}\s*(?:\[[^\]]*\]\s*)?(?:[-+*/@]|//)?=(?!=)(?!\s*{_EMPTY}\s*(?:#|$))",
    ]


def _statement(function: ast.FunctionDef, node: ast.AST) -> ast.stmt | None:
    """The innermost statement of `function` that holds `node`."""
    held = None
    for statement in ast.walk(function):
        if (
            isinstance(statement, ast.stmt)
            and statement is not function
            and not isinstance(statement, ast.If | ast.For | ast.While | ast.With)
            and any(n is node for n in ast.walk(statement))
        ):
            held = statement
    return held


def locate_pattern(function: ast.FunctionDef, node: ast.AST, new: ast.AST) -> str | None:
    """Where in a student's function a mutant's change shows, as patterns tried in turn (one
    per line of the text): the changed expression as the mutant writes it (the student wrote
    just that: `omega_k @ x + beta_q` on an `.append` line, `range(i, L)` in a second loop),
    the statement (`scores = …`, `return`) with the names the changed
    expression holds, then the statement, then those names alone, then only the attributes
    and functions it uses (`shape`, `sqrt`). The student's names may
    differ from the reference's; what matches nothing falls back to the `def` line."""
    variable = cell_variable(function, node)
    if variable is not None:  # the cell's value as a whole: where the student fills it
        return "\n".join(_filled(variable))
    variables = [n.id for n in ast.walk(new) if isinstance(n, ast.Name) and n.id not in _LIBRARIES]
    names = list(variables)
    names += [n.attr for n in ast.walk(new) if isinstance(n, ast.Attribute) and n.attr != "T"]
    held = "".join(rf"(?=.*\b{re.escape(n)}\b)" for n in dict.fromkeys(names))
    statement = _statement(function, node)
    start = None
    if isinstance(statement, ast.Return):
        start = r"^\s*return\b"
    elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        # not where the name starts empty, to be filled later (`all_queries = []`)
        start = rf"^\s*{re.escape(statement.targets[0].id)}\s*=(?!\s*{_EMPTY}\s*(?:#|$))"
    # the attributes and functions it uses (`shape`, `sqrt`), without the variables
    called = [n.attr for n in ast.walk(new) if isinstance(n, ast.Attribute) and n.attr != "T"]
    called += [
        n.func.id for n in ast.walk(new) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    tools = "".join(rf"(?=.*\b{re.escape(n)}\b)" for n in dict.fromkeys(called))
    # a call made to another function (operators' `wrong_function`): the line that calls it
    swapped = (
        rf"\b{re.escape(new.func.id)}\s*\("
        if isinstance(node, ast.Call) and isinstance(new, ast.Call)
        and isinstance(node.func, ast.Name) and isinstance(new.func, ast.Name)
        and node.func.id != new.func.id
        else None
    )  # fmt: skip
    # arrays joined in another order: the line of the join, which a student may have
    # written apart from the statement that uses it (`stacked = np.vstack(…)`, then `return`)
    callee = new.func if isinstance(new, ast.Call) else None
    joined = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    join = rf"\b{joined}\s*\(" if joined in _JOINS else None
    patterns = [
        swapped,
        *_written(statement, node, new),
        join,
        f"^{held}{start[1:]}" if start and held else None,
        start,
        *_named(statement, node, new, len(set(variables))),
        held or None,
        tools or None,
    ]
    found = [p for p in patterns if p]
    return "\n".join(dict.fromkeys(found)) if found else None


# NumPy's functions that join arrays, whose order a mutant swaps (mutant_operators).
_JOINS = ("vstack", "hstack", "concatenate", "stack", "column_stack", "row_stack", "block")


# An empty start: `[]`, `()`, `{}`, `None`, `0`, `0.0`, `list()`, `np.zeros(...)` is not one
# (it has a shape the mistake may be in).
_EMPTY = r"(?:\[\s*\]|\(\s*\)|\{\s*\}|None|0(?:\.0*)?|list\(\s*\)|dict\(\s*\))"


def _named(statement: ast.stmt | None, node: ast.AST, new: ast.AST, fewer: int) -> list[str]:
    """Lines that hold every name of an expression around the change (`omega_v`, `X` and
    `beta_q` for `omega_v @ X + beta_q`), from the largest to the smallest that has more
    names than the change itself (`fewer`), and three at least: the student's line of that
    computation, written in another order or form (`V = beta_q + omega_v @ X`), and not
    another line that only shares the changed name (the queries' `beta_q`)."""
    if statement is None:
        return []
    changed = copy.deepcopy(statement, {id(node): new})
    parents = {id(c): p for p in ast.walk(changed) for c in ast.iter_child_nodes(p)}
    found: list[str] = []
    at: ast.AST | None = parents.get(id(new))
    while isinstance(at, ast.expr):
        names = [n.id for n in ast.walk(at) if isinstance(n, ast.Name) and n.id not in _LIBRARIES]
        unique = list(dict.fromkeys(names))
        if len(unique) > max(fewer, 2):  # two (`mask`, `L`) are on many lines
            found.append("".join(rf"(?=.*\b{re.escape(n)}\b)" for n in unique))
        at = parents.get(id(at))
    return found[::-1]


def _written(statement: ast.stmt | None, node: ast.AST, new: ast.AST) -> list[str]:
    """The expressions of `statement` that hold the change, as the mutant writes them
    (spaces aside), from the whole down to the smallest: the student may have written only
    a part (`omega_k @ x + beta_q` where the reference's comprehension holds it). Parts too
    short to tell a line (`i`, `K[i]`) are left out."""
    if statement is None:
        return []
    changed = copy.deepcopy(statement, {id(node): new})  # `node` becomes `new` itself
    parents = {id(c): p for p in ast.walk(changed) for c in ast.iter_child_nodes(p)}
    held: list[str] = []
    at: ast.AST | None = new
    while isinstance(at, ast.expr):
        text = "".join(ast.unparse(at).split())
        if len(text) >= 8:
            held.append(r"\s*".join(re.escape(c) for c in text))
        at = parents.get(id(at))
    return held[::-1]
