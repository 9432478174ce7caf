"""Mistakes of copied lines and loops: a loop that leaves out one item of what it runs over,
where the result keeps its length (named `off_by_one` from a mutant of the reference that
drops the last or first item of a loop's sequence, placed on the student's loop); one mistake
copied into each of the queries, keys and values (a mutant that makes it alike in each)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_misleading_feedback import one, replaced

from grader.course.config import Config

import students
from conftest import REPO, NotebookFactory

SENTENCE = REPO / "tests" / "notebooks" / "sentence_attention" / "correct.ipynb"
KEY_LOOP = "        for key in all_keys:\n"
VALUE_LOOP = "for m in range(len(all_values)):"


@pytest.mark.parametrize(
    ("loop", "which"),
    [
        ("        for key in all_keys[:-1]:\n", "last"),
        ("        for m in range(len(all_keys) - 1):\n            key = all_keys[m]\n", "last"),
        ("        for key in all_keys[1:]:\n", "first"),
        # a loop from 1, and a count kept on a line of its own (not the place: the loop is)
        ("        for m in range(1, len(all_keys)):\n            key = all_keys[m]\n", "first"),
        ("        for m in range(n_keys - 1):\n            key = all_keys[m]\n", "last"),
    ],
)
def test_a_key_loop_one_short_is_named_and_pointed_at(
    config: Config, notebook: NotebookFactory, loop: str, which: str
) -> None:
    # each query's weights come from one key fewer; the output list keeps its length
    assert KEY_LOOP in students.ATTENTION_LOOP and VALUE_LOOP in students.ATTENTION_LOOP
    # the sum runs over the weights there are (as many as the keys used)
    weighted = students.ATTENTION_LOOP.replace(VALUE_LOOP, "for m in range(len(attention)):")
    counted = weighted.replace(
        "    all_x_prime = []\n", "    all_x_prime = []\n    n_keys = len(all_keys)\n"
    )
    source = counted.replace(KEY_LOOP, loop)
    result = one(config, notebook, "attention_loop", source)
    assert result.status == "failed" and result.mistakes == ("off_by_one",), result.messages
    said = next(m for m in result.messages if m.startswith("off_by_one:"))
    assert f"leaves out its {which} item" in said and "`all_keys" in said, said
    line = source.splitlines().index(loop.splitlines()[0]) + 1
    assert result.location is not None and result.location.line == line, result.messages
    assert not any("no known mistake" in m for m in result.messages)


@pytest.mark.parametrize(
    ("name", "old", "new", "mistake", "line"),
    [
        # x.T @ omega, transposed back: the weights transposed, in each of the three
        ("qkv_loop", "omega_{} @ x", "(x.T @ omega_{}).T", "operand_transposed", 6),
        # the same in the matrix form
        ("self_attention", "omega_{} @ X", "omega_{}.T @ X", "operand_transposed", 2),
    ],
)
def test_one_mistake_copied_into_each_projection_is_named_once(
    config: Config,
    notebook: NotebookFactory,
    name: str,
    old: str,
    new: str,
    mistake: str,
    line: int,
) -> None:
    # a single mutant changes one of the queries, keys and values, a pair two: the student
    # who copies the line copies the mistake into all three
    source = {"qkv_loop": students.QKV_LOOP, "self_attention": students.SELF_ATTENTION}[name]
    for letter in "qkv":
        assert old.format(letter, letter) in source
        source = source.replace(old.format(letter, letter), new.format(letter, letter))
    result = one(config, notebook, name, source)
    assert result.status == "failed" and result.mistakes == (mistake,), result.messages
    said = next(m for m in result.messages if m.startswith(f"{mistake}:"))
    assert "and the same in computing" in said, said
    assert result.location is not None and result.location.line == line, result.messages


def test_a_complete_loop_is_not_said_to_leave_out_an_item(
    config: Config, notebook: NotebookFactory
) -> None:
    # the same numbers as a key loop that stops one early, made by cutting the scores after
    # a loop over every key: no loop of theirs misses one, so none is said to
    source = students.ATTENTION_LOOP.replace(
        "attention = softmax(all_km_qn)", "attention = softmax(all_km_qn[:-1])"
    ).replace(VALUE_LOOP, "for m in range(len(attention)):")
    result = one(config, notebook, "attention_loop", source)
    assert result.status == "failed", result.messages
    assert not any("leaves out its" in m for m in result.messages), result.messages


def test_an_off_by_one_of_a_range_is_placed_on_the_loop_that_misses_one(
    tmp_path: Path, config: Config
) -> None:
    # the reference's `range(V.shape[0])` is the second loop; the student's scores loop is
    # right and their value loop stops one early: the place is the value loop
    source = (
        "def word_attention(i, Q, K, V, scaled=True):\n"
        "    scores = np.array([Q[i] @ K[j] for j in range(K.shape[0])])\n"
        "    if scaled:\n"
        "        scores = scores / np.sqrt(K.shape[1])\n"
        "    weights = stable_softmax(scores)\n"
        "    out = np.zeros(V.shape[1])\n"
        "    for j in range(len(V) - 1):\n"
        "        out = out + weights[j] * V[j]\n"
        "    return out\n"
    )
    result = replaced(tmp_path, config, "sentence_attention", "word_attention", source)
    assert result.mistakes == ("off_by_one",), result.messages
    assert result.location is not None and result.location.line == 7, result.messages


def test_a_list_one_short_is_an_off_by_one_in_their_code_s_words(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.QKV_LOOP.replace("    for x in all_x:", "    for x in all_x[1:]:")
    result = one(config, notebook, "qkv_loop", source)
    assert result.mistakes == ("off_by_one",), result.messages
    said = [m for m in result.messages if m.startswith("one item short in every case")]
    assert said and "`all_x[1:]` leaves out the first item" in said[0], result.messages


PROJECTIONS = (
    "    Q = {q}\n"
    "    K = np.transpose(omega_k) @ X + beta_k\n"
    "    V = {v}\n"
    "    return V @ softmax_cols(K.T @ Q)\n"
)


@pytest.mark.parametrize(
    ("before", "q", "v", "line"),
    [
        # a docstring that names the arrays is not the place
        (
            '    """Attention of the columns of X, weighted by omega_q, omega_k and omega_v."""\n',
            "np.transpose(omega_q) @ X + beta_q",
            "np.transpose(omega_v) @ X + beta_v",
            3,
        ),
        # nor a check of the shapes that reads the same names
        (
            "    D, N = X.shape\n    assert omega_q.shape == (D, D) and X.shape == (D, N)\n",
            "np.transpose(omega_q) @ X + beta_q",
            "np.transpose(omega_v) @ X + beta_v",
            4,
        ),
        # nor the queries' line when the values take the queries' bias (written in another
        # order than the reference's): the line with all three names of the computation
        ("", "beta_q + omega_q @ X", "beta_q + omega_v @ X", 4),
    ],
)
def test_a_mistake_is_placed_on_the_line_that_computes_it(
    config: Config, notebook: NotebookFactory, before: str, q: str, v: str, line: int
) -> None:
    head = "def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):\n"
    body = PROJECTIONS.format(q=q, v=v)
    if "beta_q + omega_q" in q:
        body = body.replace("np.transpose(omega_k) @ X + beta_k", "beta_k + omega_k @ X")
    result = one(config, notebook, "self_attention", head + before + body)
    assert result.status == "failed" and result.mistakes, result.messages
    assert result.location is not None and result.location.line == line, result.messages


@pytest.mark.parametrize("letters", ["qkv", "q"])
def test_weights_transposed_with_a_literal_divisor_are_both_named(
    config: Config, notebook: NotebookFactory, letters: str
) -> None:
    # the copied mistake pairs with another (a mistake made alike is one of a pair); and
    # `/ 2` gives the numbers of a read of the notebook's `D` (4): the code reads no global,
    # so the literal is told, not the global
    source = students.SCALED.replace("/ np.sqrt(queries.shape[0])", "/ 2")
    for letter in letters:
        source = source.replace(f"omega_{letter} @ X", f"omega_{letter}.T @ X")
    result = one(config, notebook, "scaled_dot_product_self_attention", source)
    assert result.mistakes == ("operand_transposed", "scale_hardcoded"), result.messages
    said = next(m for m in result.messages if m.startswith("operand_transposed:"))
    assert ("and the same in computing" in said) == (letters == "qkv"), said
