"""The gradebook: every graded submission and its per-target results, in a SQLite file (the
default) or a PostgreSQL database (`--db postgresql://…`, see grader/batch/database.py).

A submission is graded once per (content, configuration): a rerun finds it and skips it.
Submissions are written in transactions of whole submissions (a few dozen at a time, or
every half second, whichever comes first), so a batch killed at any point leaves only whole
submissions behind, and the rerun grades exactly the ones that are missing.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path

from grader.batch.database import connect, errors, is_busy, is_url, shown
from grader.batch.schema import SchemaError, check, migrate
from grader.course import versions
from grader.course.config import AssignmentSpec, Config
from grader.errors import UsageError
from grader.report import Report


@cache
def grader_version() -> str:
    """The installed grader's version with a digest of its own code ("0.1.0+3f2a9c0d1e4b"):
    part of the config hash, so a new grader regrades, and what a Dask worker must share
    with its client. The version alone stays the same from one change of the code to the
    next (a checkout, a wheel built from it): a worker on older code passed the check and
    failed every task, and a gradebook kept grades of the older grader. Read once per
    process, by the commands that grade a class (not `grader check`)."""
    package = Path(__file__).resolve().parents[1]
    return f"{versions.version('attention-grader')}+{code_digest(package)}"


def code_digest(package: Path) -> str:
    """A digest of a package's Python files, names and contents (12 hex digits)."""
    digest = hashlib.blake2b(digest_size=6)
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def config_hash(config: Config, assignments: Iterable[AssignmentSpec]) -> str:
    """Changes when anything that decides a grade changes: config, solutions, catalogues,
    the course's case builders (cases.py), the data files the notebooks read, the grader."""
    digest = hashlib.sha256(config.path.read_bytes())
    for assignment in assignments:
        builders = dict.fromkeys(t.cases.path for t in assignment.targets if t.cases is not None)
        for path in (assignment.solution, assignment.mistakes, *builders):
            if path is not None and path.exists():
                digest.update(path.read_bytes())
        for file in assignment.files:
            digest.update(file.name.encode() + b"\0")
            digest.update(file.source.read_bytes() if file.source.is_file() else b"")
    digest.update(grader_version().encode())
    return digest.hexdigest()


GROUP_SIZE = 64
GROUP_SECONDS = 0.5


class Busy(UsageError):
    """Another program holds the gradebook locked (SQLite): the file is fine; try later."""

    @classmethod
    def holding(cls, where: Path | str, exc: BaseException) -> Busy:
        """The refusal of a database file `where` that another program holds locked."""
        return cls(
            f"{shown(where)}: busy: another program holds it locked ({exc}); try again once "
            "it is done"
        )


def locked_out(exc: BaseException) -> bool:
    """Whether `exc` only says another program holds the database locked: SQLite's own
    error on a write, or Busy from opening the gradebook."""
    return is_busy(exc) or isinstance(exc, Busy)


class Gradebook:
    """The gradebook of a results folder (a SQLite file) or a PostgreSQL URL: every graded
    submission's report by student, content and config hash, written in batches; UsageError
    when it is not a gradebook this grader can use."""

    def __init__(self, path: Path | str) -> None:
        self.pending: list[tuple[str, Path, str, str, Report]] = []
        self.last_write = time.monotonic()
        self.db = connect(path)
        try:
            check(self.db, ("gradebook",))  # before anything is written
            self.db.tune("NORMAL")  # a killed batch loses at most its last group
            migrate(self.db, ("gradebook",))
        except errors(SchemaError) as exc:
            self.db.close()
            if is_busy(exc):
                raise Busy.holding(path, exc) from None
            hint = "use another database" if is_url(path) else "write to another folder"
            raise UsageError(
                f"{shown(path)}: not a gradebook this grader can use ({exc}); move it away, or "
                f"{hint}"
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
        with self.db.transaction():
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
        self.db.execute(
            "INSERT INTO students(name) VALUES (?) ON CONFLICT (name) DO NOTHING", (student,)
        )
        self.db.execute(
            "DELETE FROM ungraded WHERE student=? AND assignment IN (?, '')",
            (student, report.assignment),
        )
        # Replaced in place: two service replicas recording the same content at once
        # leave one row, not a failed transaction.
        row = self.db.execute(
            "INSERT INTO submissions(student, assignment, path, content_hash, config_hash,"
            " grader_version, graded_at, seconds, score, max_score, report)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (student, content_hash, config_hash) DO UPDATE SET"
            " assignment=excluded.assignment, path=excluded.path,"
            " grader_version=excluded.grader_version, graded_at=excluded.graded_at,"
            " seconds=excluded.seconds, score=excluded.score, max_score=excluded.max_score,"
            " report=excluded.report RETURNING id",
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
        ).fetchone()
        self.db.execute("DELETE FROM results WHERE submission=?", (row[0],))
        self.db.executemany(
            "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    row[0],
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

    def record_problem(self, student: str, assignment: str, path: Path, problem: str) -> None:
        """A submission of `assignment` ('' when not known) that could not be graded at all
        (kept until one of the student's is graded)."""
        self.flush()
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO ungraded VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (student, assignment) DO UPDATE"
                " SET path=excluded.path, problem=excluded.problem, seen_at=excluded.seen_at",
                (student, assignment, str(path), problem, time.time()),
            )

    def set_unmatched(self, assignment: str, out: str, lines: Sequence[str]) -> None:
        """What the latest batch of `assignment` into `out` could not give to a roster
        student (a line each, as `grader grade` prints it), in place of that OUT's previous
        batch's (another OUT sharing a PostgreSQL gradebook, a shard of the class, keeps its
        own); `out` empty: a gradebook of its own OUT, whose every earlier line goes (the
        folder moved or renamed since)."""
        self.flush()
        now = time.time()
        with self.db.transaction():
            if out:
                self.db.execute(
                    "DELETE FROM unmatched WHERE assignment=? AND folder=?", (assignment, out)
                )
            else:
                self.db.execute("DELETE FROM unmatched WHERE assignment=?", (assignment,))
            for line in dict.fromkeys(lines):
                self.db.execute(
                    "INSERT INTO unmatched VALUES (?, ?, ?, ?)", (assignment, out, line, now)
                )

    def unmatched(self, assignment: str) -> list[str]:
        """The lines `set_unmatched` keeps for `assignment`, of every OUT, in order."""
        self.flush()
        rows = self.db.execute(
            "SELECT DISTINCT line FROM unmatched WHERE assignment=? ORDER BY line", (assignment,)
        )
        return [str(row[0]) for row in rows]

    def assignments(self) -> list[str]:
        """The assignments the gradebook holds graded submissions of, by name."""
        self.flush()
        rows = self.db.execute("SELECT DISTINCT assignment FROM submissions ORDER BY 1")
        return [str(row[0]) for row in rows.fetchall()]

    def assignment(self, named: str | None) -> str:
        """The assignment meant: the one named, if the gradebook holds it (or holds none
        graded yet), else the only one it holds; a UsageError otherwise (a command on
        another assignment would rewrite the class's files as an empty class)."""
        held = self.assignments()
        if named is not None and (named in held or not held):  # none yet: unreadable only
            return named
        listed = ", ".join(held) or "none"
        if named is not None:
            raise UsageError(f"the gradebook holds no submission of {named} (it holds: {listed})")
        if len(held) != 1:
            raise UsageError(f"the gradebook holds {len(held)} assignments ({listed}); pass -a ID")
        return held[0]

    def latest_hashes(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(content hash, config hash) of each student's latest submission of each
        assignment, by (student, assignment)."""
        self.flush()
        rows = self.db.execute(
            "SELECT student, assignment, content_hash, config_hash FROM submissions s WHERE"
            " graded_at = (SELECT MAX(graded_at) FROM submissions t WHERE t.student ="
            " s.student AND t.assignment = s.assignment)"
        )
        return {(r[0], r[1]): (r[2], r[3]) for r in rows}

    def latest(self, assignment: str | None = None) -> list[tuple[str, Report]]:
        """Each student's most recently graded submission (of one assignment, if given)."""
        return list(self.each_latest(assignment))

    def each_latest(self, assignment: str | None = None) -> Iterator[tuple[str, Report]]:
        """As `latest`, one at a time (a large class need not be in memory all at once)."""
        self.flush()
        rows = self.db.execute(
            "SELECT student, report, assignment FROM submissions s WHERE graded_at = "
            "(SELECT MAX(graded_at) FROM submissions t WHERE t.student = s.student"
            " AND (CAST(? AS TEXT) IS NULL OR t.assignment = ?))"
            " AND (CAST(? AS TEXT) IS NULL OR assignment = ?)"
            " ORDER BY student",
            (assignment, assignment, assignment, assignment),
        )
        for row in rows:
            yield row[0], Report.from_dict(json.loads(row[1]))

    def latest_of(self, student: str, assignment: str) -> Report | None:
        """One student's most recently graded submission of an assignment (None: none)."""
        self.flush()
        row = self.db.execute(
            "SELECT report FROM submissions WHERE student = ? AND assignment = ?"
            " ORDER BY graded_at DESC LIMIT 1",
            (student, assignment),
        ).fetchone()
        return None if row is None else Report.from_dict(json.loads(row[0]))

    def names(self) -> set[str]:
        """Every student the gradebook knows, graded or not: the class whose page names
        must not clash (see render/escape.twins)."""
        self.flush()
        rows = self.db.execute("SELECT name FROM students UNION SELECT student FROM ungraded")
        return {str(row[0]) for row in rows}

    def problems(self, assignment: str | None = None) -> list[tuple[str, str]]:
        """(student, problem) for each submission recorded as not graded (see `unreadable`)."""
        return [(student, problem) for student, _, problem in self.unreadable(assignment)]

    def unreadable(self, assignment: str | None = None) -> list[tuple[str, str, str]]:
        """(student, path, problem) for each submission recorded as not graded: of
        `assignment` (and those of no known assignment), else of any, the latest of each
        student; by student."""
        self.flush()
        rows = self.db.execute(
            "SELECT student, path, problem FROM ungraded u WHERE seen_at ="
            " (SELECT MAX(seen_at) FROM ungraded v WHERE v.student = u.student"
            " AND (CAST(? AS TEXT) IS NULL OR v.assignment IN (?, '')))"
            " AND (CAST(? AS TEXT) IS NULL OR assignment IN (?, ''))"
            " ORDER BY student",
            (assignment, assignment, assignment, assignment),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def not_graded_of(self, assignment: str) -> set[str]:
        """The students with a submission of `assignment` itself (not of an unknown one)
        recorded as not graded: newer than any graded one of it (a graded one removes it)."""
        self.flush()
        rows = self.db.execute("SELECT student FROM ungraded WHERE assignment=?", (assignment,))
        return {str(row[0]) for row in rows}

    def count(self) -> int:
        """How many graded submissions the gradebook holds, queued ones included."""
        self.flush()
        return int(self.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])
