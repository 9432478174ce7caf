"""NumPy ≥ 2.4 refuses `float()` of a 1×1 array; student loops do it all the time.

Our decision: the grader rewrites `float(x)` and `int(x)` calls in student code to a shim that
behaves like older NumPy for size-1 arrays and records where it did so, and the student is told
in the feedback ("works here, fails on your NumPy; use .item()"). Other conversions
(`math.exp(a)` on a 1×1 array) still fail, and the error message explains why.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

SHIM_NAME = "__grader_scalar__"
ZERO_DIM_MESSAGE = "only 0-dimensional arrays can be converted to Python scalars"
NUMPY_HINT = (
    "NumPy 2.4 and later refuse to turn a 1×1 array into a number; "
    "use `.item()` or index it (`a[0, 0]`) to get the number out"
)


def rewrite_scalar_calls(tree: ast.Module, cell: int) -> ast.Module:
    """The cell's tree with float() and int() calls routed through the scalar shim, so a 1×1 array
    still converts: `float(x)` becomes `SHIM_NAME(x, "float", cell, line)`.

    Each such call is changed where it stands (one walk, nothing rebuilt), its new parts placed
    where the call is, as ast.fix_missing_locations would place them."""
    for node in ast.walk(tree):
        if type(node) is not ast.Call:
            continue
        func = node.func
        if (
            type(func) is ast.Name
            and func.id in ("float", "int")
            and len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
        ):
            extra = [ast.Constant(func.id), ast.Constant(cell), ast.Constant(node.lineno)]
            shim = ast.Name(SHIM_NAME, ast.Load())
            node.func = shim
            node.args = [node.args[0], *extra]
            for part in (shim, *extra):
                ast.copy_location(part, node)
    return tree


class ScalarShim:
    """The callable installed as SHIM_NAME in the student's namespace; remembers where it helped."""

    def __init__(self) -> None:
        self.used: set[tuple[int, int]] = set()

    def __call__(self, value: Any, kind: str, cell: int, line: int) -> Any:
        convert = float if kind == "float" else int
        try:
            return convert(value)
        except TypeError:
            if isinstance(value, np.ndarray) and value.size == 1:
                self.used.add((cell, line))
                return convert(value.reshape(-1)[0].item())
            raise

    def take(self) -> list[tuple[int, int]]:
        """The (cell, line) places helped since the last take, sorted; forgets them."""
        used, self.used = sorted(self.used), set()
        return used


def scalar_note(cell: int, line: int) -> str:
    """The note telling the student that float()/int() of a 1×1 array at this place fails on a
    current NumPy."""
    return (
        f"cell {cell}, line {line}: float()/int() of a 1×1 array. {NUMPY_HINT}. "
        "The grader converted it for you, but it fails on a current NumPy."
    )
