"""The table `grader grade` prints is the class's gradebook as grades.csv has it: the points
that count (late penalties, the instructor's overrides), and with --out every student graded
into it before, not this batch's autograded points alone."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_lateness import DUE, LATE_KEYS, course_with, read_rows

from grader.cli import main
from grader.render.table import MARKS_LEGEND

import students
from conftest import write_notebook


def _table(stdout: str) -> dict[str, str]:
    """The table's lines by student (the first word)."""
    return {line.split()[0]: line for line in stdout.splitlines() if re.match(r"s\d ", line)}


@pytest.mark.slow
def test_the_table_shows_the_points_that_count_for_the_whole_class(tmp_path: Path) -> None:
    course = course_with(tmp_path, **LATE_KEYS).parent
    (course / "roster.csv").write_text("id,name\ns1,Ada\ns2,Bo\ns3,Cy\ns4,Di\n")
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    write_notebook(first / "s1.ipynb", students.cells())
    write_notebook(first / "s2.ipynb", students.cells())
    write_notebook(later / "s3.ipynb", students.cells())
    times = tmp_path / "times.csv"
    three_hours = (DUE + timedelta(hours=3)).isoformat()
    times.write_text(
        f"student,timestamp\ns1,{DUE.isoformat()}\ns2,{three_hours}\ns3,{three_hours}\n"
    )
    out = tmp_path / "out"
    grade = ["grade", "--course", str(course), "-a", "self_attention", "--out", str(out)]
    grade += ["--submitted-at", str(times)]
    done = CliRunner().invoke(main, [*grade, str(first)])
    assert done.exit_code == 0, done.output
    done = CliRunner().invoke(
        main, ["override", "s1", "softmax", "--points", "0.5", "--results", str(out)]
    )
    assert done.exit_code == 0, done.output
    # One late student's folder, graded into the same OUT.
    done = CliRunner().invoke(main, [*grade, str(later)])
    assert done.exit_code == 0, done.output
    rows = {row["student"]: row for row in read_rows(out / "grades.csv")}
    table = _table(done.stdout)
    assert set(table) == {"s1", "s2", "s3", "s4"}, done.stdout
    full = rows["s1"]["max_total"]
    for student, marks in (("s1", " O"), ("s2", " L"), ("s3", " L")):
        total = f"{float(rows[student]['total']):g}/{float(full):g}"
        assert table[student].endswith(f"{total}{marks}"), (table[student], total)
        assert "no submission" not in table[student]
    assert float(rows["s2"]["total"]) < float(full) and float(rows["s1"]["total"]) < float(full)
    softmax = table["s1"].split()[2]  # student, qkv_loop, softmax, …
    assert softmax == "0.5", table["s1"]
    assert "not graded: no submission" in table["s4"]
    assert f"({MARKS_LEGEND})" in done.stdout
