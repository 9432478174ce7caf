"""What a review of the semester found in lateness: a time given with --submitted-at was
forgotten (a 50% penalty from the file's time) once another assignment was graded into the
same results folder, or once the course had a roster; a Blackboard time was read at the
first assignment's offset, not the graded one's; a student given twice, a time with no
student and a time past what a date can hold were taken without a word (the last, a fault)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.lateness import MTIME, handed_in, read_submitted_at
from grader.cli import main
from grader.course.config import load_config
from grader.errors import UsageError

import students
from conftest import REPO, repo_config_raw, write_notebook

LATE = {"grace": 15, "percent": 10, "per": "hour", "cap": 50}
AFTER = datetime(2026, 6, 1).timestamp()  # the files' time: long after every due date


def course(tmp_path: Path) -> Path:
    """The bundled course with self_attention due 1 March (+01:00) and masked_attention due
    1 July (+02:00), both with a late policy."""
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(due="2026-03-01T23:59:00+01:00", late=LATE)
    raw["assignments"]["masked_attention"].update(due="2026-07-01T23:59:00+02:00", late=LATE)
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def grade(folder: Path, course: Path, assignment: str, out: Path, *more: str) -> dict[str, str]:
    """`grader grade`, then the one row of grades.csv (one student in every class here)."""
    command = ["grade", str(folder), "--course", str(course), "-a", assignment, "--out", str(out)]
    result = CliRunner().invoke(main, [*command, *more])
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1, rows
    return rows[0]


def class_of_ada(tmp_path: Path, name: str = "ada") -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    notebook = write_notebook(folder / f"{name}.ipynb", students.cells())
    os.utime(notebook, (AFTER, AFTER))
    return folder


def times(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "times.csv"
    path.write_text("student,timestamp\n" + "".join(f"{row}\n" for row in rows))
    return path


def ada_given_late(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The course, ada's class and its results, graded as self_attention with a time given
    2 started hours late (20%): (course, class, results)."""
    root = course(tmp_path)
    folder, out = class_of_ada(tmp_path), tmp_path / "out"
    given = times(tmp_path, "ada,2026-03-02T01:30:00+01:00")
    first = grade(folder, root, "self_attention", out, "--submitted-at", str(given))
    assert float(first["late_penalty"]) == 20 and "--submitted-at" in first["lateness"]
    return root, folder, out


@pytest.mark.slow
def test_a_given_time_is_kept_after_another_assignment_is_graded_into_the_same_folder(
    tmp_path: Path,
) -> None:
    root, folder, out = ada_given_late(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(REPO / "solutions" / "masked_attention.ipynb", other / "ada.ipynb")
    given_too = times(tmp_path, "ada,2026-07-01T12:00:00+02:00")  # its own, on time
    grade(other, root, "masked_attention", out, "--submitted-at", str(given_too))
    again = grade(folder, root, "self_attention", out, "--force")
    assert float(again["late_penalty"]) == 20, again["lateness"]
    assert "--submitted-at" in again["lateness"]


@pytest.mark.slow
def test_a_given_time_is_kept_once_the_course_has_a_roster(tmp_path: Path) -> None:
    root = course(tmp_path)
    folder, out = class_of_ada(tmp_path, "adalove"), tmp_path / "out"
    given = times(tmp_path, "adalove,2026-03-02T01:30:00+01:00")  # 20%
    before = grade(folder, root, "self_attention", out, "--submitted-at", str(given))
    assert float(before["late_penalty"]) == 20
    (root / "roster.csv").write_text("id,name,github\ns001,Ada Lovelace,adalove\n")
    after = grade(folder, root, "self_attention", out)
    assert float(after["late_penalty"]) == 20, after["lateness"]
    assert "--submitted-at" in after["lateness"]
    assert float(after["total"]) == float(before["total"])


@pytest.mark.slow
def test_a_blackboard_time_is_read_at_the_graded_assignments_offset(tmp_path: Path) -> None:
    root = course(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    # 00:10 on 2 July at +02:00 (masked_attention's offset): 11 minutes late, in the grace;
    # read at +01:00 (self_attention's, the first with a policy) it was 71 minutes late
    name = "ada_attempt_2026-07-02-00-10-00.ipynb"
    shutil.copy(REPO / "solutions" / "masked_attention.ipynb", folder / name)
    row = grade(folder, root, "masked_attention", tmp_path / "out")
    assert float(row["late_penalty"]) == 0, row["lateness"]
    assert "2026-07-02T00:10+02:00" in row["lateness"]


def test_a_student_given_twice_or_a_time_without_a_student_is_one_line(tmp_path: Path) -> None:
    twice = times(tmp_path, "ada,2026-03-01T12:00:00+01:00", "ADA,2026-03-09T12:00:00+01:00")
    with pytest.raises(UsageError) as raised:
        read_submitted_at(twice)
    assert str(raised.value) == (
        f"{twice} line 3: 'ADA' is already on line 2; keep one row per student"
    )
    nobody = times(tmp_path, "ada,2026-03-01T12:00:00+01:00", ",2026-03-09T12:00:00+01:00")
    with pytest.raises(UsageError, match=r"line 3: a time without a student$"):
        read_submitted_at(nobody)
    blank = times(tmp_path, "ada,2026-03-01T12:00:00+01:00", ",", "bo,2026-03-02T12:00:00Z")
    assert sorted(read_submitted_at(blank)) == ["ada", "bo"]  # an empty row is nothing


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:00-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_time_past_what_a_date_can_hold_is_one_line_not_a_fault(
    tmp_path: Path, stamp: str
) -> None:
    root = course(tmp_path)
    given = times(tmp_path, f"ada,{stamp}")
    command = ["grade", str(class_of_ada(tmp_path)), "--course", str(root), "-a"]
    command += ["self_attention", "--out", str(tmp_path / "out"), "--submitted-at", str(given)]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {given} line 2: {stamp!r} is not between the years 1970 and 9000"
    )
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_given_time_is_kept_for_a_canvas_export_once_the_course_has_a_roster(
    tmp_path: Path,
) -> None:
    """An earlier run recorded the time under the name the export gave (`lovelaceada_4242`),
    neither the roster id nor the file's stem: the Canvas file then read as on time."""
    root = course(tmp_path)
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_1_hw.ipynb", students.cells())
    given = times(tmp_path, "lovelaceada_4242,2026-03-02T01:30:00+01:00")  # 20%
    before = grade(folder, root, "self_attention", out, "--submitted-at", str(given))
    assert float(before["late_penalty"]) == 20, before["lateness"]
    (root / "roster.csv").write_text("id,name,lms_id\ns001,Ada Lovelace,4242\n")
    after = grade(folder, root, "self_attention", out)
    assert after["student"] == "s001"
    assert float(after["late_penalty"]) == 20, after["lateness"]


@pytest.mark.slow
def test_the_same_notebook_graded_as_two_assignments_keeps_each_ones_time(
    tmp_path: Path,
) -> None:
    root, folder, out = ada_given_late(tmp_path)
    given = times(tmp_path, "ada,2026-07-01T12:00:00+02:00")  # masked_attention: on time
    grade(folder, root, "masked_attention", out, "--submitted-at", str(given))
    again = grade(folder, root, "self_attention", out, "--force")
    assert float(again["late_penalty"]) == 20, again["lateness"]


def test_a_course_due_in_the_far_future_still_loads(tmp_path: Path) -> None:
    """The range of --submitted-at's times is not a due date's: "never due" as the year 9999
    is a course's choice."""
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(due="9999-12-31T23:59:59+00:00", late=LATE)
    (tmp_path / "config.yaml").write_text(json.dumps(raw))
    spec = load_config(tmp_path / "config.yaml").assignment("self_attention")
    assert spec.late is not None and spec.late.due.year == 9999


@pytest.mark.parametrize(
    "name", ["ada_attempt_2026-13-01-00-00-00", "ada_attempt_9999-12-31-23-59-00"]
)
def test_a_blackboard_name_that_is_no_date_is_passed_over(tmp_path: Path, name: str) -> None:
    """A month 13 raised out of the batch (a student names their own notebook in a
    folder per student); the next source is used."""
    notebook = write_notebook(tmp_path / f"{name}.ipynb", ["x = 1"])
    os.utime(notebook, (AFTER, AFTER))
    due = datetime.fromisoformat("2026-03-01T23:59:00+01:00")
    handed = handed_in(("ada",), notebook, tmp_path, {}, due)
    assert handed.source.startswith(MTIME) and handed.at is not None


@pytest.mark.parametrize(
    ("name", "claimed"),
    [
        ("hw_ada_attempt_2026-03-01-12-00-00.ipynb", "the Blackboard file name"),
        ("ada_1_2_hw.ipynb", "the Canvas export (not flagged _LATE_)"),
    ],
)
def test_a_notebook_a_student_named_in_their_folder_is_no_lms_export(
    tmp_path: Path, name: str, claimed: str
) -> None:
    """The LMS's names say when a file was handed in only where the export puts them, in the
    class folder itself: inside a student's folder the name is the student's own, and
    `hw_ada_attempt_<before the due date>` made a late notebook on time."""
    due = datetime.fromisoformat("2026-03-01T23:59:00+01:00")
    exported = write_notebook(tmp_path / name, ["x = 1"])
    assert handed_in(("ada",), exported, tmp_path, {}, due).source == claimed
    (tmp_path / "ada").mkdir()
    own = write_notebook(tmp_path / "ada" / name, ["x = 1"])
    os.utime(own, (AFTER, AFTER))
    handed = handed_in(("ada",), own, tmp_path, {}, due)
    assert handed.source == MTIME
    assert handed.at == datetime.fromtimestamp(AFTER).astimezone()


@pytest.mark.parametrize(
    ("name", "claimed"),
    [
        ("smithjohn_LATE_12345_678901_hw_attempt_2020-01-01-00-00-00.ipynb", MTIME),
        ("smithjohn_12345_678901_hw_attempt_2030-01-01-00-00-00.ipynb",
         "the Canvas export (not flagged _LATE_)"),
        ("John Smith_12345_assignsubmission_file_hw_attempt_2020-01-01-00-00-00.ipynb", MTIME),
    ],
)  # fmt: skip
def test_a_blackboard_stamp_in_the_students_part_of_an_lms_name_is_theirs(
    tmp_path: Path, name: str, claimed: str
) -> None:
    """r51: Canvas's and Moodle's names end in the file name the student uploaded; a
    `_LATE_` upload named `hw_attempt_<long ago>` was read as Blackboard's time and lost no
    points, with no word of it."""
    due = datetime.fromisoformat("2026-03-01T23:59:00+01:00")
    exported = write_notebook(tmp_path / name, ["x = 1"])
    os.utime(exported, (AFTER, AFTER))
    handed = handed_in(("smithjohn",), exported, tmp_path, {}, due)
    assert handed.source.startswith(claimed), handed
    if claimed == MTIME:
        assert handed.at == datetime.fromtimestamp(AFTER).astimezone()
    if "_LATE_" in name:
        assert handed.source.endswith("(flagged _LATE_ by Canvas)")


@pytest.mark.slow
def test_a_zipped_blackboard_export_still_says_when(tmp_path: Path) -> None:
    """A .zip is listed where it was unpacked: its Blackboard names are still the export's
    (91 minutes late: 20%, where the entry's time, today, is 50%)."""
    root = course(tmp_path)
    name = "hw_ada_attempt_2026-03-02-01-30-00.ipynb"
    notebook = write_notebook(tmp_path / name, students.cells())
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(notebook, notebook.name)
    row = grade(archive, root, "self_attention", tmp_path / "out")
    assert float(row["late_penalty"]) == 20, row["lateness"]
    assert "time from the Blackboard file name" in row["lateness"]


@pytest.mark.slow
def test_a_roster_id_rewritten_in_another_case_keeps_its_time_override_and_comment(
    tmp_path: Path,
) -> None:
    """A roster exported again spells `S001` as `s001`: the same student (ids are matched case
    aside everywhere), whose time given with --submitted-at, override and comment were
    recorded under `S001` (her notebook named by her GitHub user) and were lost (50% from
    the file's time, the override gone)."""
    root = course(tmp_path)
    (root / "roster.csv").write_text("id,name,github\nS001,Ada Lovelace,adalove\n")
    folder, out = class_of_ada(tmp_path, "adalove"), tmp_path / "out"
    given = times(tmp_path, "S001,2026-03-02T01:30:00+01:00")  # 91 minutes late: 20%
    before = grade(folder, root, "self_attention", out, "--submitted-at", str(given))
    assert before["student"] == "S001" and float(before["late_penalty"]) == 20
    where = ["--results", str(out), "--course", str(root), "--author", "prof"]
    for command in (["override", "S001", "--points", "3", "--comment", "fair"],
                    ["comment", "S001", "see me"]):  # fmt: skip
        done = CliRunner().invoke(main, [*command, *where])
        assert done.exit_code == 0, done.output
    (root / "roster.csv").write_text("id,name,github\ns001,Ada Lovelace,adalove\n")
    after = grade(folder, root, "self_attention", out)
    assert after["student"] == "s001"
    assert float(after["late_penalty"]) == 20, after["lateness"]
    assert float(after["total"]) == 3 and "fair" in after["overrides"]
    assert after["comments"].startswith("see me (prof, ")


@pytest.mark.slow
def test_a_second_assignment_graded_into_the_same_folder_says_whose_files_are_there(
    tmp_path: Path,
) -> None:
    """grades.csv, report.html and the feedback pages are one assignment's: grading another
    into the same --out replaced the first one's without a word."""
    root, folder, out = ada_given_late(tmp_path)
    command = ["grade", str(folder), "--course", str(root), "-a", "masked_attention"]
    done = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"note: the gradebook in {out} holds self_attention too: grades.csv, report.html and "
            "the feedback pages written now are masked_attention's"
        )
    )
    again = CliRunner().invoke(main, [*command, "--out", str(tmp_path / "own")])
    assert again.exit_code == 0 and "holds" not in again.stderr


def test_a_time_given_for_no_submission_is_said(tmp_path: Path) -> None:
    """A typo in --submitted-at (`adaa`) left the student's time to her file without a
    word: 50% where the instructor meant to give a time."""
    root = course(tmp_path)
    given = times(tmp_path, "adaa,2026-03-01T12:00:00+01:00", "ADA,2026-03-01T12:00:00+01:00")
    command = ["grade", str(class_of_ada(tmp_path)), "--course", str(root), "-a"]
    command += ["self_attention", "--out", str(tmp_path / "out"), "--submitted-at", str(given)]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warned == [
        "warning: --submitted-at: 1 time(s) match no submission of this batch ('adaa'); not used"
    ]


def test_capitalised_columns_of_submitted_at_are_its_columns(tmp_path: Path) -> None:
    """`Student,Timestamp`, as a spreadsheet writes them, was refused as "needs the columns
    student, timestamp" though it has them (extensions.csv took them)."""
    path = tmp_path / "times.csv"
    path.write_text("Student, Timestamp\nada,2026-03-01T12:00:00+01:00\n")
    assert read_submitted_at(path) == {"ada": datetime.fromisoformat("2026-03-01T12:00:00+01:00")}


@pytest.mark.slow
def test_a_blackboard_file_linked_into_the_class_folder_is_still_the_exports(
    tmp_path: Path,
) -> None:
    """A link of the instructor's in the class folder is read where it leads: its file lies
    in another folder, and its Blackboard name stopped counting (the file's time instead)."""
    root = course(tmp_path)
    downloads, folder = tmp_path / "downloads", tmp_path / "class"
    downloads.mkdir()
    folder.mkdir()
    name = "hw_ada_attempt_2026-03-02-01-30-00.ipynb"  # 91 minutes late: 20%
    notebook = write_notebook(downloads / name, students.cells())
    os.utime(notebook, (AFTER, AFTER))
    (folder / name).symlink_to(notebook)
    row = grade(folder, root, "self_attention", tmp_path / "out")
    assert float(row["late_penalty"]) == 20, row["lateness"]
    assert "time from the Blackboard file name" in row["lateness"]
