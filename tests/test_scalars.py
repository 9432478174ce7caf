"""The NumPy ≥ 2.4 float()-of-1×1-array shim."""

from __future__ import annotations

import ast
import marshal

import numpy as np
import pytest

from grader.run.scalars import SHIM_NAME, ScalarShim, rewrite_scalar_calls


def run(source: str) -> tuple[dict[str, object], ScalarShim]:
    shim = ScalarShim()
    namespace: dict[str, object] = {"np": np, SHIM_NAME: shim}
    tree = rewrite_scalar_calls(ast.parse(source), cell=7)
    exec(compile(tree, "<cell 7>", "exec"), namespace)
    return namespace, shim


def test_float_of_a_1x1_array_works_and_is_recorded() -> None:
    namespace, shim = run("a = np.ones((1, 1)) * 2\n\nx = float(a)\ny = int(a)\nz = float('3')")
    assert namespace["x"] == 2.0 and namespace["y"] == 2 and namespace["z"] == 3.0
    assert shim.take() == [(7, 3), (7, 4)]
    assert shim.take() == []


def test_plain_numbers_are_not_recorded() -> None:
    _, shim = run("x = float(np.float64(1.5))\ny = int(3.9)")
    assert shim.take() == []


def test_larger_arrays_still_fail_as_in_numpy() -> None:
    with pytest.raises(TypeError):
        run("float(np.ones(2))")


def test_without_the_rewrite_numpy_refuses() -> None:
    with pytest.raises(TypeError, match="0-dimensional"):
        float(np.ones((1, 1)))  # type: ignore[arg-type]


def test_a_long_expression_python_compiles_is_rewritten_too() -> None:
    # A sum of 600 terms nests 600 deep: the rewrite walks it without recursing per level
    # (a NodeTransformer ran out of stack at about 490, which crashed the child: exit 70).
    namespace, shim = run("a = np.ones((1, 1))\nt = float(a)" + " + 1" * 600)
    assert namespace["t"] == 601.0 and shim.take() == [(7, 2)]


class _Reference(ast.NodeTransformer):
    """The rewrite as a transformer that builds new calls, placed by fix_missing_locations:
    what rewrite_scalar_calls, which edits the calls where they stand, must equal."""

    def __init__(self, cell: int) -> None:
        self.cell = cell

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        one = len(node.args) == 1 and not isinstance(node.args[0], ast.Starred)
        if name in ("float", "int") and one and not node.keywords:
            extra = [ast.Constant(name), ast.Constant(self.cell), ast.Constant(node.lineno)]
            call = ast.Call(ast.Name(SHIM_NAME, ast.Load()), [node.args[0], *extra], [])
            return ast.copy_location(call, node)
        return node


SOURCES = [
    "x = float(int(y))\nz = [float(a) for a in b]\n",
    "if isinstance(q, float):\n    w = int(float(3) + int(\n        4))\n",
    "def f(a):\n    return float(a, ) + int(*a) + int(a, 2) + float(x=1) + (lambda: float(a))()\n",
    "class C:\n    def m(self):\n        return {int(k): float(v) for k, v in d.items()}\n",
]


@pytest.mark.parametrize("source", SOURCES)
def test_the_rewrite_equals_a_rebuilt_tree_to_the_last_position(source: str) -> None:
    mine = rewrite_scalar_calls(ast.parse(source), 7)
    reference = ast.fix_missing_locations(_Reference(7).visit(ast.parse(source)))
    assert ast.dump(mine, include_attributes=True) == ast.dump(reference, include_attributes=True)
    code = compile(mine, "<cell 7>", "exec")
    assert marshal.dumps(code) == marshal.dumps(compile(reference, "<cell 7>", "exec"))
