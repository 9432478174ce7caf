"""One schema and one list of migrations for SQLite and PostgreSQL (grader/batch/schema.py):
gradebooks and service databases of earlier versions open in place, keeping what they hold;
PostgreSQL makes the same tables as SQLite; two stores on one database never take the same
queued upload."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from grader.batch.gradebook import Gradebook
from grader.batch.records import save_roster, stored_roster
from grader.batch.roster import Student as RosterStudent
from grader.batch.schema import final_tables, part_tables
from grader.serve.store import Store

from serving import issue

# The gradebook and serve.sqlite as the grader made them before the migrations (copied as
# they were, so that these tests keep meaning the same when the schema moves on).
GRADEBOOK_0_1 = """
CREATE TABLE IF NOT EXISTS students (
    name TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL REFERENCES students(name),
    assignment TEXT NOT NULL,
    path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    grader_version TEXT NOT NULL,
    graded_at REAL NOT NULL,
    seconds REAL NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    report TEXT NOT NULL,
    UNIQUE (student, content_hash, config_hash)
);
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (student, graded_at);
CREATE TABLE IF NOT EXISTS unreadable (
    student TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    problem TEXT NOT NULL,
    seen_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    mistakes TEXT NOT NULL,
    messages TEXT NOT NULL,
    cell INTEGER,
    line INTEGER,
    PRIMARY KEY (submission, target)
);
CREATE TABLE IF NOT EXISTS roster (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    section TEXT NOT NULL,
    lms_id TEXT NOT NULL,
    github TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS overrides (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    target TEXT NOT NULL,
    points REAL NOT NULL,
    comment TEXT NOT NULL,
    author TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (student, assignment, target)
);
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    comment TEXT NOT NULL,
    author TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS late (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    source TEXT NOT NULL,
    minutes REAL NOT NULL,
    percent REAL NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (student, assignment)
);
"""

SERVICE_0_1 = """
CREATE TABLE IF NOT EXISTS people (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('student', 'instructor')),
    token_hash TEXT UNIQUE
);
CREATE TABLE IF NOT EXISTS sessions (
    key_hash TEXT PRIMARY KEY,
    person TEXT REFERENCES people(id),
    csrf TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL REFERENCES people(id),
    filename TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    received_at REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'graded', 'problem')),
    graded_at REAL,
    score REAL,
    max_score REAL,
    page TEXT,
    problem TEXT,
    recorded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS uploads_queue ON uploads (status, id);
CREATE INDEX IF NOT EXISTS uploads_by_student ON uploads (student, id);
"""

BEFORE_ROSTER = GRADEBOOK_0_1.split("CREATE TABLE IF NOT EXISTS roster")[0]


def make_sqlite(path: Path, schema: str, *statements: str) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(schema)
        for statement in statements:
            db.execute(statement)
    db.close()
    return path


def columns(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        found = {t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")] for t in tables}
    db.close()
    return found


def test_a_gradebook_from_before_the_roster_gains_its_tables_in_place(tmp_path: Path) -> None:
    path = make_sqlite(
        tmp_path / "gradebook.sqlite", BEFORE_ROSTER, "INSERT INTO students VALUES ('ada')"
    )
    assert "roster" not in columns(path)
    book = Gradebook(path)
    assert [r[0] for r in book.db.execute("SELECT name FROM students")] == ["ada"]
    book.close()
    service = part_tables("service")
    assert {"people", "uploads", "views"} <= service
    wanted = {t: c for t, c in final_tables().items() if t not in service}
    assert columns(path) == wanted


def test_an_older_roster_keeps_its_order_once_it_has_a_position(tmp_path: Path) -> None:
    rows = [("zoe", "Zoe"), ("ada", "Ada"), ("mia", "Mia")]  # not in alphabetical order
    inserts = [f"INSERT INTO roster VALUES ('{i}', '{n}', '', '', '', '')" for i, n in rows]
    path = make_sqlite(tmp_path / "gradebook.sqlite", GRADEBOOK_0_1, *inserts)
    assert "position" not in columns(path)["roster"]
    book = Gradebook(path)
    assert [s.id for s in stored_roster(book) or []] == ["zoe", "ada", "mia"]
    assert "position" in book.db.columns("roster")
    save_roster(book, [RosterStudent("mia", "Mia", "", "", "", ""), *stored_roster(book)[:2]])  # type: ignore[index]
    assert [s.id for s in stored_roster(book) or []] == ["mia", "zoe", "ada"]
    book.close()
    Gradebook(path).close()  # opened again: nothing left to migrate, nothing refused


def test_an_older_gradebooks_unreadable_rows_are_ungraded_of_every_assignment(
    tmp_path: Path,
) -> None:
    path = make_sqlite(
        tmp_path / "gradebook.sqlite",
        GRADEBOOK_0_1,
        "INSERT INTO unreadable VALUES ('ada', 'ada.ipynb', 'not valid JSON', 1.0)",
    )
    book = Gradebook(path)
    # of no known assignment: counted for each one, as the older version counted it
    assert book.unreadable("masked_attention") == [("ada", "ada.ipynb", "not valid JSON")]
    assert book.unreadable("udl_12_1") == [("ada", "ada.ipynb", "not valid JSON")]
    book.record_problem("bo", "udl_12_1", Path("bo.ipynb"), "empty")
    book.db.execute("DELETE FROM ungraded WHERE student='ada'")  # as her grade would
    book.close()
    book = Gradebook(path)  # opened again: copied once, so ada's old row stays gone
    assert book.unreadable() == [("bo", "bo.ipynb", "empty")]
    book.close()


def test_an_older_service_database_keeps_its_queue(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    upload = (
        "INSERT INTO uploads (student, filename, content_hash, size, received_at, status)"
        " VALUES ('alice', 'a.ipynb', 'abc', 3, 1.0, '{}')"
    )
    make_sqlite(
        out / "serve.sqlite",
        SERVICE_0_1,
        "INSERT INTO people VALUES ('alice', 'Alice', 'student', NULL)",
        upload.format("running"),  # a server stopped mid-grading
        upload.format("queued"),
    )
    store = Store(out)
    assert store.db.columns("uploads") == final_tables()["uploads"]
    assert store.requeue_running() == 1
    assert [u.id for u in store.claim(5)] == [1, 2]
    assert store.finish(1, 1.0, 1.0, "page", "") and not store.finish(1, 1.0, 1.0, "page", "")
    store.close()


@pytest.mark.postgres
def test_postgresql_makes_the_tables_sqlite_makes(postgres_url: str) -> None:
    book, store = Gradebook(postgres_url), Store(Path("unused"), postgres_url)
    try:
        found = {t: book.db.columns(t) for t in book.db.tables()}
        assert found == final_tables()
        assert Gradebook(postgres_url).db.tables() == sorted(final_tables())  # idempotent
    finally:
        book.close()
        store.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """The service's database: serve.sqlite in the output folder, or a PostgreSQL one."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("postgres_url"))


def test_two_stores_never_claim_one_upload(tmp_path: Path, database: str | None) -> None:
    first = Store(tmp_path / "out", database)
    second = Store(tmp_path / "out", database)
    issue(first)
    accepted = [first.accept("alice", f"{i}.ipynb", b"%d" % i) for i in range(80)]
    taken: dict[str, list[int]] = {"first": [], "second": []}
    start = threading.Barrier(2)

    def take(name: str, store: Store) -> None:
        start.wait()
        while claimed := store.claim(2):
            taken[name] += [u.id for u in claimed]
            assert {u.status for u in claimed} == {"running"}
            time.sleep(0.002)  # as grading would: the other store's turn

    threads = [
        threading.Thread(target=take, args=item)
        for item in zip(taken, (first, second), strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not set(taken["first"]) & set(taken["second"])
    assert sorted(taken["first"] + taken["second"]) == accepted
    assert taken["first"] and taken["second"]  # both took some: they ran at the same time
    mine, theirs = taken["first"][0], taken["second"][0]
    assert not first.finish(theirs, 1.0, 1.0, "", "")  # only the store that took it records
    assert first.finish(mine, 1.0, 1.0, "", "") and second.finish(theirs, 1.0, 1.0, "", "")
    assert first.upload(mine).recorded == 1  # type: ignore[union-attr]
    first.close()
    second.close()


@pytest.mark.postgres
def test_a_gone_replicas_uploads_go_back_to_the_queue_and_a_live_ones_stay(
    tmp_path: Path, postgres_url: str
) -> None:
    gone, alive, survivor = (Store(tmp_path / n, postgres_url) for n in ("a", "b", "c"))
    issue(gone)
    accepted = [gone.accept("bob", f"{i}.ipynb", b"%d" % i) for i in range(4)]
    taken_by_gone = [u.id for u in gone.claim(2)]
    taken_by_alive = [u.id for u in alive.claim(1)]
    assert survivor.requeue_orphans() == 0  # both replicas are alive
    gone.close()  # its connection, and so its lock, is gone: as when its process is killed
    requeued, deadline = 0, time.monotonic() + 10
    while not requeued and time.monotonic() < deadline:  # the server ends its session soon after
        requeued = survivor.requeue_orphans()
        time.sleep(0.02)
    assert requeued == 2
    assert survivor.requeue_running() == 0  # a start on PostgreSQL: only the orphans
    again = [u.id for u in survivor.claim(5)]
    assert sorted(again) == sorted(set(accepted) - set(taken_by_alive))
    assert set(taken_by_gone) <= set(again)
    assert alive.finish(taken_by_alive[0], 1.0, 1.0, "", "")
    alive.close()
    survivor.close()


def test_an_upload_released_by_its_store_is_queued_again(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "out"), Store(tmp_path / "out")
    issue(first)
    upload = first.accept("alice", "a.ipynb", b"{}")
    assert [u.id for u in first.claim(1)] == [upload]
    assert not second.release(upload)  # not the store that took it
    assert first.release(upload) and not first.release(upload)
    assert [u.id for u in second.claim(1)] == [upload]
    first.close()
    second.close()


def test_a_gradebook_another_program_holds_locked_is_busy_not_damaged(tmp_path: Path) -> None:
    # It was "not a gradebook this grader can use (database is locked); move it away": a
    # healthy file, which the instructor was told to move; the student's feedback page
    # (its instructor's notes) was a 500.
    from grader.batch.gradebook import Busy
    from grader.serve.semester import NOTES_BUSY, instructor_notes

    path = tmp_path / "gradebook.sqlite"
    Gradebook(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Busy) as refused:
            Gradebook(path)
        assert str(refused.value) == (
            f"{path}: busy: another program holds it locked (database is locked); try again "
            "once it is done"
        )
        assert instructor_notes(path, "ada", "self_attention") == [NOTES_BUSY]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert instructor_notes(path, "ada", "self_attention") == []


def test_the_services_database_another_program_holds_locked_is_busy_not_foreign(
    tmp_path: Path,
) -> None:
    # `grader serve` and `serve tokens` said "not the service's database (database is
    # locked)" of their own healthy serve.sqlite.
    from grader.batch.gradebook import Busy
    from grader.serve.store import Store

    Store(tmp_path).close()
    holder = sqlite3.connect(tmp_path / "serve.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Busy, match=r"serve\.sqlite: busy: another program holds it locked"):
            Store(tmp_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    Store(tmp_path).close()


def test_the_config_hash_changes_with_the_case_builders_and_the_graders_code(
    tmp_path: Path,
) -> None:
    # r46: editing cases.py (a builder the config names) kept every grade ("3 unchanged"),
    # and a worker or gradebook of older grader code had the same version "0.1.0".
    import json
    import shutil

    from grader.batch.gradebook import code_digest, config_hash, grader_version
    from grader.course.config import load_config

    from conftest import REPO, repo_config_raw

    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions", course / "solutions")
    shutil.copy(REPO / "cases.py", course / "cases.py")
    raw = repo_config_raw()
    raw["cases"] = "cases.py"
    (course / "config.yaml").write_text(json.dumps(raw))

    def hashed() -> str:
        config = load_config(course / "config.yaml")
        return config_hash(config, [config.assignment("self_attention")])

    before = hashed()
    assert hashed() == before  # nothing changed: nothing regraded
    with (course / "cases.py").open("a") as handle:
        handle.write("\nSCALE = 1000.0\n")
    assert hashed() != before

    package = REPO / "grader"
    copy = tmp_path / "grader"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert code_digest(copy) == code_digest(package)
    with (copy / "engine.py").open("a") as handle:
        handle.write("\n# changed\n")
    assert code_digest(copy) != code_digest(package)
    assert grader_version().endswith(f"+{code_digest(package)}")


def test_each_shard_of_a_class_keeps_its_own_set_aside_submissions(
    tmp_path: Path, database: str | None
) -> None:
    """Two sections graded into two OUTs with one PostgreSQL gradebook: the second batch's
    list of submissions no roster student fits replaced the first's (r56)."""
    book = Gradebook(database or tmp_path / "gradebook.sqlite")
    try:
        book.set_unmatched("hw", "/outA", ["stranger_a: matches no student"])
        book.set_unmatched("hw", "/outB", ["stranger_b: matches no student"])
        book.set_unmatched("other", "/outA", ["x: matches no student"])
        assert book.unmatched("hw") == [
            "stranger_a: matches no student",
            "stranger_b: matches no student",
        ]
        book.set_unmatched("hw", "/outA", [])  # section A's stranger added to the roster
        assert book.unmatched("hw") == ["stranger_b: matches no student"]
        assert book.unmatched("other") == ["x: matches no student"]
        book.set_unmatched("other", "", ["y: matches no student"])  # OUT's own gradebook
        assert book.unmatched("other") == ["y: matches no student"]  # /outA's, moved since
    finally:
        book.close()
