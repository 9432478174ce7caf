"""Leftovers of the semester's files and the LMS exports: an extension naming no one without
a roster, a blank Canvas cell for no submission, a grade above the maximum in a Moodle
export, "Last, First" names, and a NaN late-penalty cap."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.lateness import load_extensions, stray_extensions
from grader.cli import main
from grader.render.lms import split_name

import students
from conftest import repo_config_raw, write_notebook

LATE_KEYS = {
    "due": "2026-03-01T23:59:00+01:00",
    "late": {"grace": 15, "percent": 10, "per": "hour", "cap": 50},
}


def late_course(tmp_path: Path, **late: object) -> Path:
    """A course folder (no roster) whose self_attention assignment has a late policy."""
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(LATE_KEYS)
    raw["assignments"]["self_attention"]["late"].update(late)
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def test_an_extension_naming_no_submission_without_a_roster_is_one_line(tmp_path: Path) -> None:
    course = late_course(tmp_path)
    (course / "extensions.csv").write_text("student,hours\nada,48\nadda,24\n,\n")
    assert load_extensions(course) == {"ada": 48.0, "adda": 24.0}  # read as before
    # (hours without a student stop the command: test_extension_names.py)
    lines = stray_extensions(course, ["ada", "bo"])
    path = course / "extensions.csv"
    assert lines == [
        f"{path} line 3: 'adda' matches no submission (and the course has no roster); "
        "the extension is not applied"
    ]
    assert stray_extensions(course, ["ada", "adda"]) == []
    # With a roster, load_extensions refuses such a row itself: nothing to warn of here.
    (course / "roster.csv").write_text("id,name\nada,Ada Lovelace\n")
    assert stray_extensions(course, ["ada"]) == []


def test_grade_warns_of_the_extension_it_cannot_apply(tmp_path: Path) -> None:
    course = late_course(tmp_path)
    (course / "extensions.csv").write_text("student,hours\nada,48\nadda,24\n")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    times = tmp_path / "times.csv"
    times.write_text("student,timestamp\nada,2026-03-01T20:00:00+01:00\n")
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    result = CliRunner().invoke(main, [*command, "--submitted-at", str(times)])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warned == [
        f"warning: {course / 'extensions.csv'} line 3: 'adda' matches no submission (and "
        "the course has no roster); the extension is not applied"
    ]


def test_a_last_comma_first_name_splits_at_the_comma() -> None:
    assert split_name("Smith, John") == ("John", "Smith")
    assert split_name("van der Berg, Anna Maria") == ("Anna Maria", "van der Berg")
    assert split_name("  Smith ,John ") == ("John", "Smith")
    # the forms read before keep their meaning
    assert split_name("John Smith") == ("John", "Smith")
    assert split_name("Ada King Lovelace") == ("Ada King", "Lovelace")
    assert split_name("Plato") == ("Plato", "")


def test_a_nan_late_cap_is_one_config_line_exit_2(tmp_path: Path) -> None:
    course = late_course(tmp_path)
    config = course / "config.yaml"
    raw = json.loads(config.read_text())
    text = json.dumps(raw).replace('"cap": 50', '"cap": .nan')
    config.write_text(text)  # YAML reads `.nan` (JSON has no NaN): the instructor's spelling
    folder = tmp_path / "class"
    folder.mkdir()
    result = CliRunner().invoke(main, ["grade", str(folder), "--course", str(course)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: {config} is not a valid grader config: "
        "assignments.self_attention.late.cap: must be a number, not nan"
    ]


def test_a_moodle_total_above_the_maximum_is_exported_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no config.yaml where the grader runs: no note of its own
    course, folder = students.fast_class(tmp_path, "ada", "bo")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention", "--results", str(out)]
    graded = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where[:4]])
    assert graded.exit_code == 0, graded.output
    with (out / "grades.csv").open() as handle:
        top = float(next(csv.DictReader(handle))["max_total"])
    bonus = ["override", "bo", "--points", f"{top + 2:g}", "--comment", "bonus", *where]
    assert CliRunner().invoke(main, bonus).exit_code == 0
    dest = tmp_path / "moodle.csv"
    done = CliRunner().invoke(main, ["export", "--format", "moodle", *where, "--out", str(dest)])
    assert done.exit_code == 0, done.output
    assert done.stderr.splitlines() == [
        f"note: 1 total(s) above the maximum of {top:g} (bo): exported as they are; Moodle's "
        "import caps a grade at its grade item's maximum unless the site allows more (Site "
        "administration > Grades > General settings > Unlimited grades)"
    ]
    with dest.open(newline="") as handle:
        totals = {row["ID number"]: float(row["self_attention"]) for row in csv.DictReader(handle)}
    assert totals == {"ada": top, "bo": top + 2}  # the file holds the total as it counts
    # standard output holds the file's bytes only; the note is on stderr there too
    piped = CliRunner().invoke(main, ["export", "--format", "moodle", *where, "--out", "-"])
    assert piped.stdout_bytes == dest.read_bytes() and piped.stderr == done.stderr
    # Canvas and Blackboard take points above the maximum (extra credit): nothing to say
    canvas = CliRunner().invoke(main, ["export", "--format", "canvas", *where, "--out", "-"])
    assert canvas.exit_code == 0 and canvas.stderr == ""
