"""A careless student's notebook: what it is told must be true and say what to change."""

from __future__ import annotations

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

import students
from conftest import NotebookFactory

ENDLESS_SOFTMAX = "def softmax(items_in):\n    return softmax(items_in)\n"


def _target(results: tuple[TargetResult, ...], name: str) -> TargetResult:
    return next(t for t in results if t.name == name)


def test_a_function_that_calls_itself_forever_is_not_told_to_fix_itself_first(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(softmax=ENDLESS_SOFTMAX))
    report = grade_path(path, config, "self_attention")
    own = _target(report.targets, "softmax")
    assert own.status == "error"
    assert not any("fix `softmax` first" in m for m in own.messages), own.messages
    assert any("RecursionError" in m for m in own.messages), own.messages
    # its callers are still sent to it
    caller = _target(report.targets, "attention_loop")
    assert any(m.startswith("fix `softmax` first") for m in caller.messages), caller.messages
