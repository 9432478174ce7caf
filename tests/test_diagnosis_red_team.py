"""What a review of the feedback on 112 student-like variants found: a tuple of results of
two shapes was a grader fault (the whole notebook ungraded), correct float32 work lost
points on masked attention, and udl_12_1's (D,) vectors lost points the exercises say they
keep (with a note)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np

from grader.course.config import Config, Tolerance
from grader.engine import grade_path
from grader.judge.number_patterns import running_totals
from grader.report import Report, TargetResult

import students
from conftest import REPO, NotebookFactory

SDPA = "scaled_dot_product_attention"


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def variant(tmp_path: Path, assignment: str, edit: dict[str, str], extra: str = "") -> Path:
    """tests/notebooks/<assignment>/correct.ipynb with each cell that defines a key of
    `edit` replaced by its value, and `extra` run last."""
    folder = REPO / "tests" / "notebooks" / assignment
    notebook = nbformat.read(str(folder / "correct.ipynb"), as_version=4)
    for cell in notebook.cells:
        for name, source in edit.items():
            if f"def {name}(" in cell.source:
                cell.source = source
    if extra:
        notebook.cells.append(nbformat.v4.new_code_cell(extra))
    path = tmp_path / "variant.ipynb"
    nbformat.write(notebook, str(path))
    return path


def test_a_tuple_of_two_shapes_is_no_running_total() -> None:
    want = [np.ones((5, 6)), np.ones((5, 5))]
    got = [np.ones((5, 6)), np.full((5, 5), 2.0)]
    assert running_totals(got, want, Tolerance(1e-5, 1e-8)) is None  # was a ValueError


def test_attention_that_leaves_the_mask_out_of_the_weights_is_graded(
    tmp_path: Path, config: Config
) -> None:
    unmasked = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scores = q @ k.T / np.sqrt(q.shape[-1])\n"
        "    weights = softmax(scores)\n"
        "    if mask is not None:\n"
        "        masked = softmax(scores + mask)\n"
        "        return masked @ v, weights\n"
        "    return weights @ v, weights"
    )
    report = grade_path(variant(tmp_path, "masked_attention", {SDPA: unmasked}), config)
    result = target(report, SDPA)
    assert result.status == "failed" and 0 < result.score < result.max_score


def test_masked_attention_worked_in_float32_earns_full_points(
    tmp_path: Path, config: Config
) -> None:
    single = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    q, k, v = (a.astype(np.float32) for a in (q, k, v))\n"
        "    scores = q @ k.T / np.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = scores + mask\n"
        "    attention = softmax(scores)\n"
        "    return attention @ v, attention"
    )
    report = grade_path(variant(tmp_path, "masked_attention", {SDPA: single}), config)
    assert target(report, SDPA).status == "passed"


def test_udl_vectors_kept_flat_pass_with_a_note_on_their_shape(
    tmp_path: Path, config: Config
) -> None:
    flat = "\n".join(
        f"{name} = [item.flatten() for item in {name}]"
        for name in ("all_queries", "all_keys", "all_values")
    )
    report = grade_path(variant(tmp_path, "udl_12_1", {}, flat), config, "udl_12_1")
    for name in ("all_queries", "all_keys", "all_values"):
        result = target(report, name)
        assert result.status == "passed", result.messages
        assert any("shape (3, 4) where the reference has (3, 4, 1)" in m for m in result.messages)
    assert not any("same numbers" in m for m in target(report, "all_x_prime").messages)


def test_a_shape_note_is_told_once_for_all_the_case_sizes(
    notebook: NotebookFactory, config: Config
) -> None:
    # A softmax returning a column passes under `compare: squeeze`; its note was told once
    # per case size, six lines that differed only in N.
    column = (
        "def softmax(items_in):\n"
        "    items = np.asarray(items_in, dtype=float).reshape(-1, 1)\n"
        "    return np.exp(items) / np.sum(np.exp(items))"
    )
    report = grade_path(notebook(students.cells(softmax=column)), config)
    result = target(report, "softmax")
    assert result.status == "passed", result.messages
    shapes = [m for m in result.messages if "where the reference has" in m]
    assert len(shapes) == 1, result.messages
    assert shapes[0].startswith("shape (")
    assert shapes[0].endswith(" (the same in 5 more cases)")


def test_a_list_where_an_array_is_expected_passes_with_a_note(
    notebook: NotebookFactory, config: Config
) -> None:
    # `.tolist()` on the result passed in silence; the next exercise's `.T` or `@` on it fails.
    listed = students.SELF_ATTENTION.replace("return X_prime", "return X_prime.tolist()")
    assert listed != students.SELF_ATTENTION
    report = grade_path(notebook(students.cells(self_attention=listed)), config)
    result = target(report, "self_attention")
    assert result.status == "passed" and result.score == result.max_score
    notes = [m for m in result.messages if "where the reference returns an array" in m]
    assert len(notes) == 1 and notes[0].startswith("returns a list"), result.messages
    assert not any("where the reference returns" in m for m in target(report, "softmax").messages)


def _scaled_message(notebook: NotebookFactory, config: Config, scaled: str) -> TargetResult:
    report = grade_path(notebook(students.cells(scaled_dot_product_self_attention=scaled)), config)
    return target(report, "scaled_dot_product_self_attention")


def test_scaled_scores_dropped_from_a_call_are_assigned_to_the_scores_not_to_numpy(
    notebook: NotebookFactory, config: Config
) -> None:
    dropped = students.SCALED.replace(
        "all_km_qn = all_km_qn / np.sqrt(queries.shape[0])",
        "np.divide(all_km_qn, np.sqrt(queries.shape[0]))",
    )
    result = _scaled_message(notebook, config, dropped)
    assert result.mistakes == ("scale_discarded",)
    said = " ".join(result.messages)
    assert "Assign it: `all_km_qn = np.divide(all_km_qn, " in said and "`np = " not in said


def test_scaled_scores_put_under_a_name_never_used_are_scale_discarded(
    notebook: NotebookFactory, config: Config
) -> None:
    # EXERCISES.md: "assigned a new name and then used the old one" (it was scale_missing).
    renamed = students.SCALED.replace(
        "all_km_qn = all_km_qn / np.sqrt", "scaled = all_km_qn / np.sqrt"
    )
    result = _scaled_message(notebook, config, renamed)
    assert result.mistakes == ("scale_discarded",)
    assert "(`scaled` is never used after)" in " ".join(result.messages)
    assert result.location is not None and result.location.line == 6


def test_a_mistake_that_needs_a_global_is_not_named_where_none_is_read(
    notebook: NotebookFactory, config: Config
) -> None:
    # `0.5 *` matched scale_hardcoded and uses_global alike (D = 4 in the notebook), and
    # both were named, uses_global placed on the `def` line of code that reads no global.
    halved = students.SCALED.replace("all_km_qn / np.sqrt(queries.shape[0])", "0.5 * all_km_qn")
    result = _scaled_message(notebook, config, halved)
    assert result.mistakes == ("scale_hardcoded",), result.messages
