"""Feedback that r31 found vague or misplaced: a mistake made in a helper of the student's own
(`one_head`) is placed on the helper's line, not on the target's `def` or its call; items of
a returned tuple that are transposed are said so."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_misleading_feedback import one

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory

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


@pytest.mark.parametrize(
    ("old", "new", "mistake", "text"),
    [
        # derived from one_head's reference: the student's one_head has the changed line
        ("values = omega_v @ X + beta_v", "values = omega_v @ X", "missing_bias", "values ="),
        # catalogued for the target, whose own body has no `sqrt`: the helper's line has
        ("np.sqrt(queries.shape[0])", "np.sqrt(X.shape[0])", "scale_wrong_dim", "scores ="),
    ],
)
def test_a_mistake_made_in_a_helper_is_placed_in_the_helper(
    tmp_path: Path, config: Config, old: str, new: str, mistake: str, text: str
) -> None:
    result, cell = graded(tmp_path, config, old, new)
    assert mistake in result.mistakes, result.messages
    assert result.location is not None, result.messages
    assert (result.location.cell, result.location.line) == (cell, line_of(text)), result.location
    said = [m for m in result.messages if m.startswith(f"{mistake}:")]
    assert said and f"(cell {cell}, line {line_of(text)})" in said[0], result.messages


SENTENCE = REPO / "tests" / "notebooks" / "sentence_attention" / "correct.ipynb"


def projected(tmp_path: Path, config: Config, body: str) -> TargetResult:
    """The correct sentence notebook with `project_qkv`'s body replaced; its result."""
    notebook = nbformat.read(SENTENCE, as_version=4)
    cell = next(c for c in notebook.cells if "def project_qkv" in c.source)
    cell.source = "def project_qkv(X, W_q, W_k, W_v):\n" + body
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, "sentence_attention")
    return next(t for t in report.targets if t.name == "project_qkv")


def test_items_of_a_tuple_returned_transposed_are_named(tmp_path: Path, config: Config) -> None:
    every = "    Q = W_q.T @ X.T\n    K = W_k.T @ X.T\n    V = W_v.T @ X.T\n    return Q, K, V\n"
    result = projected(tmp_path, config, every)
    assert result.mistakes == ("output_transposed",), result.messages
    said = [m for m in result.messages if m.startswith("output_transposed:")]
    assert said and "elements [0], [1], [2] of the tuple transposed" in said[0], result.messages
    assert "(cell" in said[0] and "line 5)" in said[0]  # the `return`
    assert not any(m.startswith("only element") for m in result.messages)

    # one item: the mutant that transposes its product names it more closely, and wins
    one = "    Q = X @ W_q\n    K = (X @ W_k).T\n    V = X @ W_v\n    return Q, K, V\n"
    result = projected(tmp_path, config, one)
    assert result.mistakes == ("intermediate_transposed",), result.messages


def test_a_scaling_at_another_step_is_placed_on_the_students_square_root(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SCALED.replace(
        "    all_km_qn = all_km_qn / np.sqrt(queries.shape[0])\n", ""
    ).replace(
        "    X_prime = values @ attention\n",
        "    attention = attention / np.sqrt(queries.shape[0])\n    X_prime = values @ attention\n",
    )
    assert "attention / np.sqrt" in source
    result = one(config, notebook, "scaled_dot_product_self_attention", source)
    assert "scale_misplaced" in result.mistakes, result.messages
    line = source.splitlines().index("    attention = attention / np.sqrt(queries.shape[0])") + 1
    assert result.location is not None and result.location.line == line, result.location


def test_a_maximum_the_student_subtracts_is_not_said_left_out(
    config: Config, notebook: NotebookFactory
) -> None:
    # over the whole array, a global maximum changes nothing: the numbers are those of the
    # pair 'wrong axis, and no maximum', but the code has its maximum
    source = (
        "def softmax_cols(data_in):\n"
        "    e = np.exp(data_in - np.max(data_in))\n"
        "    return e / np.sum(e)\n"
    )
    result = one(config, notebook, "softmax_cols", source)
    assert result.mistakes == ("softmax_wrong_axis",), result.messages
    assert result.location is not None and result.location.line == 3


def test_a_helper_the_target_never_calls_is_not_blamed(tmp_path: Path, config: Config) -> None:
    # both heads worked out in the target itself; the notebook's one_head is right and unused
    body = (
        "    q1, k1, v1 = omega_q1 @ X + beta_q1, omega_k1 @ X + beta_k1, omega_v1 @ X\n"
        "    q2, k2, v2 = omega_q2 @ X + beta_q2, omega_k2 @ X + beta_k2, omega_v2 @ X\n"
        "    h1 = v1 @ softmax_cols(k1.T @ q1 / np.sqrt(q1.shape[0]))\n"
        "    h2 = v2 @ softmax_cols(k2.T @ q2 / np.sqrt(q2.shape[0]))\n"
        "    return omega_c @ np.vstack((h1, h2))\n"
    )
    notebook = nbformat.read(MULTIHEAD, as_version=4)
    index, cell = next((i, c) for i, c in enumerate(notebook.cells) if f"def {TARGET}" in c.source)
    cell.source = cell.source.split("):\n", 1)[0] + "):\n" + body
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    result = next(t for t in grade_path(path, config, "multihead_attention").targets
                  if t.name == TARGET)  # fmt: skip
    assert "missing_bias" in result.mistakes, result.messages
    assert result.location is not None and result.location.cell == index + 1, result.location
    # the helper's work is done here: not "in `one_head`, which it calls", and not placed on
    # a call of another function (`softmax_cols(` on line 4)
    said = next(m for m in result.messages if m.startswith("missing_bias:"))
    assert "which it calls" not in said, said
    assert "`one_head` computes (`multihead_scaled_self_attention` does not call it)" in said
    assert result.location.line == 1, result.location
