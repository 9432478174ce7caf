"""`grader override` and `grader comment`: stored in the gradebook with time and author,
kept across regrades, shown beside the autograded value in grades.csv, the feedback page
and the class report; older gradebooks gain the tables in place (tests/test_database.py)."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.batch.gradebook import Gradebook
from grader.batch.records import clear_override, comments, overrides
from grader.cli import main
from grader.course.config import load_config

import students
from conftest import write_fast_course, write_notebook

TARGET = "scaled_dot_product_self_attention"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def grades(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture
def graded(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A graded class (ada right, bruno wrong in TARGET), its course, and the grade command."""
    course = tmp_path / "course"
    write_fast_course(course)
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    write_notebook(folder / "bruno.ipynb", students.cells(**{TARGET: students.SCALE_HARDCODED}))
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    command += ["--out", str(out)]
    assert run(*command).exit_code == 0
    return out, course, command


@pytest.mark.slow
def test_an_override_shows_beside_the_autograded_value_and_survives_a_regrade(
    graded: tuple[Path, Path, list[str]],
) -> None:
    out, course, command = graded
    before = grades(out)["bruno"]
    auto_target, auto_total = float(before[TARGET]), float(before["total"])
    spec = load_config(course / "config.yaml").assignment("self_attention")
    target_max = spec.target(TARGET).points
    assert auto_target < target_max  # bruno's answer lost points there
    where = ["--results", str(out), "--course", str(course), "--author", "prof"]
    done = run("override", "bruno", TARGET, "--points", str(target_max), "--comment",
               "=regrade: right idea", *where)  # fmt: skip
    assert done.exit_code == 0, done.output
    done = run("comment", "bruno", "see me after class", *where)
    assert done.exit_code == 0, done.output
    row = grades(out)["bruno"]
    assert float(row[TARGET]) == target_max
    assert float(row["total"]) == auto_total - auto_target + target_max
    assert float(row["autograded"]) == auto_total
    assert f"{TARGET} set to {target_max:g} by prof on " in row["overrides"]
    assert row["overrides"].endswith(": =regrade: right idea")
    assert row["comments"].startswith("see me after class (prof, ")
    page = (out / "feedback" / "bruno.html").read_text(encoding="utf-8")
    assert f"(autograded {auto_total:g})" in page and "see me after class" in page
    assert f"(autograded {auto_target:g})" in page and "=regrade: right idea" in page
    assert "<pre>" in page  # their own code still shown: the notebook was read again
    report = json.loads(run("report", str(out), "--format", "json").output)
    assert report["scores"]["bruno"] == float(row["total"])
    assert any(n["note"].endswith("=regrade: right idea") for n in report["notes"])
    assert "see me after class" in (out / "report.html").read_text(encoding="utf-8")
    # A regrade keeps what the instructor set.
    assert run(*command, "--force").exit_code == 0
    assert grades(out)["bruno"] == row
    page = (out / "feedback" / "bruno.html").read_text(encoding="utf-8")
    assert "see me after class" in page
    # A total override wins over the functions; clearing gives the autograded value back.
    assert run("override", "bruno", "--points", "1", *where).exit_code == 0
    assert float(grades(out)["bruno"]["total"]) == 1
    assert run("override", "bruno", "--clear", *where).exit_code == 0
    done = run("override", "bruno", TARGET, "--clear", *where)
    assert done.exit_code == 0 and done.stdout.startswith("1 override cleared\n")
    cleared = grades(out)["bruno"]
    assert float(cleared["total"]) == auto_total and cleared["overrides"] == ""


def test_an_override_on_a_class_graded_from_a_zip_keeps_the_students_code(
    tmp_path: Path,
) -> None:
    """A .zip's notebooks are read again from the archive (`archive.zip/member`) when their
    pages are written again: the page keeps the student's code. The archive gone, the page
    is written without it."""
    course = tmp_path / "course"
    write_fast_course(course)
    write_notebook(tmp_path / "bruno.ipynb", students.cells(**{TARGET: students.SCALE_HARDCODED}))
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(tmp_path / "bruno.ipynb", "brunob_102_9002_attention.ipynb")
    out = tmp_path / "out"
    command = ["grade", str(archive), "--course", str(course), "-a", "self_attention"]
    assert run(*command, "--out", str(out)).exit_code == 0
    page = out / "feedback" / "brunob_102.html"
    assert "<pre>" in page.read_text(encoding="utf-8")
    where = ["--results", str(out), "--course", str(course)]
    assert run("override", "brunob_102", TARGET, "--points", "1", *where).exit_code == 0
    said = page.read_text(encoding="utf-8")
    assert "(autograded " in said and "<pre>" in said
    archive.unlink()
    assert run("override", "brunob_102", TARGET, "--points", "2", *where).exit_code == 0
    said = page.read_text(encoding="utf-8")
    assert "set to 2 by" in said and "<pre>" not in said


@pytest.mark.slow
def test_bulk_overrides_are_all_or_nothing_and_bad_input_exits_2(
    graded: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    out, course, _ = graded
    where = ["--results", str(out), "--course", str(course)]
    sheet = tmp_path / "regrades.csv"
    sheet.write_text(f"student,target,points,comment\nada,,7,cap\nbruno,{TARGET},x,\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 2
    assert done.stderr.splitlines()[-1] == f"Error: {sheet} line 3: points 'x' is not a number"
    sheet.write_text(f"student,target,points,comment\nada,,7,cap\nnobody,{TARGET},1,\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 2  # the line it is on, as for points (it had none)
    said = done.stderr.splitlines()[-1]
    assert said == f"Error: {sheet} line 3: nobody: no such student in the gradebook"
    sheet.write_text("student,target,points,comment\nada,,7,cap\nada,nosuch,1,\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.stderr.splitlines()[-1].startswith(
        f"Error: {sheet} line 3: nosuch: not a function of self_attention"
    )
    book = Gradebook(out / "gradebook.sqlite")
    assert overrides(book, "self_attention") == {}  # nothing of the sheet was applied
    book.close()
    sheet.write_text(f"student,target,points,comment\nada,,7,cap\nbruno,{TARGET},1,fair\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 0 and "2 overrides recorded" in done.output
    assert float(grades(out)["ada"]["total"]) == 7
    bad = run("override", "bruno", "no_such_function", "--points", "1", *where)
    assert bad.exit_code == 2 and "no_such_function: not a function of self_attention" in (
        bad.stderr
    )
    assert run("override", "bruno", *where).exit_code == 2  # neither --points nor --clear


@pytest.mark.parametrize("points", ["nan", "-1e400", "-2"])
def test_points_that_are_no_finite_number_at_least_0_are_refused_in_one_line(
    graded: tuple[Path, Path, list[str]], tmp_path: Path, points: str
) -> None:
    # NaN once raised a traceback (exit 3); an infinity was exported to the LMS as `inf`;
    # negative points were taken here while `grader serve` refuses them.
    out, course, _ = graded
    where = ["--results", str(out), "--course", str(course)]
    done = run("override", "ada", TARGET, "--points", points, *where)
    assert done.exit_code == 2
    assert (
        done.stderr.splitlines()[-1]
        == f"Error: points {float(points)!r} is not a finite number ≥ 0"
    )
    assert "Traceback" not in done.stderr
    sheet = tmp_path / "regrades.csv"
    sheet.write_text(f"student,target,points,comment\nada,,7,cap\nbruno,{TARGET},{points},\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 2
    said = done.stderr.splitlines()[-1]
    assert said == f"Error: {sheet} line 3: points {points!r} is not a finite number ≥ 0"
    book = Gradebook(out / "gradebook.sqlite")
    assert overrides(book, "self_attention") == {}  # nothing was applied
    book.close()


def test_an_override_above_its_maximum_is_kept_and_said(
    graded: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    # 1e9 points on a 2-point function went to the gradebook and every export without a word
    # (r48): extra credit is the instructor's to give, so it is kept, and said on the terminal.
    out, course, _ = graded
    spec = load_config(course / "config.yaml").assignment("self_attention")
    most, total = spec.target(TARGET).points, sum(t.points for t in spec.targets)
    where = ["--results", str(out), "--course", str(course)]
    done = run("override", "ada", TARGET, "--points", "1e9", *where)
    assert done.exit_code == 0, done.output
    assert (
        f"note: ada: {TARGET} set to 1e+09, above its maximum of {most:g} (kept: check it is "
        "meant)" in done.stderr
    )
    assert float(grades(out)["ada"][TARGET]) == 1e9
    sheet = tmp_path / "regrades.csv"
    sheet.write_text(f"student,target,points\nbruno,,{total + 1:g}\nada,{TARGET},{most:g}\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 0, done.output
    notes = [line for line in done.stderr.splitlines() if "above its maximum" in line]
    assert notes == [
        f"note: bruno: the total set to {total + 1:g}, above its maximum of {total:g} (kept: "
        "check it is meant)"
    ]  # ada's, at its maximum, is not above it


@pytest.mark.slow
def test_overrides_whose_total_is_no_finite_number_are_refused_and_never_exported(
    graded: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    # Two targets at 1e308 points each, both finite, once made a total of inf: grades.csv
    # and every LMS export carried `inf`.
    out, course, _ = graded
    where = ["--results", str(out), "--course", str(course)]
    big = "1e308"
    assert run("override", "bruno", "softmax", "--points", big, *where).exit_code == 0
    before = grades(out)["bruno"]
    done = run("override", "bruno", "attention_loop", "--points", big, *where)
    assert done.exit_code == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Error: bruno: ")
    assert "not a finite number" in done.stderr
    assert grades(out)["bruno"] == before  # nothing applied, nothing written again
    sheet = tmp_path / "regrades.csv"
    sheet.write_text(f"student,target,points,comment\nada,,7,cap\nbruno,attention_loop,{big},\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 2 and done.stderr.splitlines()[-1].startswith("Error: bruno: ")
    book = Gradebook(out / "gradebook.sqlite")
    assert set(overrides(book, "self_attention")) == {"bruno"}  # ada's line was not applied
    book.close()
    # Once the total is set (finite), the targets' sum no longer counts: allowed.
    total = run("override", "bruno", "--points", "9", *where)
    assert total.exit_code == 0, total.output
    assert run("override", "bruno", "attention_loop", "--points", big, *where).exit_code == 0
    assert float(grades(out)["bruno"]["total"]) == 9
    # A gradebook that holds such a total anyway (written by another front end) is not
    # exported: one line naming the student, exit 2, no file.
    assert run("override", "bruno", "--clear", *where).exit_code == 2
    book = Gradebook(out / "gradebook.sqlite")
    clear_override(book, "bruno", "self_attention", "")
    book.close()
    for fmt in ("canvas", "moodle", "blackboard", "csv"):
        dest = tmp_path / f"{fmt}.csv"
        done = run("export", "--format", fmt, *where, "--out", str(dest))
        assert done.exit_code == 2, (fmt, done.output)
        assert done.stderr.splitlines()[-1].startswith("Error: bruno: ")
        assert not dest.exists()


@pytest.mark.slow
def test_a_student_named_in_another_case_is_that_student_when_only_one_fits(
    graded: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    # `grader override BRUNO` was "no such student", though ids that differ only in case
    # are one student to the roster and to the service.
    out, course, command = graded
    where = ["--results", str(out), "--course", str(course)]
    done = run("override", "BRUNO", TARGET, "--points", "0.5", *where)
    assert done.exit_code == 0, done.stderr
    assert float(grades(out)["bruno"][TARGET]) == 0.5 and "BRUNO" not in grades(out)
    assert run("comment", "Ada", "well done", *where).exit_code == 0
    assert grades(out)["ada"]["comments"].startswith("well done")
    sheet = tmp_path / "regrades.csv"
    sheet.write_text("student,target,points,comment\nada,,7,\nADA,,8,\n")
    done = run("override", "--from-csv", str(sheet), *where)
    assert done.exit_code == 2
    assert "ada and ADA are one student (ada), whose total is given twice" in done.stderr
    # Without a roster, `Bruno.ipynb` beside `bruno.ipynb` is another student: no guess.
    folder = Path(command[1])
    write_notebook(folder / "Bruno.ipynb", students.cells())
    assert run(*command).exit_code == 0
    done = run("override", "BRUNO", "--points", "1", *where)
    assert done.exit_code == 2
    assert "BRUNO: several students in the gradebook (Bruno, bruno): give one" in done.stderr


def test_clearing_nothing_says_so_and_an_empty_comment_is_refused(
    graded: tuple[Path, Path, list[str]],
) -> None:
    """`--clear` of an override nobody made said "1 override cleared"; a comment of spaces
    was stored and shown as an empty remark on the student's page."""
    out, course, _ = graded
    where = ["--results", str(out), "--course", str(course)]
    assert run("override", "ada", TARGET, "--points", "1", *where).exit_code == 0
    done = run("override", "ada", TARGET, "--clear", *where)
    assert done.exit_code == 0 and done.stdout.startswith("1 override cleared")
    again = run("override", "ada", TARGET, "--clear", *where)
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("0 overrides cleared")
    assert f"note: ada had no override of {TARGET} to clear" in again.stderr
    total = run("override", "ada", "--clear", *where)
    assert "note: ada had no override of the total to clear" in total.stderr
    empty = run("comment", "ada", "   ", *where)
    assert empty.exit_code == 2
    assert empty.stderr.splitlines()[-1] == "Error: the comment is empty; give the remark's text"
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert comments(book, "self_attention") == {}
    finally:
        book.close()


@pytest.mark.slow
def test_a_roster_takes_no_records_of_another_student_whose_name_differs_in_case(
    tmp_path: Path,
) -> None:
    """Without a roster `Ada.ipynb` and `ada.ipynb` are two students; a roster with the id
    `ada` then took Ada's override as ada's own (only an id the roster before spelled in
    another case is carried)."""
    course = tmp_path / "course"
    write_fast_course(course)
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    write_notebook(folder / "Ada.ipynb", students.cells())
    write_notebook(folder / "ada.ipynb", students.cells())
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    command += ["--out", str(out)]
    assert run(*command).exit_code == 0
    where = ["--results", str(out), "--course", str(course)]
    assert run("override", "Ada", "--points", "1", "--comment", "Ada's", *where).exit_code == 0
    (folder / "Ada.ipynb").unlink()
    (course / "roster.csv").write_text("id,name\nada,Ada Byron\n")
    assert run(*command).exit_code == 0
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert "ada" not in overrides(book, "self_attention")
    finally:
        book.close()
    assert float(grades(out)["ada"]["total"]) == 10
