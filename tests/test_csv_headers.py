"""The instructor's CSV files read their header one way: `Student`, ` points ` and `student`
are one column, and a file saved with `;` between its cells says so, whichever file it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.batch.adjust import read_changes
from grader.batch.lateness import load_extensions, read_submitted_at
from grader.batch.roster import load_roster
from grader.errors import ConfigError, GraderError, UsageError

HINT = "its cells are separated by ';': save it as comma-separated CSV"


def test_a_regrade_sheet_with_capitalised_columns_is_read(tmp_path: Path) -> None:
    # `Student,Target,Points,Comment` (a spreadsheet's headings) was refused as "needs the
    # columns student, points" though it has them.
    sheet = tmp_path / "regrades.csv"
    sheet.write_text("Student, Target ,POINTS,Comment\ns1,softmax,1.5,seen in office hours\n")
    [change] = read_changes(sheet)
    assert (change.student, change.target, change.points) == ("s1", "softmax", 1.5)
    assert change.comment == "seen in office hours"


def test_an_extensions_file_with_capitalised_columns_is_read(tmp_path: Path) -> None:
    (tmp_path / "extensions.csv").write_text("Student,Hours\ns1,48\n")
    assert load_extensions(tmp_path) == {"s1": 48.0}


def test_an_extensions_file_without_the_student_column_says_so(tmp_path: Path) -> None:
    # A file with `hours` and no `student` said "'48' names no student" on its first row.
    (tmp_path / "extensions.csv").write_text("name,hours\ns1,48\n")
    with pytest.raises(ConfigError) as caught:
        load_extensions(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'extensions.csv'} line 1: needs the columns student, hours"
    )


def _regrades(path: Path) -> None:
    read_changes(path)


def _times(path: Path) -> None:
    read_submitted_at(path)


def _extensions(path: Path) -> None:
    load_extensions(path.parent)


def _roster(path: Path) -> None:
    load_roster(path)


@pytest.mark.parametrize(
    ("name", "text", "read", "error"),
    [
        ("regrades.csv", "student;target;points\ns1;;8\n", _regrades, UsageError),
        ("times.csv", "student;timestamp\ns1;2026-03-01T12:00:00Z\n", _times, UsageError),
        ("extensions.csv", "student;hours\ns1;48\n", _extensions, ConfigError),
        ("roster.csv", "id;name\ns1;Ada\n", _roster, ConfigError),
    ],
)
def test_a_file_saved_with_semicolons_says_how_to_save_it(
    tmp_path: Path, name: str, text: str, read: object, error: type[GraderError]
) -> None:
    # Only the roster said so; the other files said "needs the columns …" of a file that
    # visibly has them.
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(error) as caught:
        read(path)  # type: ignore[operator]
    said = str(caught.value)
    assert said.startswith(f"{path} line 1: ") and said.endswith(HINT), said
