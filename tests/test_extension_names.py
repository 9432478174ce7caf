"""An `extensions.csv` row names its student as a roster id is matched, case and Unicode
form aside, with a roster or without one; and a batch reads the file once."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.batch import lateness
from grader.batch.lateness import read_course_extensions, same_student
from grader.cli import main

import students
from conftest import repo_config_raw, write_notebook

LATE = {"due": "2026-03-01T23:59:00+01:00", "late": {"percent": 10, "per": "hour", "cap": 50}}


def late_course(tmp_path: Path) -> Path:
    """A course folder (no roster) whose self_attention assignment has a late policy."""
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(LATE)
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def test_without_a_roster_a_row_matches_a_submission_case_aside(tmp_path: Path) -> None:
    course = late_course(tmp_path)
    # "ÉMILE" written with a combining accent, the submission's name with one character.
    (course / "extensions.csv").write_text("student,hours\nADA,48\nE\u0301MILE,24\nbo,6\n")
    read = read_course_extensions(course)
    assert read.matched(["ada", "\u00e9mile", "cy"]) == {"ada": 48.0, "\u00e9mile": 24.0}
    path = course / "extensions.csv"
    assert read.strays(["ada", "\u00e9mile"]) == [
        f"{path} line 4: 'bo' matches no submission (and the course has no roster); "
        "the extension is not applied"
    ]
    # The roster's way: the same row matches the roster id "ada", by the same key.
    (course / "roster.csv").write_text("id,name\nada,Ada\n\u00e9mile,Emile\nbo,Bo\n")
    with_roster = read_course_extensions(course)
    assert with_roster.hours == {"ada": 48.0, "\u00e9mile": 24.0, "bo": 6.0}
    assert with_roster.strays(["ada"]) == []  # a roster refuses such rows instead
    assert same_student("ADA") == same_student("ada") != same_student("adda")


def test_grade_applies_an_extension_whose_name_differs_in_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = late_course(tmp_path)
    (course / "extensions.csv").write_text("student,hours\nADA,48\n")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    times = tmp_path / "times.csv"
    times.write_text("student,timestamp\nada,2026-03-02T20:00:00+01:00\n")  # 20 h late
    opened: list[Path] = []
    real = lateness.csv_rows

    def counted(path: Path, error: Any) -> Any:
        opened.append(path)
        return real(path, error)

    monkeypatch.setattr(lateness, "csv_rows", counted)
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [*command, "--submitted-at", str(times), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    assert float(row["late_penalty"]) == 0, row  # 50 (the cap) without the extension
    assert opened.count(course / "extensions.csv") == 1  # one read for hours and warnings


def test_serve_applies_an_extension_whose_name_differs_in_case(tmp_path: Path) -> None:
    """`grader serve` without a roster matched extensions.csv's names exactly: `ALICE,48`
    was lost for the student signed in as `alice` (a batch matched it)."""
    from test_serve_semester import course

    from grader.serve.semester import upload_late

    config = course(tmp_path)  # self_attention was due a day ago, 10% per started day
    folder = config.path.parent
    # "ÉMILE" with a combining accent, the student's id with one character.
    (folder / "extensions.csv").write_text("student,hours\nALICE,48\nE\u0301MILE,48\n")
    spec = config.assignment("self_attention")
    now = time.time()
    for student in ("alice", "\u00e9mile"):
        late = upload_late(folder, spec, student, now)
        assert late is not None and late.percent == 0, (student, late)
    late = upload_late(folder, spec, "bob", now)
    assert late is not None and late.percent > 0  # no extension: the penalty


def test_two_rows_for_one_student_with_different_hours_stop_the_command(tmp_path: Path) -> None:
    """`ada,24` then `ADA,48` (or the same name twice): the last row won, silently. Rows
    that agree are one extension; rows that differ are the instructor's to settle (exit 2)."""
    course = late_course(tmp_path)
    path = course / "extensions.csv"
    path.write_text("student,hours\nada,24\nbo,6\nADA,48\n")
    with pytest.raises(lateness.ConfigError) as refused:
        read_course_extensions(course)
    assert str(refused.value) == (
        f"{path} line 4: 'ADA' has 48 hours here and 24 on line 2; keep one row per student"
    )
    path.write_text("student,hours\nada,24\nbo,6\nADA,24.0\n")  # the same hours: one extension
    assert read_course_extensions(course).matched(["ada", "bo"]) == {"ada": 24.0, "bo": 6.0}
    # The roster's column and extensions.csv are two files: extensions.csv wins, as documented.
    (course / "roster.csv").write_text("id,name,extension_hours\nada,Ada,12\nbo,Bo,\n")
    path.write_text("student,hours\nADA,30\n")
    assert read_course_extensions(course).hours == {"ada": 30.0}
    command = ["grade", str(tmp_path / "class"), "--course", str(course)]
    path.write_text("student,hours\nada,24\nada,25\n")
    (tmp_path / "class").mkdir()  # a class to grade: the command reads extensions.csv first
    write_notebook(tmp_path / "class" / "ada.ipynb", ["x = 1"])
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    assert "line 3: 'ada' has 25 hours here and 24 on line 2" in result.output


def test_a_row_with_only_a_student_or_only_hours_stops_the_command(tmp_path: Path) -> None:
    """`ada,` (the hours forgotten) or `,24` was skipped: an extension meant and silently
    not given. A row of empty cells is still nothing; a roster's empty column is no extension."""
    course = late_course(tmp_path)
    path = course / "extensions.csv"
    for text, said in (
        ("student,hours\nbo,6\nada,\n", "line 3: 'ada' has no hours"),
        ("student,hours\nbo,6\n , 24\n", "line 3: '24' names no student"),
    ):
        path.write_text(text)
        with pytest.raises(lateness.ConfigError) as refused:
            read_course_extensions(course)
        assert str(refused.value) == f"{path} {said}; a row needs both student and hours"
    path.write_text("student,hours\nbo,6\n,\n")
    assert read_course_extensions(course).hours == {"bo": 6.0}
    (course / "roster.csv").write_text("id,name,extension_hours\nada,Ada,\nbo,Bo,\n")
    assert read_course_extensions(course).hours == {"bo": 6.0}


def test_a_quote_never_closed_is_an_error_not_every_later_row_lost(tmp_path: Path) -> None:
    """`"ada,24` read the rest of the file as one student's name: no row had hours, and
    every extension was silently lost (exit 0, no warning)."""
    course = late_course(tmp_path)
    path = course / "extensions.csv"
    path.write_text('student,hours\n"ada,24\nbo,6\ncy,12\n')
    with pytest.raises(lateness.ConfigError) as refused:
        read_course_extensions(course)
    assert str(refused.value) == f"{path} line 4: a quote opened on line 2 is never closed"
