"""Timeouts that teach: the line the code was stuck on, the loop around it, and the callers
of a looping function told to fix it first."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.config import Config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.judge.timeouts import checked, enclosing_loop, function_at
from grader.report import Location, Report, TargetResult

import students
from conftest import NotebookFactory

# Nearly all of its time is spent on the line that grows `scale`, which never stops growing.
LOOPING_SOFTMAX = """\
def softmax(items_in):
    scale = 1.0
    while scale > 0:
        scale = scale + float(np.sum(np.exp(items_in)))
    return np.exp(items_in) / scale"""


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.split("\n"), start=1) if text in line)


STUCK_LINE = line_of(LOOPING_SOFTMAX, "scale = scale +")
LOOP_LINE = line_of(LOOPING_SOFTMAX, "while scale")


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


@pytest.fixture
def looping(notebook: NotebookFactory) -> Path:
    return notebook(students.cells(softmax=LOOPING_SOFTMAX))


def softmax_cell(path: Path) -> int:
    return load_submission(path).definitions()["softmax"].cell


@pytest.mark.slow
def test_a_timeout_names_the_line_and_loop_and_its_callers_say_fix_it_first(
    fast_config: Config, looping: Path
) -> None:
    report = grade_path(looping, fast_config, "self_attention")
    cell = softmax_cell(looping)
    result = target(report, "softmax")
    assert result.status == "timeout"
    # The line it was running, not "line 0" and not the `def`.
    assert result.location is not None
    assert (result.location.cell, result.location.line) == (cell, STUCK_LINE)
    said = " ".join(result.messages)
    assert f"cell {cell}, line {STUCK_LINE}" in said
    assert f"inside the `while` loop at line {LOOP_LINE}" in said
    assert "fix `" not in said
    # A caller of the looping function (same run: a timeout costs a time limit) says fix it first.
    caller = target(report, "attention_loop")
    assert caller.status == "timeout"
    callee = [f for f in caller.findings if f.kind == "callee"]
    assert len(callee) == 1
    assert callee[0].message.startswith("fix `softmax` first: `attention_loop` calls it")
    assert callee[0].location == Location(cell, STUCK_LINE)
    assert f"`while` loop at line {LOOP_LINE}" in callee[0].message
    # The top-level cell that calls it ran out of time in the same loop, and says so.
    stuck = [e for e in report.errors if "time limit" in e and f"line {STUCK_LINE}" in e]
    assert stuck and f"inside the `while` loop at line {LOOP_LINE}" in stuck[0]
    # Functions that do not call it are not blamed.
    assert target(report, "qkv_loop").status == "passed"
    assert target(report, "softmax_cols").status == "passed"


def test_places_from_the_child_are_believed_only_inside_a_code_cell(
    notebook: NotebookFactory,
) -> None:
    path = notebook(students.cells(softmax=LOOPING_SOFTMAX))
    submission = load_submission(path)
    cell = softmax_cell(path)
    inside = Location(cell, STUCK_LINE)
    assert checked(submission, inside) == inside
    assert checked(submission, Location(cell, 10**9)) is None
    assert checked(submission, Location(cell, 0)) is None
    assert checked(submission, Location(10**6, 1)) is None
    assert enclosing_loop(submission, inside) == ("while", Location(cell, LOOP_LINE))
    assert enclosing_loop(submission, Location(cell, 2)) is None  # before the loop
    assert function_at(submission, inside) == "softmax"


def test_the_innermost_loop_is_named(notebook: NotebookFactory) -> None:
    nested = "def f(xs):\n    for x in xs:\n        while x:\n            x = x\n    return xs"
    path = notebook(["import numpy as np", nested])
    submission = load_submission(path)
    cell = submission.definitions()["f"].cell
    assert enclosing_loop(submission, Location(cell, 4)) == ("while", Location(cell, 3))
    assert enclosing_loop(submission, Location(cell, 3)) == ("while", Location(cell, 3))
    assert enclosing_loop(submission, Location(cell, 5)) is None
