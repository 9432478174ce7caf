"""The one schema of the gradebook and the service, as one list of migrations for SQLite and
PostgreSQL alike.

Each step is idempotent (a table or index made if missing, a column added if missing), so
opening a database applies the whole list: a new database gets everything, an older one the
steps it lacks, in place. The gradebook's tables and the service's are two parts: with SQLite
they keep their two files (`gradebook.sqlite`, `serve.sqlite`) as before; on PostgreSQL both
live in one database, which the batch, `grader serve` and its replicas share.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from grader.batch.database import LOCK_CLASS, Database, connect

Part = Literal["gradebook", "service"]


@dataclass(frozen=True)
class Step:
    """One migration: `sql` (with `{id}` for the dialect's numbered id column, `{bytes}` for
    its binary type), applied when
    `column` (table, name) is missing, or always when None; `sqlite`: what SQLite runs after
    it (a backfill from its row ids); `backfill`: what both run after it (the rows an older
    version wrote). `later`: a table an earlier version's database lacks."""

    part: Part
    sql: str
    column: tuple[str, str] | None = None
    sqlite: str = ""
    later: bool = False
    backfill: str = ""


MIGRATIONS: tuple[Step, ...] = (
    Step("gradebook", "CREATE TABLE IF NOT EXISTS students (name TEXT PRIMARY KEY)"),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS submissions (
    id {id},
    student TEXT NOT NULL REFERENCES students(name),
    assignment TEXT NOT NULL,
    path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    grader_version TEXT NOT NULL,
    graded_at DOUBLE PRECISION NOT NULL,
    seconds DOUBLE PRECISION NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    max_score DOUBLE PRECISION NOT NULL,
    report TEXT NOT NULL,
    UNIQUE (student, content_hash, config_hash)
)""",
    ),
    Step(
        "gradebook",
        "CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (student, graded_at)",
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS unreadable (
    student TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    problem TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL
)""",
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS results (
    submission BIGINT NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    max_score DOUBLE PRECISION NOT NULL,
    mistakes TEXT NOT NULL,
    messages TEXT NOT NULL,
    cell INTEGER,
    line INTEGER,
    PRIMARY KEY (submission, target)
)""",
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS roster (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    section TEXT NOT NULL,
    lms_id TEXT NOT NULL,
    github TEXT NOT NULL
)""",
        later=True,
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS overrides (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    target TEXT NOT NULL,
    points DOUBLE PRECISION NOT NULL,
    comment TEXT NOT NULL,
    author TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (student, assignment, target)
)""",
        later=True,
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS comments (
    id {id},
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    comment TEXT NOT NULL,
    author TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
)""",
        later=True,
    ),
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS late (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    source TEXT NOT NULL,
    minutes DOUBLE PRECISION NOT NULL,
    percent DOUBLE PRECISION NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (student, assignment)
)""",
        later=True,
    ),
    # The roster's order, which PostgreSQL keeps no row ids for (SQLite's rosters keep theirs).
    Step(
        "gradebook",
        "ALTER TABLE roster ADD COLUMN position INTEGER NOT NULL DEFAULT 0",
        column=("roster", "position"),
        sqlite="UPDATE roster SET position = rowid",
    ),
    # The submissions not graded, by student and assignment (`unreadable`, the table before
    # it, held one per student whatever its assignment: its rows are copied here once, of
    # assignment '', counted for every assignment as they were; it is read no more).
    # `WHERE true`: SQLite reads an `ON` right after `FROM table` as a join.
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS ungraded (
    student TEXT NOT NULL,
    assignment TEXT NOT NULL,
    path TEXT NOT NULL,
    problem TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (student, assignment)
)""",
        column=("ungraded", "assignment"),  # made, and filled, once
        later=True,
        backfill="INSERT INTO ungraded SELECT student, '', path, problem, seen_at"
        " FROM unreadable WHERE true ON CONFLICT (student, assignment) DO NOTHING",
    ),
    # The submissions of the last batch that no roster student fits (or a student's second
    # one), by assignment and the batch's OUT (shards of one class share a PostgreSQL
    # gradebook): replaced by each batch with --out, shown in report.html.
    Step(
        "gradebook",
        """CREATE TABLE IF NOT EXISTS unmatched (
    assignment TEXT NOT NULL,
    folder TEXT NOT NULL,
    line TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (assignment, folder, line)
)""",
        later=True,
    ),
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS people (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('student', 'instructor')),
    token_hash TEXT UNIQUE
)""",
    ),
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS sessions (
    key_hash TEXT PRIMARY KEY,
    person TEXT REFERENCES people(id),
    csrf TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
)""",
    ),
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS uploads (
    id {id},
    student TEXT NOT NULL REFERENCES people(id),
    filename TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    received_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'graded', 'problem')),
    graded_at DOUBLE PRECISION,
    score DOUBLE PRECISION,
    max_score DOUBLE PRECISION,
    page TEXT,
    problem TEXT,
    recorded INTEGER NOT NULL DEFAULT 0
)""",
    ),
    Step("service", "CREATE INDEX IF NOT EXISTS uploads_queue ON uploads (status, id)"),
    # What pruning the sessions at each sign-in form or sign-in reads (grader/serve/store.py).
    Step("service", "CREATE INDEX IF NOT EXISTS sessions_by_created ON sessions (created)"),
    Step(
        "service",
        "CREATE INDEX IF NOT EXISTS sessions_by_person ON sessions (person, created)",
    ),
    Step("service", "CREATE INDEX IF NOT EXISTS uploads_by_student ON uploads (student, id)"),
    # An upload's bytes, on PostgreSQL: every replica reads what any one accepted (SQLite's
    # service keeps them in OUT/uploads/ as files, and leaves this table empty).
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS upload_data (
    content_hash TEXT PRIMARY KEY,
    data {bytes} NOT NULL
)""",
        later=True,
    ),
    # Which replica (server process) is grading a running upload: only it records the result,
    # and only a replica that is gone has its uploads queued again.
    Step(
        "service",
        "ALTER TABLE uploads ADD COLUMN claimed_by BIGINT",
        column=("uploads", "claimed_by"),
    ),
    # What a graded upload shows beside its whole page: the page of its public cases (before
    # the hidden cases are released) and its lateness.
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS views (
    upload BIGINT PRIMARY KEY REFERENCES uploads(id),
    assignment TEXT NOT NULL,
    public_page TEXT NOT NULL,
    public_score DOUBLE PRECISION NOT NULL,
    public_max DOUBLE PRECISION NOT NULL,
    late_percent DOUBLE PRECISION NOT NULL,
    late_note TEXT NOT NULL
)""",
        later=True,
    ),
    # The service's switches set from its pages (the hidden cases' release).
    Step(
        "service",
        "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        later=True,
    ),
    # LTI 1.3 logins' and launches' short-lived states and nonces.
    Step(
        "service",
        """CREATE TABLE IF NOT EXISTS lti (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires DOUBLE PRECISION
)""",
        later=True,
    ),
    # What pruning them at each LTI login reads (grader/serve/store.py).
    Step("service", "CREATE INDEX IF NOT EXISTS lti_by_expiry ON lti (expires)"),
    # Whether an upload uses one of its student's attempts: not when the service could not
    # grade it for a fault of its own (older versions' such uploads wrote "not graded: " or
    # "could not be graded (grader fault: ").
    Step(
        "service",
        "ALTER TABLE uploads ADD COLUMN counts INTEGER NOT NULL DEFAULT 1",
        column=("uploads", "counts"),
        backfill="UPDATE uploads SET counts = 0 WHERE status = 'problem'"
        " AND (substr(problem, 1, 12) = 'not graded: '"
        " OR substr(problem, 1, 35) = 'could not be graded (grader fault: ')",
    ),
)


class SchemaError(Exception):
    """The database holds tables that are not (an earlier version of) ours."""


@cache
def final_tables() -> dict[str, list[str]]:
    """Each table's columns once every migration has run (as SQLite makes them)."""
    db = connect(":memory:")
    db.tune("NORMAL")
    migrate(db, ("gradebook", "service"))
    return {table: db.columns(table) for table in db.tables()}


def part_tables(part: Part) -> set[str]:
    """The tables this part's migrations make (the service's, or the gradebook's)."""
    return {_table(s) for s in MIGRATIONS if s.part == part} - {""}


def _table(step: Step) -> str:
    words = step.sql.split()
    return words[5].split("(")[0] if words[:2] == ["CREATE", "TABLE"] else ""


def check(db: Database, parts: tuple[Part, ...]) -> None:
    """An empty database, or one with our tables (each part's first tables at least, each
    table's columns as an earlier version made them: the first ones of today's); anything
    else is refused before a byte of it is changed."""
    present = db.tables()
    if not present:
        return
    tables = final_tables()
    if not set(present) <= set(tables):
        raise SchemaError(f"it holds the tables {', '.join(present)}")
    for part in parts:
        base = {_table(s) for s in MIGRATIONS if s.part == part and not s.later} - {""}
        mine = {_table(s) for s in MIGRATIONS if s.part == part} & set(present)
        if mine and not base <= set(present):
            raise SchemaError(f"it holds the tables {', '.join(present)}")
    for table in present:
        found = db.columns(table)
        if found != tables[table][: len(found)]:
            raise SchemaError(f"its table {table} has the columns {', '.join(found)}")


def migrate(db: Database, parts: tuple[Part, ...]) -> None:
    """Apply the migrations of these parts that the database lacks, in one transaction (on
    PostgreSQL under a lock: replicas starting together migrate once)."""
    with db.transaction():
        if db.dialect == "postgresql":
            db.execute("SELECT pg_advisory_xact_lock(?, 0)", (LOCK_CLASS,))
        for step in MIGRATIONS:
            if step.part not in parts:
                continue
            if step.column is not None and step.column[1] in db.columns(step.column[0]):
                continue
            db.execute(step.sql.replace("{id}", db.id_column).replace("{bytes}", db.bytes_type))
            if step.sqlite and db.dialect == "sqlite":
                db.execute(step.sqlite)
            if step.backfill:
                db.execute(step.backfill)
