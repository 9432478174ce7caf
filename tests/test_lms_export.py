"""`grader export`: Canvas, Moodle and Blackboard grade imports and csv, each checked against
the columns its importer documents (docs/instructor.md), none with a live formula."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.gradebook import Gradebook
from grader.batch.lms import render, split_name
from grader.batch.records import Comment, Override
from grader.batch.standing import Standing, book_results
from grader.cli import main
from grader.course.config import Config, load_config
from grader.course.deadline import Late
from grader.report import Report

import students
from conftest import canvas_students, write_fast_course, write_notebook

# The columns each importer reads, as its documentation names them.
CANVAS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE = ["First name", "Surname", "ID number", "Email address"]
BLACKBOARD = ["Last Name", "First Name", "Username", "Student ID"]


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_names_split_as_the_lms_exports_split_them() -> None:
    assert split_name("Ada King Lovelace") == ("Ada King", "Lovelace")
    assert split_name("Plato") == ("Plato", "")


def rows() -> list[Standing]:
    cap = Override("s2", "self_attention", "", 6.5, "=cap 1+1", "prof", 0.0)
    return [
        Standing("s1", None, "no submission", "Ada Lovelace", "A", "ada@uni.edu", "4242"),
        Standing("s2", None, "", "=HYPERLINK(0) Bo", "B", "@bo", "5151", (cap,)),
    ]


def test_each_format_has_its_importers_columns_and_no_formula(config: Config) -> None:
    spec = config.assignment("self_attention")
    top = sum(t.points for t in spec.targets)
    canvas = parse(render("canvas", rows(), spec))
    assert canvas[0] == [*CANVAS, "self_attention"]
    # Canvas's own export has this row: a new assignment gets its points possible from it
    assert canvas[1] == ["    Points Possible", "", "", "", "", f"{top:g}"]
    assert canvas[2] == ["Lovelace, Ada", "4242", "s1", "ada@uni.edu", "A", "0"]
    assert canvas[3] == ["Bo, =HYPERLINK(0)", "5151", "s2", "'@bo", "B", "6.5"]
    moodle = parse(render("moodle", rows(), spec))
    assert moodle[0] == [*MOODLE, "self_attention", "Feedback"]
    assert moodle[1][:5] == ["Ada", "Lovelace", "s1", "ada@uni.edu", "0"]
    assert moodle[1][5] == "no submission"
    assert moodle[2][1] == "Bo" and moodle[2][0] == "'=HYPERLINK(0)"
    assert moodle[2][5].startswith("total set to 6.5 by prof") and "=cap 1+1" in moodle[2][5]
    text = render("blackboard", rows(), spec)
    board = parse(text)
    assert board[0] == [*BLACKBOARD, f"self_attention [Total Pts: {top:g} Score]"]
    assert board[1] == ["Lovelace", "Ada", "4242", "s1", "0"]
    for line in text.splitlines():  # comma-delimited: every value in quotes
        assert line.startswith('"') and line.endswith('"') and line.count('","') == 4, line
    for table, header in ((canvas, 2), (moodle, 1), (board, 1)):
        assert len(table) == header + len(rows())
        for cell in (c for line in table for c in line):
            assert not cell.startswith(("=", "+", "-", "@")), cell


@pytest.mark.slow
def test_exports_of_a_graded_class_cover_the_roster_with_the_reports_totals(
    tmp_path: Path,
) -> None:
    course = tmp_path / "course"
    write_fast_course(course)
    (course / "roster.csv").write_text(
        "id,name,email,section,lms_id\ns1,Ada Lovelace,ada@uni.edu,A,4242\n"
        "s2,Bo Chen,bo@uni.edu,B,5151\ns3,Cy Diaz,cy@uni.edu,B,6161\n"
    )
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_1_hw.ipynb", students.cells())
    wrong = {"scaled_dot_product_self_attention": students.SCALE_HARDCODED}
    write_notebook(folder / "chenbo_5151_2_hw.ipynb", students.cells(**wrong))
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention"]
    assert (
        CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where]).exit_code == 0
    )
    override = ["override", "s2", "--points", "7", "--comment", "fair", "--results", str(out)]
    assert CliRunner().invoke(main, [*override, *where]).exit_code == 0
    with (out / "grades.csv").open() as handle:
        totals = {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}
    assert totals["s2"] == 7 and totals["s3"] == 0
    spec = load_config(course / "config.yaml").assignment("self_attention")
    column = {"canvas": "self_attention", "moodle": "self_attention", "csv": "total"}
    column["blackboard"] = (
        f"self_attention [Total Pts: {sum(t.points for t in spec.targets):g} Score]"
    )
    key = {"canvas": "SIS User ID", "moodle": "ID number", "blackboard": "Student ID"}
    for fmt in ("canvas", "moodle", "blackboard", "csv"):
        dest = tmp_path / f"{fmt}.csv"
        command = ["export", "--format", fmt, "--results", str(out), "--out", str(dest)]
        done = CliRunner().invoke(main, [*command, *where])
        assert done.exit_code == 0, done.output
        with dest.open(newline="") as handle:
            table = list(csv.DictReader(handle))
        if fmt == "canvas":
            table = canvas_students(dest.read_text())
        found = {row[key.get(fmt, "student")]: float(row[column[fmt]]) for row in table}
        assert found == totals, fmt
    missing = CliRunner().invoke(
        main, ["export", "--format", "canvas", "--results", str(tmp_path), "--out", "x.csv"]
    )
    assert missing.exit_code == 2 and "no gradebook.sqlite here" in missing.stderr


def test_moodle_feedback_has_no_empty_part_and_names_a_file_without_its_folder(
    config: Config, tmp_path: Path
) -> None:
    spec = config.assignment("self_attention")
    cap = Override("s1", "self_attention", "", 6.5, "fair", "prof", 0.0)
    said = Comment("s1", "self_attention", "see me about the mask", "prof", 0.0)
    late = Late(90.0, 10.0, "handed in 90 min late: 10 % off")
    where = tmp_path / "class" / "s2" / "hw.ipynb"
    problem = f"{where}: not a Jupyter notebook (no 'nbformat' field)"
    standings = [
        Standing("s1", None, "", "Ada Lovelace", overrides=(cap,), comments=(said,), late=late),
        Standing("s2", None, problem, "Bo Chen", problem_file=str(where)),
    ]
    moodle = parse(render("moodle", standings, spec))
    feedback = [line[5] for line in moodle[1:]]
    # was "…; ; …"; a comment, the words `grader comment` keeps for the student, is there
    assert feedback[0] == f"{cap.describe()}; {said.describe()}; {late.note}"
    assert feedback[1] == "hw.ipynb: not a Jupyter notebook (no 'nbformat' field)"
    assert str(tmp_path) not in render("moodle", standings, spec)
    grades_csv = render("csv", standings, spec)  # the instructor's own file keeps the path
    assert problem in grades_csv


@pytest.mark.slow
def test_moodle_feedback_of_an_unreadable_notebook_names_no_folder_of_the_grading_machine(
    tmp_path: Path,
) -> None:
    course, folder = students.fast_class(tmp_path, "ada")
    (folder / "bruno.ipynb").write_text("{not json")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention", "--results", str(out)]
    done = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where[:4]])
    assert done.exit_code == 1  # bruno's notebook could not be graded
    dest = tmp_path / "moodle.csv"
    done = CliRunner().invoke(main, ["export", "--format", "moodle", *where, "--out", str(dest)])
    assert done.exit_code == 0, done.output
    with dest.open(newline="") as handle:
        feedback = {row["ID number"]: row["Feedback"] for row in csv.DictReader(handle)}
    assert feedback["bruno"].startswith("bruno.ipynb: not a Jupyter notebook: invalid JSON")
    assert str(tmp_path) not in dest.read_text() and feedback["ada"] == ""
    with (out / "grades.csv").open(newline="") as handle:  # the instructor's file: the path
        problem = {row["student"]: row["problem"] for row in csv.DictReader(handle)}
    assert problem["bruno"].startswith(f"{folder / 'bruno.ipynb'}: not a Jupyter notebook")


@pytest.mark.slow
def test_export_to_a_dash_prints_the_file_on_standard_output_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--out -` once wrote a file named "-" (and said "wrote -").
    course, folder = students.fast_class(tmp_path, "ada")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention", "--results", str(out)]
    assert (
        CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where[:4]]).exit_code
        == 0
    )
    monkeypatch.chdir(tmp_path)
    for fmt in ("canvas", "moodle", "blackboard", "csv"):
        dest = tmp_path / f"{fmt}.csv"
        command = ["export", "--format", fmt, *where]
        assert CliRunner().invoke(main, [*command, "--out", str(dest)]).exit_code == 0
        done = CliRunner().invoke(main, [*command, "--out", "-"])
        assert done.exit_code == 0, done.output
        assert done.stdout_bytes == dest.read_bytes(), fmt  # the file's bytes, nothing more
        assert not (tmp_path / "-").exists()


def test_an_override_of_a_function_the_config_no_longer_grades_does_not_count() -> None:
    # softmax_cols removed from the config after its override: 9 of 9 was exported as 9.5.
    from grader.report import Report, TargetResult

    report = Report(
        "self_attention",
        "ada.ipynb",
        (TargetResult("softmax", "passed", 4.0, 4.0), TargetResult("qkv", "failed", 3.0, 5.0)),
    )
    gone = Override("ada", "self_attention", "softmax_cols", 0.5, "partial", "prof", 0.0)
    kept = Override("ada", "self_attention", "qkv", 4.5, "regraded", "prof", 0.0)
    assert Standing("ada", report, overrides=(gone,)).total == 7.0
    assert Standing("ada", report, overrides=(gone, kept)).total == 8.5
    assert Standing("ada", None, overrides=(kept,)).total == 4.5  # no report: as overridden


@pytest.mark.slow
def test_a_broken_resubmission_counts_the_same_in_grades_csv_the_export_and_the_report(
    tmp_path: Path,
) -> None:
    """The latest notebook counts: one that cannot be read after a graded one is 0 with its
    problem in grades.csv, and was the earlier notebook's full marks in the export and the
    report (three outputs of one gradebook disagreeing)."""
    course = tmp_path / "course"
    write_fast_course(course)
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    notebook = write_notebook(folder / "ada.ipynb", students.cells())
    write_notebook(folder / "bo.ipynb", students.cells())
    grade = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    assert CliRunner().invoke(main, [*grade, "--out", str(out)]).exit_code == 0
    graded_bytes = notebook.read_bytes()
    notebook.write_text("{ not a notebook")
    done = CliRunner().invoke(main, [*grade, "--out", str(out)])
    assert done.exit_code in (0, 1), done.output
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        graded = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(graded["ada"]["total"]) == 0 and graded["ada"]["problem"]
    full = float(graded["bo"]["total"])
    assert full > 0
    export = ["export", "--format", "csv", "--results", str(out), "--out", "-"]
    exported = CliRunner().invoke(main, [*export, "--course", str(course)])
    assert exported.exit_code == 0, exported.output
    totals = {
        row["student"]: float(row["total"]) for row in csv.DictReader(io.StringIO(exported.stdout))
    }
    assert totals == {"ada": 0, "bo": full}
    report = CliRunner().invoke(main, ["report", str(out), "--format", "json"])
    assert json.loads(report.stdout)["scores"] == {"ada": 0, "bo": full}
    notebook.write_bytes(graded_bytes)  # the graded notebook again: it counts again
    assert CliRunner().invoke(main, [*grade, "--out", str(out)]).exit_code == 0
    exported = CliRunner().invoke(main, [*export, "--course", str(course)])
    totals = {
        row["student"]: float(row["total"]) for row in csv.DictReader(io.StringIO(exported.stdout))
    }
    assert totals == {"ada": full, "bo": full}


def test_a_notebook_of_no_known_assignment_hides_no_grade(tmp_path: Path) -> None:
    """A not-graded notebook whose assignment was not known (a batch that settled none) may
    be of any assignment: it stands only for a student with no grade, where one of the
    assignment itself stands for the latest."""
    book = Gradebook(tmp_path / "gradebook.sqlite")
    try:
        book.record("ada", Path("ada.ipynb"), "h1", "c", Report("hw1", "ada.ipynb", ()))
        book.record_problem("ada", "", Path("later.ipynb"), "not valid JSON")
        book.record_problem("bo", "", Path("bo.ipynb"), "not valid JSON")
        results, files = book_results(book, "hw1")
        assert results["ada"][1] is not None and results["ada"][2] == ""
        assert results["bo"] == ("bo", None, "not valid JSON") and files == {"bo": "bo.ipynb"}
        book.record_problem("ada", "hw1", Path("ada.ipynb"), "not valid JSON")
        assert book_results(book, "hw1")[0]["ada"] == ("ada", None, "not valid JSON")
    finally:
        book.close()
