"""Feedback on masks that a generated or catalogued mistake described in misleading words
(red-team r31): a mask compared with None, a mask made of integers, a 0/1 mask of numbers,
a mask the wrong way round."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_misleading_feedback import masked

from grader.course.config import Config
from grader.engine import grade_path

from conftest import NotebookFactory


def test_a_mask_compared_with_none_is_told_to_use_is_not(tmp_path: Path, config: Config) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scaled = q @ k.T / np.sqrt(q.shape[-1])\n"
        "    if mask != None:\n"
        "        scaled = scaled + mask\n"
        "    attention = softmax(scaled)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "error"
    assert "none_compared" in result.mistakes, result.messages
    said = [m for m in result.messages if "`mask != None`" in m]
    assert said and "`mask is not None`" in said[0], result.messages
    assert result.location is not None and result.location.line == 3


def test_a_none_compared_where_it_is_no_parameter_names_no_mistake(
    tmp_path: Path, config: Config
) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scaled = q @ k.T / np.sqrt(q.shape[-1] + 1)\n"
        "    note = None\n"
        "    if note == None and mask is not None:\n"
        "        scaled = scaled + mask\n"
        "    attention = softmax(scaled)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed"
    assert "none_compared" not in result.mistakes, result.messages


def test_a_mask_of_integers_is_told_it_cannot_hold_infinity(tmp_path: Path, config: Config) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.zeros((L, L), dtype=int)\n"
        "    mask[np.triu_indices(L, k=1)] = -np.inf\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert result.status == "error"
    said = [m for m in result.messages if "integers cannot hold" in m]
    assert said and "dtype" in said[0], result.messages


def test_a_zero_one_mask_is_not_called_boolean(tmp_path: Path, config: Config) -> None:
    # the wire carries numbers only: a mask of 1.0s and one of True are told alike, and
    # neither is called what only one of them is
    numbers = "def causal_mask(L):\n    return np.triu(np.ones((L, L)), k=1)\n"
    flags = "def causal_mask(L):\n    return np.triu(np.ones((L, L), dtype=bool), k=1)\n"
    for source in (numbers, flags):
        result = masked(tmp_path, config, "causal_mask", source)
        said = [m for m in result.messages if "exactly where -inf is expected" in m]
        assert said and "boolean" not in said[0], result.messages
        assert "np.where(mask == 1, -np.inf, 0.0)" in said[0]


def test_a_mask_the_wrong_way_round_is_said_so(tmp_path: Path, config: Config) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.full((L, L), -np.inf)\n"
        "    mask[np.triu_indices(L, k=1)] = 0\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert result.status == "failed"
    assert "output_transposed" not in result.mistakes, result.messages
    said = [m for m in result.messages if "the wrong way round" in m]
    assert said and "-inf exactly where 0 is expected" in said[0], result.messages


def test_an_off_by_one_in_the_inner_loop_of_a_triangle_is_placed_there(
    tmp_path: Path, config: Config
) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.zeros((L, L))\n"
        "    for i in range(L):\n"
        "        for j in range(i, L):\n"
        "            mask[i, j] = -np.inf\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert "off_by_one" in result.mistakes, result.messages
    assert result.location is not None and result.location.line == 4, result.location


# Review r37: what the first versions of these findings said wrongly.
def test_a_none_compared_that_raised_nothing_is_not_named(tmp_path: Path, config: Config) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scaled = q @ k.T\n"
        "    if np.any(mask != None):\n"
        "        scaled = scaled + mask\n"
        "    attention = softmax(scaled)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.mistakes == ("scale_missing",), result.messages


@pytest.mark.parametrize(
    "body",
    [
        # the shift computed and never used
        "    shifted = x - np.max(x, axis=-1, keepdims=True)\n    e = np.exp(x)\n",
        # the shift in a comment only
        "    e = np.exp(x)   # was: np.exp(x - np.max(x, axis=-1, keepdims=True))\n",
    ],
)
def test_a_maximum_the_code_does_not_subtract_is_still_said_left_out(
    tmp_path: Path, config: Config, body: str
) -> None:
    source = f"def softmax(x):\n{body}    return e / np.sum(e, axis=0, keepdims=True)\n"
    result = masked(tmp_path, config, "softmax", source)
    assert {"softmax_wrong_axis", "term_dropped"} <= set(result.mistakes), result.messages


def test_an_off_by_one_in_a_triangle_stays_on_the_triangle(tmp_path: Path, config: Config) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.triu(np.ones((L, L)), k=0)\n"
        "    for i in range(0, L):\n"
        "        for j in range(0, L):\n"
        "            if mask[i, j] == 1:\n"
        "                mask[i, j] = -np.inf\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert "off_by_one" in result.mistakes, result.messages
    assert result.location is not None and result.location.line == 2, result.location


def test_a_mask_of_the_other_infinity_is_not_said_turned_round(
    tmp_path: Path, config: Config
) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.tril(np.ones((L, L)))\n"
        "    mask[mask == 1] = np.inf\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert result.status == "failed"
    assert not any("wrong way round" in m for m in result.messages), result.messages


def test_an_infinity_made_an_integer_outside_an_array_says_nothing_of_arrays(
    tmp_path: Path, config: Config
) -> None:
    source = (
        "def causal_mask(L):\n"
        "    top = int(-np.inf)\n"
        "    return np.triu(np.full((L, L), top), k=1)\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert result.status == "error"
    assert not any("integers cannot hold" in m for m in result.messages), result.messages


@pytest.mark.parametrize(
    ("made", "advised"),
    [
        # 0 * -inf: the 0/1 matrix times an infinity the code writes is told it is no mask
        ("np.triu(np.ones((L, L)), k=1) * -np.inf", True),
        # NaN where 0 is expected without an infinity in sight: no mask advice (r43: an
        # entropy's `0 * np.log(0)` was told to "set the entries to -np.inf directly")
        ("np.triu(np.ones((L, L)), k=1) * np.log(np.tril(np.ones((L, L)), k=-L))", False),
    ],
)
def test_nan_where_zero_is_expected_gets_the_mask_advice_only_with_an_infinity(
    tmp_path: Path, config: Config, made: str, advised: bool
) -> None:
    source = f"def causal_mask(L):\n    return {made}\n"
    result = masked(tmp_path, config, "causal_mask", source)
    said = [m for m in result.messages if m.startswith("NaN in ")]
    assert len(said) == 1 and "where 0 is expected" in said[0], result.messages
    assert ("does not give a mask" in said[0]) is advised, said
    if not advised:
        assert "`0 * np.log(0)` is one" in said[0]


def test_a_mask_argument_never_read_is_told_beside_a_failing_callee(
    tmp_path: Path, config: Config, notebook: NotebookFactory
) -> None:
    """r52 S5: a function that always adds a causal mask of its own and never reads `mask`,
    with a softmax that fails (it overflows) and the notebook's globals read, was told
    "fix `softmax` first" twice and nothing of the mask."""
    function = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scaled = q @ k.T / np.sqrt(d_k)\n"
        "    scaled = scaled + causal_mask(L)\n"
        "    attention = softmax(scaled)\n"
        "    return attention @ v, attention\n"
    )
    overflowing = (
        "def softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=-1, keepdims=True)\n"
    )
    causal = "def causal_mask(L):\n    return np.where(np.tri(L) == 1, 0.0, -np.inf)\n"
    path = notebook(["import numpy as np", "L, d_k, d_v = 4, 8, 8", causal, overflowing, function])
    report = grade_path(path, config, "masked_attention")
    result = next(t for t in report.targets if t.name == "scaled_dot_product_attention")
    assert result.status == "failed"
    first = [m for m in result.messages if m.startswith("fix `softmax` first")]
    assert len(first) == 1, result.messages
    assert any(m.startswith("never reads its argument `mask`") for m in result.messages)


def test_an_argument_read_is_not_said_unread(tmp_path: Path, config: Config) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scaled = q @ k.T / np.sqrt(q.shape[-1] + 1)\n"
        "    if mask is not None:\n"
        "        scaled = scaled + mask\n"
        "    attention = softmax(scaled)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed"
    assert not any("never reads" in m for m in result.messages), result.messages
