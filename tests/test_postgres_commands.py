"""`grader report`, `override`, `comment` and `export` with `--db`: on a class graded into a
real PostgreSQL server (tests/postgres_server.py) they write what the same commands write
for the same class graded into OUT/gradebook.sqlite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.cli import main
from grader.course.config import load_config

from conftest import REPO

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DEMO = REPO / "demo" / "submissions"
# When an override or a comment was made, and how long each notebook took (the report's
# slowest submissions): the things two runs differ in.
WHEN = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?( ?UTC|Z|[+-]\d\d:?\d\d)?")
SLOWEST = re.compile(r"<h2>Slowest submissions</h2>.*?</table>", re.DOTALL)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def instructor_session(out: Path, database: list[str]) -> dict[str, str]:
    """Grade the demo class into `out` (and `database`), then override, comment, export and
    report on it as an instructor does; what each step wrote or printed, by name."""
    course = ["--course", str(REPO)]
    graded = run("grade", str(DEMO), *course, "-a", "self_attention", "--out", str(out), *database)
    assert graded.exit_code == 1, graded.output  # zoe's notebook cannot be graded
    target = load_config(REPO / "config.yaml").assignment("self_attention").targets[0].name
    where = ["--results", str(out), *course, *database]
    who = ["--author", "prof"]
    steps = [
        ["override", "bruno", target, "--points", "0.5", "--comment", "regrade", *where, *who],
        ["override", "chen", "--points", "3", "--comment", "late, excused", *where, *who],
        ["comment", "bruno", "see me after class", *where, *who],
        ["export", "--format", "canvas", *where, "--out", str(out / "canvas.csv")],
        ["export", "--format", "moodle", *where, "--out", str(out / "moodle.csv")],
        ["report", str(out), *database],
    ]
    for step in steps:
        done = run(*step)
        assert done.exit_code == 0, (step, done.output)
    summary = run("report", str(out), "--format", "json", *database)
    assert summary.exit_code == 0, summary.output
    numbers = json.loads(summary.stdout)
    assert len(numbers.pop("slowest")) > 3  # measured, not compared
    written = {"report.json": json.dumps(numbers, indent=1)}
    for name in ("grades.csv", "canvas.csv", "moodle.csv"):
        written[name] = (out / name).read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    written["report.html"], slowest = SLOWEST.subn("", page)
    assert slowest == 1
    for name in ("bruno.html", "chen.html"):
        written[name] = (out / "feedback" / name).read_text(encoding="utf-8")
    return {name: WHEN.sub("WHEN", text) for name, text in written.items()}


def test_every_gradebook_command_reads_postgresql_as_it_reads_sqlite(
    tmp_path: Path, postgres_url: str
) -> None:
    on_sqlite = instructor_session(tmp_path / "lite", [])
    on_postgres = instructor_session(tmp_path / "pg", ["--db", postgres_url])
    assert not (tmp_path / "pg" / "gradebook.sqlite").exists()  # all of it in PostgreSQL
    assert on_postgres == on_sqlite
    # and the changes are in what both wrote: the override and the comment are shown
    scores = json.loads(on_postgres["report.json"])["scores"]
    assert scores["chen"] == 3
    assert "see me after class" in on_postgres["bruno.html"]
    assert "late, excused" in on_postgres["grades.csv"]


def test_a_bad_database_address_is_one_line_for_each_command(tmp_path: Path) -> None:
    where = ["--results", str(tmp_path), "--course", str(REPO), "--db", "sqlite:///x.db"]
    for command in (
        ["override", "ada", "--points", "1", *where],
        ["comment", "ada", "hello", *where],
        ["export", "--format", "csv", *where, "--out", str(tmp_path / "x.csv")],
        ["report", str(tmp_path), "--db", "sqlite:///x.db"],
    ):
        done = run(*command)
        assert done.exit_code == 2, (command, done.output)
        assert done.output.strip() == (
            "Error: --db sqlite:///x.db: not a PostgreSQL URL (postgresql://USER@HOST/DB)"
        )
