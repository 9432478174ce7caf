"""Endless recursion under a raised recursion limit is reported as what it is: the cell's
RecursionError (grader/run/recursion.py), not a timeout, with the sandbox and without."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.config import Config, Mode
from grader.engine import grade_path
from grader.run import recursion

import students
from conftest import write_notebook

pytestmark = pytest.mark.sandbox

ENDLESS = """\
import sys
sys.setrecursionlimit(10**9)
LIMIT = sys.getrecursionlimit()
def down(n):
    return down(n + 1) + 1
down(0)"""


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_endless_recursion_under_a_huge_limit_is_a_recursion_error(
    config: Config, tmp_path: Path, mode: Mode
) -> None:
    # The course's own limits (5 s a cell): the capped recursion takes some 0.4 s here, and
    # fast_config's 1 s left too little room on a busy machine (CI, as an ordinary user).
    path = write_notebook(tmp_path / "endless.ipynb", [*students.cells(), ENDLESS])
    report = grade_path(path, config, "self_attention", sandbox=mode)
    recursion_errors = [e for e in report.errors if "RecursionError" in e]
    assert len(recursion_errors) == 1, report.errors
    assert "maximum recursion depth exceeded" in recursion_errors[0]
    assert not any("time limit" in e for e in report.errors), report.errors
    assert all(t.status != "timeout" for t in report.targets)
    assert report.score == report.max_score  # the other cells' functions are graded as ever


def test_the_recursion_limit_is_capped_not_refused() -> None:
    import sys

    real = sys.setrecursionlimit
    before = sys.getrecursionlimit()
    try:
        recursion.capped_setrecursionlimit(10**9)
        assert sys.getrecursionlimit() == recursion.CEILING
        recursion.capped_setrecursionlimit(5000)
        assert sys.getrecursionlimit() == 5000
    finally:
        real(before)
