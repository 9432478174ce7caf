"""An upload the service could not grade for a fault of its own (no worker could start, a
sandbox or files fault, the grader's bug) uses none of the student's attempts and does not
start the least interval between uploads, in SQLite and PostgreSQL alike; the student and the
instructor still see it, marked as not counted. Uploads refused before they are accepted
count neither (tests/test_serve.py)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from grader.batch import schema
from grader.batch.database import connect
from grader.course.config import Config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits, refusal
from grader.serve.grading import Grading
from grader.serve.store import Store

import students
from conftest import OUT_OF_PROCESSES, REPO, no_worker_for_marked, write_notebook
from serving import issue, sign_in

SOLUTION = (REPO / "solutions" / "self_attention.ipynb").read_bytes()
FAULT = "not graded: no worker could start; upload it again in a while"
ON_POSTGRESQL = pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])


@pytest.fixture(params=["sqlite", ON_POSTGRESQL])
def database(request: pytest.FixtureRequest) -> str | None:
    """None for serve.sqlite in the output folder, else a fresh PostgreSQL database."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(tmp_path: Path, database: str | None) -> Iterator[Store]:
    store = Store(tmp_path / "out", database)
    issue(store)
    yield store
    store.close()


def grader_fault(store: Store, upload: int) -> None:
    """What the grading thread records for an upload it could not grade for its own fault."""
    (claimed,) = store.claim(1)
    assert claimed.id == upload
    assert store.finish(upload, None, None, "", FAULT, counts=False)


def test_an_upload_not_graded_for_a_grader_fault_uses_no_attempt(store: Store) -> None:
    first = store.accept("alice", "a.ipynb", SOLUTION, max_attempts=2)
    assert first is not None and store.attempts("alice")[0] == 1
    grader_fault(store, first)
    assert store.attempts("alice") == (0, None)
    accepted = [store.accept("alice", "a.ipynb", SOLUTION, max_attempts=2) for _ in range(3)]
    assert accepted[:2] == [first + 1, first + 2] and accepted[2] is None
    assert store.attempts("alice")[0] == 2 and store.attempt_counts() == {"alice": 2}
    # Kept, and shown as what it is: a problem that did not count.
    history = store.history("alice")
    assert [(u.id, u.counts) for u in history] == [
        (first + 2, True),
        (first + 1, True),
        (first, False),
    ]
    assert history[-1].status == "problem" and history[-1].problem == FAULT


def test_nor_does_it_start_the_least_interval_between_uploads(store: Store) -> None:
    limits = Limits(max_attempts=9, min_interval=3600)
    first = store.accept("bob", "b.ipynb", SOLUTION, 9, limits.min_interval)
    assert first is not None
    assert refusal(store, "bob", "b.ipynb", SOLUTION, limits) is not None  # the rate limit
    grader_fault(store, first)
    assert refusal(store, "bob", "b.ipynb", SOLUTION, limits) is None
    assert store.accept("bob", "b.ipynb", SOLUTION, 9, limits.min_interval) == first + 1
    assert store.accept("bob", "b.ipynb", SOLUTION, 9, limits.min_interval) is None
    status, said = refusal(store, "bob", "b.ipynb", SOLUTION, limits) or (0, "")
    assert status == 429 and "One upload every 3600 s" in said


def test_an_upload_that_counted_once_uncounted_stays_so_after_a_regrade(store: Store) -> None:
    first = store.accept("alice", "a.ipynb", SOLUTION, max_attempts=1)
    assert first is not None
    grader_fault(store, first)
    assert store.regrade_latest() == 1
    store.claim(1)
    assert store.finish(first, 5.0, 5.0, "<p>page</p>", "")  # graded now: still no attempt
    assert store.attempts("alice")[0] == 0 and store.upload(first).counts is False  # type: ignore[union-attr]
    assert store.accept("alice", "a.ipynb", SOLUTION, max_attempts=1) == first + 1


def test_the_attempt_limit_holds_for_uploads_at_the_same_moment_after_a_fault(
    tmp_path: Path, database: str | None
) -> None:
    # Two stores: on PostgreSQL two replicas with a connection each; on SQLite two servers'
    # connections to one file. Either way, one attempt left is taken once.
    first = Store(tmp_path / "out", database)
    issue(first)
    second = Store(tmp_path / "out", database)
    try:
        lost = first.accept("alice", "a.ipynb", SOLUTION, max_attempts=2)
        assert first.accept("alice", "a.ipynb", SOLUTION, max_attempts=2) is not None
        assert lost is not None
        grader_fault(first, lost)

        def take(n: int) -> int | None:
            return (first, second)[n % 2].accept("alice", "a.ipynb", SOLUTION, max_attempts=2)

        with ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(take, range(16)))
        assert len([i for i in ids if i is not None]) == 1 and ids.count(None) == 15
        assert first.attempts("alice")[0] == 2 and len(first.history("alice")) == 3
    finally:
        second.close()
        first.close()


def _older_service(target: Path | str) -> None:
    """A service database as the version before this one made it: two uploads its grader
    could not grade ("not graded: …", a grader fault), one graded, one with a problem of the
    student's."""
    db = connect(target)
    db.tune("NORMAL")
    earlier = tuple(s for s in schema.MIGRATIONS if s.column != ("uploads", "counts"))
    assert len(earlier) == len(schema.MIGRATIONS) - 1
    real, schema.MIGRATIONS = schema.MIGRATIONS, earlier
    try:
        schema.migrate(db, ("service",))
    finally:
        schema.MIGRATIONS = real
    assert "counts" not in db.columns("uploads")
    with db.transaction():
        db.execute("INSERT INTO people VALUES ('alice', 'Alice', 'student', NULL)")
        insert = (
            "INSERT INTO uploads (student, filename, content_hash, size, received_at, status,"
            " problem) VALUES ('alice', 'a.ipynb', 'x', 1, ?, ?, ?)"
        )
        crashed = "could not be graded (grader fault: KeyError('x'))"
        for row in (
            (0.5, "problem", crashed),
            (1.0, "problem", FAULT),
            (2.0, "graded", ""),
            (3.0, "problem", "no cells"),
        ):
            db.execute(insert, row)
    db.close()


def test_an_older_database_migrates_and_its_grader_faults_stop_counting(
    tmp_path: Path, database: str | None
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _older_service(database or out / "serve.sqlite")
    store = Store(out, database)
    try:
        assert [(u.received_at, u.counts) for u in store.history("alice")] == [
            (3.0, True),
            (2.0, True),
            (1.0, False),
            (0.5, False),
        ]
        assert store.attempts("alice") == (2, 3.0)
    finally:
        store.close()
    if database is None:  # the column is the last, as a new database has it
        columns = sqlite3.connect(out / "serve.sqlite").execute("PRAGMA table_info(uploads)")
        assert [c[1] for c in columns][-1] == "counts"


def _upload(client: TestClient, form: str, data: bytes = SOLUTION) -> Any:
    sent = {"notebook": ("mine.ipynb", data)}
    return client.post("/upload", data={"csrf": form}, files=sent, follow_redirects=False)


def test_the_pages_show_the_upload_that_did_not_count(store: Store) -> None:
    tokens = issue(store)  # new ones: the fixture's are not kept
    app = make_app(Service(store, Limits(max_attempts=2, min_interval=0), None))
    with TestClient(app) as client:
        form = sign_in(client, tokens["alice"])
        assert _upload(client, form).status_code == 303
        grader_fault(store, 1)
        home = client.get("/").text
        assert "0 of 2 attempts used" in home
        assert FAULT in home and "(did not use an attempt)" in home
        lost = client.get("/submissions/1").text
        assert FAULT in lost and 'id="uncounted"' in lost and "did not use one of your" in lost
        assert [_upload(client, form).status_code for _ in range(3)] == [303, 303, 429]
        home = client.get("/").text
        assert "2 of 2 attempts used" in home and home.count("(did not use an attempt)") == 1
        assert 'id="uncounted"' not in client.get("/submissions/2").text
    with TestClient(app) as client:
        sign_in(client, tokens["ada"])
        person = client.get("/class/students/alice").text
        assert FAULT in person and person.count("(did not use an attempt)") == 1
        whole = client.get("/class").text
        row = whole.split('href="/class/students/alice">alice</a>', 1)[1].split("</tr>", 1)[0]
        assert "<td>2</td>" in row


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_worker_that_could_not_start_costs_the_student_no_attempt(
    tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = OUT_OF_PROCESSES
    no_worker_for_marked(monkeypatch)
    good = write_notebook(tmp_path / "good.ipynb", students.cells()).read_bytes()
    lost = write_notebook(tmp_path / "lost.ipynb", [marker, *students.cells()]).read_bytes()
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    app = make_app(Service(store, Limits(max_attempts=2, min_interval=0), grading))
    try:
        with TestClient(app) as client:
            form = sign_in(client, tokens["alice"])
            answers = []
            for data in (lost, good, good, good):
                answers.append(_upload(client, form, data))
                if answers[-1].status_code == 303:
                    _wait(store, int(answers[-1].headers["location"].rsplit("/", 1)[1]))
            assert [a.status_code for a in answers] == [303, 303, 303, 429]
            first = store.upload(1)
            assert first is not None and first.status == "problem" and not first.counts
            assert first.problem is not None and first.problem.startswith("not graded: ")
            assert "out of processes" in first.problem
            assert [u.status for u in store.history("alice")] == ["graded", "graded", "problem"]
            assert "did not use one of your attempts" in client.get("/submissions/1").text
    finally:
        store.close()


def _wait(store: Store, upload: int, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while (found := store.upload(upload)) is None or found.status not in ("graded", "problem"):
        assert time.monotonic() < deadline, f"upload {upload} not graded in {seconds} s"
        time.sleep(0.05)
