"""The SQLite gradebook: every graded submission and its per-target results.

A submission is graded once per (content, configuration): a rerun finds it and skips it.
Submissions are written in transactions of whole submissions (a few dozen at a time, or
every half second, whichever comes first), so a batch killed at any point leaves only whole
submissions behind, and the rerun grades exactly the ones that are missing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

from grader.course.config import AssignmentSpec, Config
from grader.errors import UsageError
from grader.report import Report

SCHEMA = """
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
# Tables a gradebook of an earlier version lacks: added in place when it is opened.
ADDED_LATER = ("roster", "overrides", "comments", "late")


@cache
def grader_version() -> str:
    """The installed grader's version, or "unknown" outside an installed package; part of the config
    hash, so a new grader regrades."""
    try:
        return metadata.version("attention-grader")
    except metadata.PackageNotFoundError:
        return "unknown"


def config_hash(config: Config, assignments: Iterable[AssignmentSpec]) -> str:
    """Changes when anything that decides a grade changes: config, solutions, catalogues,
    the data files the notebooks read."""
    digest = hashlib.sha256(config.path.read_bytes())
    for assignment in assignments:
        for path in (assignment.solution, assignment.mistakes):
            if path is not None and path.exists():
                digest.update(path.read_bytes())
        for file in assignment.files:
            digest.update(file.name.encode() + b"\0")
            digest.update(file.source.read_bytes() if file.source.is_file() else b"")
    digest.update(grader_version().encode())
    return digest.hexdigest()


@cache
def _tables() -> dict[str, list[str]]:
    """Each table's columns, as SCHEMA makes them."""
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    return {table: _columns(db, table) for table in _table_names(db)}


def _table_names(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return sorted(str(row[0]) for row in rows)


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")]


def _check_tables(db: sqlite3.Connection) -> None:
    """An empty file, or one with our tables and columns (an earlier version's gradebook
    may lack the tables added later: they are added); anything else (another program's
    database, not SQLite at all) is refused before a byte of it is changed."""
    present = _table_names(db)
    if not present:
        return
    older = sorted(set(_tables()) - set(ADDED_LATER))
    if not set(older) <= set(present) <= set(_tables()):
        raise sqlite3.DatabaseError(f"it holds the tables {', '.join(present)}")
    for table in present:
        columns, found = _tables()[table], _columns(db, table)
        if found != columns:
            raise sqlite3.DatabaseError(f"its table {table} has the columns {', '.join(found)}")


GROUP_SIZE = 64
GROUP_SECONDS = 0.5


class Gradebook:
    """The SQLite gradebook of a results folder: every graded submission's report by student,
    content and config hash, written in batches; UsageError when the file is not a gradebook this
    grader can use."""

    def __init__(self, path: Path) -> None:
        self.pending: list[tuple[str, Path, str, str, Report]] = []
        self.last_write = time.monotonic()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)
        try:
            _check_tables(self.db)  # before anything is written
            self.db.execute("PRAGMA journal_mode=WAL")
            # Safe against a killed process (what resuming needs); skips an fsync per submission.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise UsageError(
                f"{path}: not a gradebook this grader can use ({exc}); move it away, or "
                "write to another folder"
            ) from None

    def close(self) -> None:
        """Write what is queued, then close the database."""
        self.flush()
        self.db.close()

    def graded_students(self, config: str) -> set[str]:
        """The students with at least one submission graded under this configuration."""
        self.flush()
        rows = self.db.execute(
            "SELECT DISTINCT student FROM submissions WHERE config_hash=?", (config,)
        )
        return {row[0] for row in rows}

    def find(self, student: str, content: str, config: str) -> Report | None:
        """The stored report for this student's submission with this content and config hash, or
        None: what lets an unchanged submission be skipped."""
        self.flush()
        row = self.db.execute(
            "SELECT report FROM submissions WHERE student=? AND content_hash=? AND config_hash=?",
            (student, content, config),
        ).fetchone()
        return Report.from_dict(json.loads(row[0])) if row else None

    def record(self, student: str, path: Path, content: str, config: str, report: Report) -> None:
        """Queue a graded submission; written with the next group (see `flush`)."""
        self.pending.append((student, path, content, config, report))
        if len(self.pending) >= GROUP_SIZE or time.monotonic() - self.last_write > GROUP_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the queued submissions in one transaction: all of them, or none."""
        self.last_write = time.monotonic()
        if not self.pending:
            return
        with self.db:
            self.db.execute("BEGIN")
            for entry in self.pending:
                self._insert(*entry)
        self.pending.clear()

    def _insert(self, student: str, path: Path, content: str, config: str, report: Report) -> None:
        data = report.to_dict()
        for target, result in zip(data["targets"], report.targets, strict=True):
            target.update(
                cases_passed=result.cases_passed,
                cases_total=result.cases_total,
                case_outcomes=list(result.case_outcomes),
            )
        self.db.execute("INSERT OR IGNORE INTO students(name) VALUES (?)", (student,))
        self.db.execute("DELETE FROM unreadable WHERE student=?", (student,))
        self.db.execute(
            "DELETE FROM submissions WHERE student=? AND content_hash=? AND config_hash=?",
            (student, content, config),
        )
        cursor = self.db.execute(
            "INSERT INTO submissions(student, assignment, path, content_hash, config_hash,"
            " grader_version, graded_at, seconds, score, max_score, report)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                student,
                report.assignment,
                str(path),
                content,
                config,
                grader_version(),
                time.time(),
                report.seconds,
                report.score,
                report.max_score,
                json.dumps(data),
            ),
        )
        self.db.executemany(
            "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    cursor.lastrowid,
                    t.name,
                    t.status,
                    t.score,
                    t.max_score,
                    json.dumps(list(t.mistakes)),
                    json.dumps(list(t.messages)),
                    t.location.cell if t.location else None,
                    t.location.line if t.location else None,
                )
                for t in report.targets
            ],
        )

    def record_problem(self, student: str, path: Path, problem: str) -> None:
        """A submission that could not be graded at all (kept until it can be)."""
        self.flush()
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute(
                "INSERT OR REPLACE INTO unreadable VALUES (?, ?, ?, ?)",
                (student, str(path), problem, time.time()),
            )

    def latest(self, assignment: str | None = None) -> list[tuple[str, Report]]:
        """Each student's most recently graded submission (of one assignment, if given)."""
        return list(self.each_latest(assignment))

    def each_latest(self, assignment: str | None = None) -> Iterator[tuple[str, Report]]:
        """As `latest`, one at a time (a large class need not be in memory all at once)."""
        self.flush()
        rows = self.db.execute(
            "SELECT student, report, assignment FROM submissions s WHERE graded_at = "
            "(SELECT MAX(graded_at) FROM submissions t WHERE t.student = s.student"
            " AND (? IS NULL OR t.assignment = ?)) AND (? IS NULL OR assignment = ?)"
            " ORDER BY student",
            (assignment, assignment, assignment, assignment),
        )
        for row in rows:
            yield row[0], Report.from_dict(json.loads(row[1]))

    def problems(self) -> list[tuple[str, str]]:
        """(student, problem) for each submission recorded as unreadable."""
        self.flush()
        return [(r[0], r[1]) for r in self.db.execute("SELECT student, problem FROM unreadable")]

    def count(self) -> int:
        """How many graded submissions the gradebook holds, queued ones included."""
        self.flush()
        return int(self.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])
