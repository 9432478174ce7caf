"""Feedback that quoted code the student never wrote, or pointed at the wrong line, or said
a wrong thing beside a right one (red-team r54): each student's notebook is a correct one
with one line changed."""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np

from grader.course.config import Config, Tolerance
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.judge.relations import lines_in_every_case
from grader.judge.shown import Shown
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory


def changed(
    tmp_path: Path, config: Config, assignment: str, old: str, new: str, target: str
) -> TargetResult:
    """The assignment's correct test notebook with `old` made `new` in the one cell that
    holds it, graded; the result of `target`."""
    return changed_at(tmp_path, config, assignment, old, new, target)[0]


def changed_at(
    tmp_path: Path, config: Config, assignment: str, old: str, new: str, target: str
) -> tuple[TargetResult, int]:
    """`changed`, and the line of the changed cell that holds the start of `new`."""
    notebook = nbformat.read(REPO / "tests" / "notebooks" / assignment / "correct.ipynb", 4)
    cells = [c for c in notebook.cells if old in c.source]
    assert len(cells) == 1, f"{old!r} is in {len(cells)} cells"
    cells[0].source = cells[0].source.replace(old, new)
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, assignment)
    line = next(
        i for i, text in enumerate(cells[0].source.splitlines(), 1) if new.splitlines()[0] in text
    )
    return next(t for t in report.targets if t.name == target), line


def self_attention(
    notebook: NotebookFactory, config: Config, function: str, old: str, new: str
) -> TargetResult:
    """The correct self-attention notebook with `old` made `new` in `function`; its result."""
    source = students.CORRECT[function]
    assert old in source
    path = notebook(students.cells(**{function: source.replace(old, new)}))
    report = grade_path(path, config, "self_attention")
    return next(t for t in report.targets if t.name == function)


def test_a_quote_one_word_from_the_students_line_is_not_shown_as_theirs(
    notebook: NotebookFactory, config: Config
) -> None:
    """r54 sa09: "works along axis 1 in `np.max(data_in, axis=0, keepdims=True)`", the
    solution's expression, where the student wrote `axis=1`."""
    result = self_attention(
        notebook,
        config,
        "softmax_cols",
        "exp_values = np.exp(data_in)\n",
        "exp_values = np.exp(data_in - np.max(data_in, axis=1, keepdims=True))\n",
    )
    assert result.status == "failed" and "softmax_wrong_axis" in result.mistakes
    said = next(m for m in result.messages if m.startswith("softmax_wrong_axis"))
    assert "axis=0" not in said, said
    assert "`exp_values = np.exp(data_in - np.max(data_in, axis=1, keepdims=True))`" in said


def test_quotes_of_the_meant_form_and_of_the_students_own_code_are_kept(
    tmp_path: Path,
) -> None:
    """The rule reads which quote claims the student's code: a fix one word away is the
    point of the sentence; a quote as they wrote it, or far from anything, is kept."""
    path = tmp_path / "student.ipynb"
    cell = "def scale(q, k):\n    d_k = k.shape[0]\n    return q / np.sqrt(d_k)\n"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)]), path)
    shown = Shown(load_submission(path), None, tmp_path / "no-solution.ipynb")
    assert not shown.quotes_only_shown("takes `q.shape[0]` (computing `d_k`)")  # theirs: k
    assert shown.quotes_only_shown("takes `k.shape[0]` where `k.shape[1]` is meant")
    assert shown.quotes_only_shown("divides by `d_k`; write `np.sqrt(d_k) ** 0.5`")
    assert shown.quotes_only_shown("in `q / np.sqrt(d_k)`")  # as they wrote it
    assert shown.quotes_only_shown("the loop over `all_keys[:-1]`")  # two words: a change


def test_a_shift_by_the_maximum_kept_in_a_helper_is_not_told_missing(
    tmp_path: Path, config: Config
) -> None:
    """r54 mh06: `softmax_cols` that subtracts the maximum along axis 1 and sums along
    axis 1 was told "leaves out `- np.max(data_in, axis=0, keepdims=True)`" as well."""
    result = changed(
        tmp_path,
        config,
        "multihead_attention",
        "    e = np.exp(data_in - np.max(data_in, axis=0, keepdims=True))\n"
        "    return e / np.sum(e, axis=0, keepdims=True)",
        "    e = np.exp(data_in - np.max(data_in, axis=1, keepdims=True))\n"
        "    return e / np.sum(e, axis=1, keepdims=True)",
        "multihead_scaled_self_attention",
    )
    assert result.status == "failed"
    assert result.mistakes == ("softmax_wrong_axis",), result.messages
    assert not any("leaves out" in m for m in result.messages), result.messages


def test_a_result_saturated_on_the_probe_case_is_not_told_to_ignore_its_input(
    tmp_path: Path, config: Config
) -> None:
    """r54 se02: the denominator's unshifted `np.exp(x)` overflows on the large scores of
    the probed case, so every output there is 0 whatever `x` is: it was told "ignores `x`"."""
    result = changed(
        tmp_path,
        config,
        "sentence_attention",
        "    e = np.exp(x - m)\n    return e / e.sum(axis=axis, keepdims=True)",
        "    return np.exp(x - m) / np.exp(x).sum(axis=axis, keepdims=True)",
        "stable_softmax",
    )
    assert result.status == "failed"
    assert not any("ignores `x`" in m for m in result.messages), result.messages


def test_an_argument_changed_in_place_is_not_also_told_as_a_loop_that_stops_early(
    notebook: NotebookFactory, config: Config
) -> None:
    """r54 sa07: beside mutates_input, "only rows at the last differ …, as when a loop or
    slice stops early"."""
    result = self_attention(
        notebook,
        config,
        "attention_loop",
        "            x_prime = x_prime + all_values[m] * attention[m]",
        "            value = all_values[m]\n"
        "            value *= attention[m]\n"
        "            x_prime = x_prime + value",
    )
    assert result.status == "failed" and "mutates_input" in result.mistakes
    assert not any("stops early" in m for m in result.messages), result.messages


def test_wrong_rows_at_the_end_in_cases_of_several_sizes_are_said_in_english() -> None:
    pairs = []
    for rows, wrong in ((4, 1), (5, 2), (6, 3)):
        want = np.arange(rows * 3, dtype=float).reshape(rows, 3) + 1
        got = want.copy()
        got[rows - wrong :] += 10
        pairs.append((got, want))
    said = lines_in_every_case(pairs, Tolerance(), looped=True)
    assert said == (
        "only rows at the end differ in every case; the others are right, as when a loop or "
        "slice stops early"
    )


def test_arrays_joined_in_the_other_order_are_placed_on_the_line_that_joins_them(
    tmp_path: Path, config: Config
) -> None:
    """r54 mh05: the swap was placed on the `return` that uses the joined array."""
    result, line = changed_at(
        tmp_path,
        config,
        "multihead_attention",
        "np.vstack((h1, h2))",
        "np.vstack((h2, h1))",
        "multihead_scaled_self_attention",
    )
    assert result.status == "failed" and "order_swapped" in result.mistakes
    assert result.location is not None and result.location.line == line, result.messages


def test_a_large_finite_number_for_an_infinity_points_at_the_line_that_writes_it(
    tmp_path: Path, config: Config
) -> None:
    result, line = changed_at(
        tmp_path,
        config,
        "masked_attention",
        "mask[mask == 0] = -np.inf",
        "mask[mask == 0] = -1e9",
        "causal_mask",
    )
    assert result.status == "failed" and result.location is not None
    assert any(m.startswith("a large finite number") for m in result.messages)
    assert result.location.line == line, result.messages
