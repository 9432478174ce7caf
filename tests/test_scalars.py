"""The NumPy ≥ 2.4 float()-of-1×1-array shim."""

from __future__ import annotations

import ast

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
