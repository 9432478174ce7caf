"""grades.csv after a batch into an OUT that earlier batches graded: the whole class, as the
class report and the exports show it, not only the students this batch found (a late
student's folder of one made grades.csv a file of one, and with a roster everyone else read
"no submission")."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.gradebook import Gradebook
from grader.cli import main

import students
from conftest import write_fast_course, write_notebook


def _rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(encoding="utf-8", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _grade(folder: Path, course: Path, out: Path) -> None:
    command = ["grade", str(folder), "--course", str(course), "--out", str(out)]
    result = CliRunner().invoke(main, [*command, "-a", "self_attention"])
    assert result.exit_code in (0, 1), result.output


def _class(tmp_path: Path, roster: str | None) -> tuple[Path, Path, Path]:
    """A course (with `roster` as roster.csv), the class's folder (ada: full marks, bo: a
    missing bias) and a folder holding only cy's late notebook."""
    course = tmp_path / "course"
    write_fast_course(course)
    if roster is not None:
        (course / "roster.csv").write_text(roster, encoding="utf-8")
    first, late = tmp_path / "class", tmp_path / "late"
    first.mkdir()
    late.mkdir()
    write_notebook(first / "ada.ipynb", students.cells())
    write_notebook(first / "bo.ipynb", students.cells(self_attention=students.MISSING_BIAS))
    write_notebook(late / "cy.ipynb", students.cells())
    return course, first, late


@pytest.mark.slow
@pytest.mark.parametrize("roster", [None, "id,name\nada,Ada\nbo,Bo\ncy,Cy\ndee,Dee\n"])
def test_a_late_batch_keeps_everyone_graded_before(tmp_path: Path, roster: str | None) -> None:
    course, first, late = _class(tmp_path, roster)
    out = tmp_path / "out"
    _grade(first, course, out)
    before = _rows(out)
    _grade(late, course, out)
    after = _rows(out)
    assert after["ada"]["total"] == before["ada"]["total"] != "0.0"
    assert after["bo"]["total"] == before["bo"]["total"] != after["ada"]["total"]
    assert after["ada"]["problem"] == after["bo"]["problem"] == ""
    assert after["cy"]["total"] == after["ada"]["total"]
    if roster is None:
        assert list(after) == ["ada", "bo", "cy"]
    else:  # in the roster's order; dee handed in nothing, in either batch
        assert list(after) == ["ada", "bo", "cy", "dee"]
        assert after["dee"]["problem"] == "no submission"


@pytest.mark.slow
def test_this_batchs_result_wins_over_the_gradebooks_older_one(tmp_path: Path) -> None:
    course, first, late = _class(tmp_path, None)
    out = tmp_path / "out"
    _grade(first, course, out)
    (late / "ada.ipynb").write_text("not a notebook", encoding="utf-8")
    _grade(late, course, out)
    after = _rows(out)
    assert after["ada"]["total"] == "0" and after["ada"]["problem"] != ""
    assert after["bo"]["problem"] == "" and after["bo"]["total"] != "0"


@pytest.mark.slow
def test_a_notebook_not_graded_counts_for_its_own_assignment_only(tmp_path: Path) -> None:
    # The gradebook kept one unreadable row per student whatever its assignment: cy's broken
    # masked_attention notebook was a problem row in self_attention's grades.csv, and ada's
    # self_attention grade erased her broken masked_attention one.
    course, first, _ = _class(tmp_path, None)
    masked = tmp_path / "masked"
    masked.mkdir()
    (masked / "cy.ipynb").write_text("not a notebook", encoding="utf-8")
    (masked / "ada.ipynb").write_text("not a notebook", encoding="utf-8")
    out = tmp_path / "out"
    command = ["grade", str(masked), "--course", str(course), "--out", str(out)]
    result = CliRunner().invoke(main, [*command, "-a", "masked_attention"])
    assert "2 could not be graded" in result.output, result.output
    _grade(first, course, out)  # ada and bo, of self_attention
    assert list(_rows(out)) == ["ada", "bo"]
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert [s for s, _, _ in book.unreadable("masked_attention")] == ["ada", "cy"]
        assert book.unreadable("self_attention") == []
    finally:
        book.close()
