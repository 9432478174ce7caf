"""Mistakes across targets (issue 17, item 2): a function whose reference contains or calls
another target's logic is diagnosed with that target's catalogued mistakes."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np

from grader.course.config import Config
from grader.engine import grade_path
from grader.judge.fingerprints import catalogue_for
from grader.judge.reference import load_solution
from grader.judge.transplant import carry, inherited_mistakes
from grader.report import Report, TargetResult

import students
from conftest import REPO, NotebookFactory

SCALED = "scaled_dot_product_self_attention"


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def function(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_a_change_is_carried_inside_what_the_other_function_wraps() -> None:
    base = function("def f(a, b):\n    s = a @ b\n    return g(s)")
    other = function("def h(a, b):\n    return g(a @ b / 2)")
    swapped = function("def f__m(a, b):\n    return g(b @ a).T")
    carried = carry(base, other, swapped)
    assert carried == "g(b @ a / 2).T"
    a, b = np.arange(4.0).reshape(2, 2), np.arange(4.0, 8.0).reshape(2, 2)
    scope = {"a": a, "b": b, "g": np.exp}
    assert np.allclose(eval(carried, scope), np.exp(b @ a / 2).T)


def test_changes_that_conflict_or_change_nothing_are_not_carried() -> None:
    base = function("def f(a, b):\n    return a @ b")
    other = function("def h(a, b):\n    return a * b")
    assert carry(base, other, function("def v(a, b):\n    return b @ a")) is None
    # The variant is the other function itself (scaling inside the unscaled one): not carried.
    scaled = function("def h(a, b):\n    return a @ b / 2")
    assert carry(base, scaled, function("def v(a, b):\n    return a @ b / 2")) is None
    # A body that is not straight-line is not inlined.
    loop = function("def h(a, b):\n    for i in a:\n        b = b + i\n    return b")
    assert carry(base, loop, function("def v(a, b):\n    return b @ a")) is None


def test_the_bundled_course_carries_the_qk_mistakes_into_the_scaled_function(
    config: Config,
) -> None:
    for assignment in ("self_attention", "udl_12_1"):
        spec = config.assignment(assignment)
        functions = [t.name for t in spec.targets if not t.variable]
        carried = inherited_mistakes(load_solution(spec), catalogue_for(spec), functions)
        ids = {m.id for m in carried if m.target == SCALED}
        assert {"attention_transposed", "softmax_over_queries", "missing_bias"} <= ids
        assert "scale_in_unscaled" not in ids  # that is what makes the scaled one differ
        assert all(m.target == SCALED for m in carried)  # no scaling mistake goes back


def test_qk_mistakes_are_named_in_the_scaled_function(
    config: Config, notebook: NotebookFactory
) -> None:
    cases = {
        "attention_transposed": students.SCALED.replace(
            "np.transpose(keys) @ queries", "np.transpose(queries) @ keys"
        ),
        "softmax_over_queries": students.SCALED.replace(
            "np.transpose(keys) @ queries", "np.transpose(queries) @ keys"
        ).replace("X_prime = values @ attention", "X_prime = values @ attention.T"),
    }
    for mistake, source in cases.items():
        path = notebook(students.cells(**{SCALED: source}), name=mistake)
        result = target(grade_path(path, config), SCALED)
        assert result.mistakes == (mistake,)
        assert (
            "(a mistake the course lists for `self_attention`, made here in this function's "
            "own code)" in result.messages[1]
        )
        assert "(cell 8, line 5)" in result.messages[1]


def test_a_callee_mistake_made_inline_is_named(config: Config, tmp_path: Path) -> None:
    """`softmax` itself is right; the attention function normalises its scores by hand,
    down the wrong axis: the softmax's catalogued mistake is named in the caller."""
    notebook = nbformat.read(
        str(REPO / "tests" / "notebooks" / "masked_attention" / "correct.ipynb"), as_version=4
    )
    cell = next(c for c in notebook.cells if "def scaled_dot_product_attention" in c.source)
    cell.source = cell.source.replace(
        "    attention = softmax(scaled)\n",
        "    e = np.exp(scaled - np.max(scaled, axis=0, keepdims=True))\n"
        "    attention = e / np.sum(e, axis=0, keepdims=True)\n",
    )
    path = tmp_path / "inline_softmax.ipynb"
    nbformat.write(notebook, str(path))
    report = grade_path(path, config, "masked_attention")
    assert target(report, "softmax").status == "passed"
    result = target(report, "scaled_dot_product_attention")
    assert result.mistakes == ("softmax_wrong_axis",)
    assert (
        "(a mistake the course lists for `softmax`, made here in this function's own code)"
        in result.messages[1]
    )
