"""Students' copies of the textbook notebook 12.1, graded as they hand them in."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest

from grader.course.config import Config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.report import Report, TargetResult

from conftest import REPO

NOTEBOOKS = REPO / "tests" / "notebooks" / "udl_12_1"

# Published values of the textbook's data (EXERCISES.md): columns of the outputs.
SELF_ATTENTION = [
    [0.94744244, -0.24348429, -0.91310441, -0.44522983],
    [1.64201168, -0.08470004, 4.02764044, 2.18690791],
    [1.61949281, -0.06641533, 3.96863308, 2.15858316],
]
SCALED = [
    [0.97411966, -0.23738409, -0.72333202, -0.34413007],
    [1.59622051, -0.09516106, 3.70194096, 2.01339538],
    [1.32638014, 0.13062402, 3.02371664, 1.6902419],
]


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def solution_namespace(path: Path) -> dict[str, Any]:
    """The solution notebook run here, in the test (the grader itself never runs it)."""
    namespace: dict[str, Any] = {"__name__": "__solution__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in load_submission(path).cells:
            exec(compile(cell.source, f"<cell {cell.index}>", "exec"), namespace)
    return namespace


def test_reference_reproduces_the_published_values(config: Config) -> None:
    ns = solution_namespace(config.assignment("udl_12_1").solution)
    args = [ns[k] for k in ("X", "omega_v", "omega_q", "omega_k", "beta_v", "beta_q", "beta_k")]
    assert np.allclose(ns["self_attention"](*args).T, SELF_ATTENTION)
    assert np.allclose(ns["scaled_dot_product_self_attention"](*args).T, SCALED)
    assert np.allclose(np.hstack(ns["all_x_prime"]).T, SELF_ATTENTION)


def test_a_correct_copy_scores_full_marks_and_is_recognised(config: Config) -> None:
    report = grade_path(NOTEBOOKS / "correct.ipynb", config)
    assert report.assignment == "udl_12_1"
    assert report.score == report.max_score == 10
    assert {t.name for t in report.targets} >= {"all_queries", "all_x_prime", "softmax"}


@pytest.mark.slow
def test_a_messy_copy_scores_full_marks_and_says_what_it_skipped(config: Config) -> None:
    report = grade_path(NOTEBOOKS / "messy.ipynb", config)
    assert report.score == report.max_score
    notes = "\n".join(report.notes)
    assert "`!pip install numpy matplotlib` is a shell command" in notes
    assert "`%matplotlib inline` is an IPython magic" in notes
    assert "`np.infty` was removed in NumPy 2.0; write `np.inf`" in notes
    assert "cell 9, line 5: float()/int() of a 1×1 array" in notes
    errors = "\n".join(report.errors)
    assert "cell 8: does not parse" in errors  # the half-typed `all_values[0]*` cell
    assert "attention_matrix" in errors  # a cell that raises
    assert "matplotlib" not in errors  # the plotting cell ran


def test_global_d_fails_only_other_shapes_and_is_told_why(config: Config) -> None:
    result = target(grade_path(NOTEBOOKS / "global_d.ipynb", config), "self_attention")
    assert result.status == "error"
    assert result.case_outcomes[0] == "passed"  # D = 4, N = 3: the notebook's own sizes
    assert all(o != "passed" for o in result.case_outcomes[1:])
    assert result.mistakes == ("uses_global",)
    assert any("reads the notebook's globals `D`, `N`" in m for m in result.messages)
    assert result.score == pytest.approx(0.5)


@pytest.mark.slow
def test_seed_001_in_the_textbook_format(config: Config) -> None:
    report = grade_path(NOTEBOOKS / "seed_001.ipynb", config)
    assert target(report, "self_attention").mistakes == ("output_transposed",)
    scaled = target(report, "scaled_dot_product_self_attention")
    assert scaled.mistakes == ("output_transposed", "scale_discarded", "scale_hardcoded")
    for name in ("all_queries", "all_keys", "all_values", "all_x_prime", "softmax"):
        assert target(report, name).status == "passed"


def test_a_wrong_variable_is_graded_after_the_notebook_ran(config: Config) -> None:
    report = grade_path(NOTEBOOKS / "loop_uses_keys.ipynb", config)
    result = target(report, "all_x_prime")
    assert result.status == "failed"
    assert any("the value after the notebook ran" in m for m in result.messages)
    assert target(report, "all_values").status == "passed"


def test_a_missing_variable(config: Config, tmp_path: Path) -> None:
    notebook = nbformat.read(str(NOTEBOOKS / "correct.ipynb"), as_version=4)
    notebook.cells = [c for c in notebook.cells if "all_x_prime = []" not in c.source]
    out = tmp_path / "no_loop.ipynb"
    nbformat.write(notebook, str(out))
    result = target(grade_path(out, config, "udl_12_1"), "all_x_prime")
    assert result.status == "missing"
    assert "not defined after the notebook ran" in result.messages[0]


def test_keys_filled_with_the_queries_are_told_on_the_line_that_fills_them(
    config: Config, tmp_path: Path
) -> None:
    # Told "uses `all_queries` where `all_keys` is meant (in what is returned)" with no
    # line, of a cell that returns nothing, and the result placed on `all_keys = []` (r49).
    notebook = nbformat.read(str(NOTEBOOKS / "correct.ipynb"), as_version=4)
    (cell,) = [c for c in notebook.cells if c.source.startswith("all_queries = []")]
    cell.source = (
        "all_queries = []\nall_keys = []\nall_values = []\nfor x in all_x:\n"
        "    query = beta_q + omega_q @ x\n    key = beta_k + omega_k @ x\n"
        "    value = beta_v + omega_v @ x\n    all_queries.append(query)\n"
        "    all_keys.append(query)\n    all_values.append(value)\n"
    )
    out = tmp_path / "keys_are_queries.ipynb"
    nbformat.write(notebook, str(out))
    result = target(grade_path(out, config, "udl_12_1"), "all_keys")
    told = [f for f in result.findings if f.kind == "mistake"]
    assert [f.mistake for f in told] == ["wrong_variable"]
    assert "`all_keys` holds the values of `all_queries`" in told[0].message
    assert "returned" not in told[0].message
    assert told[0].location is not None and told[0].location.line == 9  # its .append line
    assert result.location == told[0].location
