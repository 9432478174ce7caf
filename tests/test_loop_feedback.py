"""A loop that leaves out one item of what it runs over, where the result keeps its length:
named `off_by_one` from a mutant of the reference that drops the last (or first) item of the
sequence a loop of it runs over, and placed on the student's loop that misses one."""

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
