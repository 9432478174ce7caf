"""An exception the notebook raises is reported as its cell's or its function's error, even
when reading it runs the notebook's own code that loops or fails (an exception class with a
__str__ of its own), or when the time limit ends while it is being read: never the whole
process ended (exit code 70) with every function of the notebook lost."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import Report

import students
from conftest import write_notebook

LOOPING_STR = """\
class Stuck(Exception):
    def __str__(self):
        while True:
            pass"""

FAILING_STR = """\
class Broken(Exception):
    def __str__(self):
        raise ValueError("not today")"""

# The class redefines __traceback__: where the error is comes from the exception itself.
FALSE_TRACEBACK = """\
class Liar(Exception):
    __traceback__ = property(lambda self: 1 / 0)"""


def graded(config: Config, tmp_path: Path, *sources: str, **functions: str) -> Report:
    cells = [*students.cells(**functions), *sources]
    path = write_notebook(tmp_path / "student.ipynb", cells)
    return grade_path(path, config, "self_attention", sandbox="none")


@pytest.mark.parametrize(
    ("defined", "raised", "said"),
    [
        (LOOPING_STR, "Stuck", "its message could not be read: str() ran past 0.2 s"),
        (FAILING_STR, "Broken", "its message could not be read: str() raised ValueError"),
        (FALSE_TRACEBACK, "Liar", "raised Liar (cell"),
    ],
)
def test_a_cell_whose_exception_cannot_be_read_is_that_cells_error(
    fast_config: Config, tmp_path: Path, defined: str, raised: str, said: str
) -> None:
    report = graded(fast_config, tmp_path, defined, f"x = 1\nraise {raised}()")
    assert len(report.errors) == 1, report.errors
    # The last cell's error, placed on its line 2 (the `raise`).
    assert re.fullmatch(rf"cell (\d+): raised {raised}.*\(cell \1, line 2\)", report.errors[0])
    assert said in report.errors[0]
    assert report.score == report.max_score  # every function is graded as ever


def test_a_function_whose_exception_cannot_be_read_fails_alone(
    fast_config: Config, tmp_path: Path
) -> None:
    softmax = students.SOFTMAX.replace(
        "def softmax(items_in):", "def softmax(items_in):\n    raise Stuck()"
    )
    report = graded(fast_config, tmp_path, softmax=LOOPING_STR + "\n" + softmax)
    by_name = {t.name: t for t in report.targets}
    assert by_name["softmax"].status == "error", by_name["softmax"]
    assert by_name["softmax"].score == 0
    text = " ".join(by_name["softmax"].messages)
    assert "Stuck" in text and "str() ran past" in text, text
    others = [t for t in report.targets if t.name not in ("softmax", "attention_loop")]
    assert others and all(t.score == t.max_score for t in others), others
    assert not any("exited early" in e for e in report.errors), report.errors
