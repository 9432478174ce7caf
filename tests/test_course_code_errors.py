"""The words for an exception a child reported, and the refusal of course code whose cell
failed: each written once, the same wherever they are said."""

from __future__ import annotations

import pytest

from grader.errors import ConfigError
from grader.judge.child_error import exception_text
from grader.judge.course_code import CourseOutputs
from grader.judge.score import describe_error


def test_an_exception_reads_the_same_for_a_student_and_for_course_code() -> None:
    with_message = {"type": "KeyError", "message": "'q'"}
    assert exception_text(with_message) == "KeyError: 'q'"
    assert describe_error(with_message) == f"raised {exception_text(with_message)}"
    assert describe_error({"type": "KeyError"}) == f"raised {exception_text({'type': 'KeyError'})}"
    hostile = {"type": "E\x1b[2J" * 40, "message": "x\n::error::" * 100}
    text = exception_text(hostile)
    assert "\x1b" not in text and len(text) <= 61 + len(": ") + 301  # cut, with an ellipsis each


def test_the_first_failed_cell_of_course_code_is_refused_as_the_courses_error() -> None:
    outputs = CourseOutputs(cell_errors={7: "NameError: b", 3: "KeyError: a"})
    with pytest.raises(ConfigError, match=r"^cell 3 of the course: KeyError: a$"):
        outputs.refuse_failed_cells(lambda cell, error: f"cell {cell} of the course: {error}")
    CourseOutputs().refuse_failed_cells(lambda cell, error: "never said")  # nothing failed
