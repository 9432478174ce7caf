"""The gradebook and the service on a real PostgreSQL server (tests/postgres_server.py): the
same notebooks grade to the same gradebook rows as on SQLite, and the service takes an upload,
grades it and shows its feedback with every table in PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from grader.batch.gradebook import Gradebook
from grader.batch.lateness import Late, save_late, stored_late
from grader.batch.records import Override, overrides, set_override
from grader.cli import main
from grader.course.config import Config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store

import students
from conftest import REPO, write_notebook
from serving import free_port, issue, sign_in, start_server, stop

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DEMO = REPO / "demo" / "submissions"
SUBMISSIONS = (
    "SELECT s.student, s.assignment, s.path, s.content_hash, s.config_hash, s.grader_version,"
    " s.score, s.max_score, s.report FROM submissions s ORDER BY s.student"
)
RESULTS = (
    "SELECT s.student, r.target, r.status, r.score, r.max_score, r.mistakes, r.messages,"
    " r.cell, r.line FROM results r JOIN submissions s ON s.id = r.submission"
    " ORDER BY s.student, r.target"
)
UNREADABLE = "SELECT student, assignment, path, problem FROM ungraded ORDER BY student"


def rows(query: str, sqlite_path: Path | None = None, url: str | None = None) -> list[Any]:
    """A query's rows, from a SQLite file or a PostgreSQL database; reports without the
    seconds they took (the one thing two runs differ in)."""
    if sqlite_path is not None:
        with sqlite3.connect(sqlite_path) as db:
            found = [tuple(r) for r in db.execute(query)]
        db.close()
    else:
        with psycopg.connect(str(url)) as db:
            found = [tuple(r) for r in db.execute(query)]
    return [tuple(_steady(v) for v in row) for row in found]


def _steady(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("{"):
        data = json.loads(value)
        data.pop("seconds", None)
        return data
    return value


def grade(*args: str) -> Any:
    return CliRunner().invoke(main, ["grade", str(DEMO), "--course", str(REPO), *args])


def test_the_same_notebooks_grade_to_the_same_rows_as_on_sqlite(
    tmp_path: Path, postgres_url: str
) -> None:
    on_sqlite = grade("--assignment", "self_attention", "--out", str(tmp_path / "lite"))
    on_postgres = grade(
        "--assignment", "self_attention", "--out", str(tmp_path / "pg"), "--db", postgres_url
    )
    assert on_sqlite.exit_code == on_postgres.exit_code == 1, on_postgres.output  # zoe
    assert not (tmp_path / "pg" / "gradebook.sqlite").exists()
    lite = tmp_path / "lite" / "gradebook.sqlite"
    for query in (SUBMISSIONS, RESULTS, UNREADABLE):
        expected = rows(query, sqlite_path=lite)
        assert expected and rows(query, url=postgres_url) == expected
    scores = {row[6] for row in rows(SUBMISSIONS, url=postgres_url)}
    assert len(scores) > 3  # full marks, mistakes, errors: not one kind of row
    grades = (tmp_path / "pg" / "grades.csv").read_text()
    assert grades == (tmp_path / "lite" / "grades.csv").read_text()
    assert "bruno" in (tmp_path / "pg" / "report.html").read_text()  # read from PostgreSQL
    again = grade(
        "--assignment", "self_attention", "--out", str(tmp_path / "pg"), "--db", postgres_url
    )
    assert again.exit_code == 1 and "0 graded, 12 unchanged" in again.stdout  # resumes from it


def test_overrides_and_lateness_are_kept_alike(tmp_path: Path, postgres_url: str) -> None:
    for where in (tmp_path / "gradebook.sqlite", postgres_url):
        book = Gradebook(where)
        first = Override("ada", "a1", "", 7.0, "cap", "me", 1.0)
        set_override(book, first)
        set_override(book, Override("ada", "a1", "", 8.5, "fair", "me", 2.0))  # replaces it
        save_late(book, "ada", "a1", _handed(), Late(61.0, 10.0, "an hour late"))
        assert overrides(book, "a1") == {"ada": [Override("ada", "a1", "", 8.5, "fair", "me", 2.0)]}
        assert stored_late(book, "a1") == {"ada": Late(61.0, 10.0, "an hour late")}
        book.close()


def _handed() -> Any:
    from grader.batch.lateness import Handed

    return Handed(None, "test")


def test_bad_database_addresses_exit_2_in_one_line(tmp_path: Path, postgres_server: Any) -> None:
    out = str(tmp_path / "out")
    not_url = grade("--out", out, "--db", "grades.db")
    assert not_url.exit_code == 2 and "not a PostgreSQL URL" in not_url.stderr
    no_out = grade("--db", postgres_server.url())
    assert no_out.exit_code == 2 and "--db needs --out" in no_out.stderr
    missing = postgres_server.url("no_such_database")
    unreachable = grade("--out", out, "--db", missing)
    assert unreachable.exit_code == 2 and "cannot reach PostgreSQL there" in unreachable.stderr
    assert "Traceback" not in unreachable.output


@pytest.mark.sandbox
def test_the_service_grades_an_upload_with_its_tables_in_postgresql(
    tmp_path: Path, config: Config, postgres_url: str
) -> None:
    store = Store(tmp_path / "out", postgres_url)
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    notebook = write_notebook(
        tmp_path / "alice.ipynb", students.cells(scaled=students.SCALE_HARDCODED)
    )
    app = make_app(Service(store, Limits(min_interval=0), grading))
    with TestClient(app) as client:
        form = sign_in(client, tokens["alice"])
        sent = {"notebook": ("alice.ipynb", notebook.read_bytes())}
        answer = client.post("/upload", data={"csrf": form}, files=sent, follow_redirects=False)
        where = answer.headers["location"]
        deadline = time.monotonic() + 90
        while client.get(f"{where}/status").json()["state"] != "graded":
            assert time.monotonic() < deadline, "not graded in 90 s"
            time.sleep(0.05)
        page = client.get(where).text
    store.close()
    assert "scale" in page  # the diagnosis of the hard-coded scale, on the student's page
    assert not (tmp_path / "out" / "serve.sqlite").exists()
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()
    ((status, recorded),) = rows("SELECT status, recorded FROM uploads", url=postgres_url)
    assert (status, recorded) == ("graded", 1)
    book = Gradebook(postgres_url)
    ((student, report),) = book.latest()
    book.close()
    assert student == "alice" and report.score < report.max_score


@pytest.mark.sandbox
def test_two_replicas_on_one_database_grade_each_upload_once(
    tmp_path: Path, postgres_url: str
) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\nbob,Bob\n")
    args = ["serve", "tokens", "--roster", str(roster), "--out", str(tmp_path / "a")]
    tokens_cli = CliRunner().invoke(main, [*args, "--db", postgres_url])
    assert tokens_cli.exit_code == 0, tokens_cli.output
    # from the links: a token cell that starts with '-' is quoted for spreadsheets
    lines = tokens_cli.stdout.split()[1:]
    tokens = {line.split(",")[0]: line.split(",")[4].rsplit("/t/", 1)[1] for line in lines}
    notebook = write_notebook(tmp_path / "nb.ipynb", students.cells()).read_bytes()
    ports = [free_port(), free_port()]
    # two replicas, each with its own folder: all they share is the database
    servers = [
        start_server(tmp_path / name, port, "--course", str(REPO), "--db", postgres_url)
        for name, port in zip("ab", ports, strict=True)
    ]
    try:
        accepted = []
        for i, student in enumerate(("alice", "bob") * 4):
            with httpx.Client(base_url=f"http://127.0.0.1:{ports[i % 2]}") as client:
                form = sign_in(client, tokens[student])
                sent = {"notebook": (f"{student}.ipynb", notebook)}
                answer = client.post("/upload", data={"csrf": form}, files=sent)
                assert answer.status_code == 303, answer.text[:300]
                accepted.append(answer.headers["location"])
        deadline = time.monotonic() + 120
        while rows("SELECT COUNT(*) FROM uploads WHERE status != 'graded'", url=postgres_url) != [
            (0,)
        ]:
            assert time.monotonic() < deadline, "not all graded in 120 s"
            time.sleep(0.1)
    finally:
        for server in servers:
            stop(server)
    # Half were accepted by each replica, and neither can read the other's folder: every
    # upload graded means each found its bytes in the database. Recorded once each.
    graded = rows("SELECT recorded, score = max_score FROM uploads", url=postgres_url)
    assert graded == [(1, True)] * len(accepted)
