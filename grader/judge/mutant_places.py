"""Where a mutant's change shows in a student's function: patterns for the line that holds
the changed expression, so that its words point there and not at the `def` line. The
student's names may differ from the reference's, so the patterns go from precise to loose.
"""

from __future__ import annotations

import ast
import re


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
    per line of the text): the statement (`scores = …`, `return`) with the names the changed
    expression holds, then the statement, then those names alone, then only the attributes
    and functions it uses (`shape`, `sqrt`). The student's names may
    differ from the reference's; what matches nothing falls back to the `def` line."""
    names = [n.id for n in ast.walk(new) if isinstance(n, ast.Name) and n.id not in ("np", "math")]
    names += [n.attr for n in ast.walk(new) if isinstance(n, ast.Attribute) and n.attr != "T"]
    held = "".join(rf"(?=.*\b{re.escape(n)}\b)" for n in dict.fromkeys(names))
    statement = _statement(function, node)
    start = None
    if isinstance(statement, ast.Return):
        start = r"^\s*return\b"
    elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        start = rf"^\s*{re.escape(statement.targets[0].id)}\s*="
    # the attributes and functions it uses (`shape`, `sqrt`), without the variables
    called = [n.attr for n in ast.walk(new) if isinstance(n, ast.Attribute) and n.attr != "T"]
    called += [
        n.func.id for n in ast.walk(new) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    tools = "".join(rf"(?=.*\b{re.escape(n)}\b)" for n in dict.fromkeys(called))
    patterns = [
        f"^{held}{start[1:]}" if start and held else None,
        start,
        held or None,
        tools or None,
    ]
    found = [p for p in patterns if p]
    return "\n".join(dict.fromkeys(found)) if found else None
