"""Feedback that no catalogue entry holds, read from the student's own code and numbers
(red-team r52 M2): parameters declared in another order, a computation in float16 or
float32, a loop by index that leaves out the last pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_misleading_feedback import masked

from grader.course.config import Config
from grader.engine import grade_path
from grader.judge.number_patterns import float_precision, narrows
from grader.judge.relation_sentences import NO_MATCH
from grader.judge.relations import axis_beyond
from grader.report import TargetResult

import students
from conftest import NotebookFactory


def graded(notebook: NotebookFactory, config: Config, function: str, source: str) -> TargetResult:
    """A correct self-attention notebook with `function` replaced by `source`; its result."""
    path = notebook(students.cells(**{function: source}))
    report = grade_path(path, config, "self_attention")
    return next(t for t in report.targets if t.name == function)


def test_parameters_in_another_order_are_told_at_the_def_line(
    notebook: NotebookFactory, config: Config
) -> None:
    source = (
        "def self_attention(X, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):\n"
        "    Q = omega_q @ X + beta_q\n"
        "    K = omega_k @ X + beta_k\n"
        "    V = omega_v @ X + beta_v\n"
        "    return V @ softmax_cols(K.T @ Q)\n"
    )
    result = graded(notebook, config, "self_attention", source)
    assert result.status == "failed"
    assert result.mistakes[0] == "parameter_order", result.mistakes
    first = result.messages[1]  # after the count of failed cases
    assert first.startswith("takes its parameters in another order"), result.messages
    assert "`self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k)`" in first
    assert "`omega_q` receives what the exercise calls `omega_v`" in first
    assert NO_MATCH not in result.messages
    assert result.location is not None and result.location.line == 1


def test_renamed_parameters_say_nothing_about_order(
    notebook: NotebookFactory, config: Config
) -> None:
    """Other names in the same places: a wrong body, not a wrong order."""
    source = (
        "def self_attention(X, Wv, Wq, Wk, bv, bq, bk):\n"
        "    Q = Wq @ X + bq\n"
        "    K = Wk @ X + bk\n"
        "    V = Wv @ X + bv\n"
        "    return V @ softmax_cols(Q.T @ K)\n"
    )
    result = graded(notebook, config, "self_attention", source)
    assert result.status == "failed"
    assert "parameter_order" not in result.mistakes
    assert not any("another order" in m for m in result.messages), result.messages


def test_a_computation_in_float16_is_told_with_its_line(tmp_path: Path, config: Config) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    q, k, v = q.astype(np.float16), k.astype(np.float16), v.astype(np.float16)\n"
        "    scores = q @ k.T / np.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = scores + mask\n"
        "    attention = softmax(scores)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed"
    said = [m for m in result.messages if "to the precision of float16" in m]
    assert said, result.messages
    assert "(cell " in said[0] and "compute in float64" in said[0]
    assert NO_MATCH not in result.messages
    assert result.location is not None and result.location.line == 2


def test_a_line_that_names_float32_does_not_excuse_a_wrong_result(
    tmp_path: Path, config: Config
) -> None:
    """Numbers far beyond float32's precision are not told as a precision."""
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    q = q.astype(np.float32)\n"
        "    scores = q @ k.T / q.shape[-1]\n"
        "    if mask is not None:\n"
        "        scores = scores + mask\n"
        "    attention = softmax(scores)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed"
    assert not any("precision of" in m for m in result.messages), result.messages


def test_float_precision_names_the_narrowest_type_the_numbers_fit() -> None:
    rng = np.random.default_rng(5)
    expected = rng.normal(size=(6, 4))
    as_float32 = expected.astype(np.float32).astype(np.float64)
    as_float16 = (expected.astype(np.float16) @ np.eye(4, dtype=np.float16)).astype(float)
    past_float32 = float_precision([(as_float32 + 1e-4, expected)])  # within float16's
    assert past_float32 == ("float16", 3), past_float32
    assert float_precision([(as_float16, expected)]) == ("float16", 3)
    scaled = as_float32 * (1 + 3e-7)
    assert float_precision([(scaled, expected)]) == ("float32", 7)
    assert float_precision([(expected * 1.01, expected)]) is None  # a 1% factor is no rounding
    assert float_precision([(np.full((6, 4), np.nan), expected)]) is None


def test_narrowing_lines_are_read_outside_comments() -> None:
    assert narrows("x = x.astype(np.float16)")
    assert narrows("x = np.asarray(x, dtype='f4')")
    assert narrows("x = np.half(x)")
    assert not narrows("x = x.astype(float)  # not float32")
    assert not narrows("scores = q @ k.T")


def test_a_loop_by_index_that_stops_one_early_is_an_off_by_one_at_its_line(
    notebook: NotebookFactory, config: Config
) -> None:
    """The reference loops over `zip(weights, values)`; the student's `range(len(v) - 1)`
    leaves out the last pair (r52 M2), which was told "no known mistake matches"."""
    source = (
        "def attention_loop(all_queries, all_keys, all_values):\n"
        "    out = []\n"
        "    for q in all_queries:\n"
        "        scores = [float((k.T @ q).item()) for k in all_keys]\n"
        "        a = softmax(scores)\n"
        "        x = np.zeros_like(all_values[0])\n"
        "        for m in range(len(all_values) - 1):\n"
        "            x = x + a[m] * all_values[m]\n"
        "        out.append(x)\n"
        "    return out\n"
    )
    result = graded(notebook, config, "attention_loop", source)
    assert result.status == "failed"
    assert "off_by_one" in result.mistakes, result.messages
    assert NO_MATCH not in result.messages
    assert result.location is not None and result.location.line == 7


def test_an_axis_a_one_row_case_lacks_is_told_instead_of_no_known_mistake(
    tmp_path: Path, config: Config
) -> None:
    """r54 ma06: `axis=1` raised AxisError on the one-row case and was told "no known mistake
    matches this output" (there was no output)."""
    source = (
        "def softmax(x):\n"
        "    x_max = np.max(x, axis=1, keepdims=True)\n"
        "    e = np.exp(x - x_max)\n"
        "    return e / np.sum(e, axis=1, keepdims=True)\n"
    )
    result = masked(tmp_path, config, "softmax", source)
    assert result.status == "error" and NO_MATCH not in result.messages, result.messages
    said = [m for m in result.messages if m.startswith("`axis=1` names an axis")]
    assert said and "array of 1 dimension does not have" in said[0], result.messages
    assert "`axis=-1` is the last axis" in said[0]
    assert axis_beyond("axis -2 is out of bounds for array of dimension 1") == (
        "`axis=-2` names an axis that an array of 1 dimension does not have, and some cases "
        "pass one"
    )
    assert axis_beyond("operands could not be broadcast together") is None


def test_a_softmax_that_overflows_to_nan_is_told_where_nan_comes_from_not_its_sums(
    tmp_path: Path, config: Config
) -> None:
    """r54 ma13: a shift by the minimum overflows on the large case; told "the rows do not
    sum to one (sums from nan to nan)", and NaN's causes without the overflow's."""
    source = (
        "def softmax(x):\n"
        "    x_max = np.min(x, axis=-1, keepdims=True)\n"
        "    e = np.exp(x - x_max)\n"
        "    return e / np.sum(e, axis=-1, keepdims=True)\n"
    )
    result = masked(tmp_path, config, "softmax", source)
    assert result.status == "failed"
    assert not any("sum to one" in m for m in result.messages), result.messages
    said = [m for m in result.messages if m.startswith("NaN in ")]
    assert said and "`inf / inf` (an `np.exp` that overflowed" in said[0], result.messages
