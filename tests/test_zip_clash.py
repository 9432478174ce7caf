"""A zip entry that cannot be unpacked is skipped with a line; the rest of the class is graded."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.submissions import find_submissions
from grader.cli import main

import students
from conftest import REPO, write_notebook

BOTH_ORDERS = pytest.mark.parametrize(
    "clashing",
    [("alice", "alice/hw.ipynb"), ("alice/hw.ipynb", "alice")],
    ids=["file-first", "folder-first"],
)


def class_zip(tmp_path: Path, extra: tuple[str, ...]) -> Path:
    """bob and carol hand in correct notebooks; the `extra` entries are a copy of bob's."""
    notebook = write_notebook(tmp_path / "nb.ipynb", students.cells()).read_bytes()
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name in ("bob.ipynb", *extra, "carol.ipynb"):
            bundle.writestr(name, notebook)
    return archive


@BOTH_ORDERS
def test_a_file_and_a_folder_of_the_same_name_are_skipped_with_one_line(
    tmp_path: Path, clashing: tuple[str, ...]
) -> None:
    found = find_submissions(class_zip(tmp_path, clashing), tmp_path / "scratch")
    assert [student for student, _ in found.submissions] == ["bob", "carol"]
    assert len(found.problems) == 1
    assert found.problems[0].startswith("alice: ")
    assert f"({', '.join(clashing)})" in found.problems[0]  # both entries, named as in the zip


def test_an_entry_the_file_system_refuses_is_skipped_with_a_line(tmp_path: Path) -> None:
    too_long = "x" * 300 + ".ipynb"  # longer than any file name may be (255 bytes)
    found = find_submissions(class_zip(tmp_path, (too_long,)), tmp_path / "scratch")
    assert [student for student, _ in found.submissions] == ["bob", "carol"]
    assert len(found.problems) == 1 and "could not be unpacked" in found.problems[0]


@pytest.mark.slow
@BOTH_ORDERS
def test_grade_grades_everyone_else_and_exits_normally(
    tmp_path: Path, clashing: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "grade",
            str(class_zip(tmp_path, clashing)),
            "--out",
            str(out),
            "--config",
            str(REPO / "config.yaml"),
            "--assignment",
            "self_attention",
        ],
    )
    assert result.exit_code in (0, 1), result.output
    assert "alice: the zip holds both a file and a folder" in result.stderr
    graded = (out / "grades.csv").read_text().splitlines()[1:]
    assert sorted(line.split(",")[0] for line in graded) == ["bob", "carol"]
