"""A mistake made in a helper of the student's own (`one_head`) is placed on the helper's line,
not on the `def` of the target or the line that calls the helper (red-team r31)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

from conftest import REPO

MULTIHEAD = REPO / "tests" / "notebooks" / "multihead_attention" / "correct.ipynb"
TARGET = "multihead_scaled_self_attention"


def graded(tmp_path: Path, config: Config, old: str, new: str) -> tuple[TargetResult, int]:
    """The correct multihead notebook with `old` replaced by `new` in the cell defining
    `one_head`; the target's result, and that cell's number (1-based, as places are)."""
    notebook = nbformat.read(MULTIHEAD, as_version=4)
    index, cell = next((i, c) for i, c in enumerate(notebook.cells) if "def one_head" in c.source)
    assert old in cell.source
    cell.source = cell.source.replace(old, new)
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, "multihead_attention")
    return next(t for t in report.targets if t.name == TARGET), index + 1


def line_of(text: str) -> int:
    """The line of the cell defining `one_head` in the correct notebook that holds `text`."""
    notebook = nbformat.read(MULTIHEAD, as_version=4)
    cell = next(c for c in notebook.cells if "def one_head" in c.source)
    return next(i for i, line in enumerate(cell.source.splitlines(), 1) if text in line)


def test_a_derived_mistake_of_a_helper_is_placed_in_the_helper(
    tmp_path: Path, config: Config
) -> None:
    result, cell = graded(tmp_path, config, "values = omega_v @ X + beta_v", "values = omega_v @ X")
    assert "missing_bias" in result.mistakes, result.messages
    line = line_of("values = omega_v @ X")
    assert result.location is not None, result.messages
    assert (result.location.cell, result.location.line) == (cell, line), result.location
    said = [m for m in result.messages if m.startswith("missing_bias:")]
    assert said and "in `one_head`" in said[0], result.messages


def test_a_catalogued_mistake_found_only_in_a_helper_is_placed_there(
    tmp_path: Path, config: Config
) -> None:
    result, cell = graded(tmp_path, config, "np.sqrt(queries.shape[0])", "np.sqrt(X.shape[0])")
    assert "scale_wrong_dim" in result.mistakes, result.messages
    line = line_of("scores = keys.T @ queries")
    assert result.location is not None, result.messages
    assert (result.location.cell, result.location.line) == (cell, line), result.location
