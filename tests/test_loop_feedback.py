"""Mistakes of copied lines and loops: a loop that leaves out one item of what it runs over,
where the result keeps its length (named `off_by_one` from a mutant of the reference that
drops the last or first item of a loop's sequence, placed on the student's loop); one mistake
copied into each of the queries, keys and values (a mutant that makes it alike in each)."""

from __future__ import annotations

import pytest
from test_misleading_feedback import one

from grader.course.config import Config

import students
from conftest import NotebookFactory

KEY_LOOP = "        for key in all_keys:\n"
VALUE_LOOP = "for m in range(len(all_values)):"


@pytest.mark.parametrize(
    ("loop", "which"),
    [
        ("        for key in all_keys[:-1]:\n", "last"),
        ("        for m in range(len(all_keys) - 1):\n            key = all_keys[m]\n", "last"),
        ("        for key in all_keys[1:]:\n", "first"),
    ],
)
def test_a_key_loop_one_short_is_named_and_pointed_at(
    config: Config, notebook: NotebookFactory, loop: str, which: str
) -> None:
    # each query's weights come from one key fewer; the output list keeps its length
    assert KEY_LOOP in students.ATTENTION_LOOP and VALUE_LOOP in students.ATTENTION_LOOP
    # the sum runs over the weights there are (as many as the keys used)
    weighted = students.ATTENTION_LOOP.replace(VALUE_LOOP, "for m in range(len(attention)):")
    source = weighted.replace(KEY_LOOP, loop)
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
