"""A student without a graded notebook still has a feedback page that says what every other
output says: a resubmission that cannot be read replaces the page of the notebook graded
before it (which kept its old points), and a roster student who handed in nothing but was
given points by hand gets a page with them and counts in the class report's scores."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from click.testing import CliRunner, Result

from grader.cli import main

import students
from conftest import write_fast_course, write_notebook

TARGET = "scaled_dot_product_self_attention"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def heading(page: Path) -> str:
    found = re.search(r"<h1>(.*?)</h1>", page.read_text(encoding="utf-8"), re.S)
    assert found is not None
    return re.sub(r"<[^>]+>", "", found.group(1))


def total(out: Path, student: str) -> str:
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return next(row["total"] for row in csv.DictReader(handle) if row["student"] == student)


def test_an_unreadable_resubmission_replaces_the_page_of_the_graded_one(tmp_path: Path) -> None:
    course = tmp_path / "course"
    write_fast_course(course)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write_notebook(first / "dana.ipynb", students.cells(**{TARGET: students.SCALE_HARDCODED}))
    (second / "dana.ipynb").write_text('{"cells": [', encoding="utf-8")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention", "--out", str(out)]
    assert run("grade", str(first), *where).exit_code == 0
    page = out / "feedback" / "dana.html"
    assert not heading(page).startswith("self_attention: 0 /")  # graded: some points
    assert run("grade", str(second), *where).exit_code == 1  # one could not be graded
    assert float(total(out, "dana")) == 0
    said = page.read_text(encoding="utf-8")
    assert heading(page).startswith("self_attention: 0 / ")
    assert "not a Jupyter notebook" in said and str(second) not in said  # its name, not where
    # the instructor's points for it: the page says them, as grades.csv does
    results = ["--results", str(out), "--course", str(course)]
    assert run("override", "dana", "--points", "4", "--comment", "see me", *results).exit_code == 0
    assert float(total(out, "dana")) == 4
    assert heading(page).startswith("self_attention: 4 / ") and "see me" in page.read_text()


def test_a_student_without_a_notebook_given_points_by_hand_has_a_page_and_counts(
    tmp_path: Path,
) -> None:
    course = tmp_path / "course"
    write_fast_course(course)
    (course / "roster.csv").write_text("id,name\nada,Ada\nGoran,Goran\n", encoding="utf-8")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention", "--out", str(out)]
    assert run("grade", str(folder), *where).exit_code == 0
    page = out / "feedback" / "Goran.html"
    assert not page.exists()  # no notebook, nothing set by hand: no page
    report = run("report", str(out), "--format", "json")
    assert set(json.loads(report.output)["scores"]) == {"ada"}
    results = ["--results", str(out), "--course", str(course)]
    changed = run("override", "Goran", "--points", "8", "--comment", "excused", *results)
    assert changed.exit_code == 0, changed.output
    assert float(total(out, "Goran")) == 8
    assert heading(page).startswith("self_attention: 8 / ") and "excused" in page.read_text()
    assert "no notebook was handed in" in page.read_text()
    report = run("report", str(out), "--format", "json")
    summary = json.loads(report.output)
    assert summary["scores"]["Goran"] == 8
    assert "Goran" not in {s for s, _ in summary["failing_to_run"]}
