"""The service's storage in its output folder: `serve.sqlite` (people, sessions, uploads and
their queue) and `uploads/<sha256>` (each upload's bytes, named by their hash). With `--db
postgresql://…` the tables are in that database instead, beside the gradebook's, and several
replicas share them: each takes queued uploads with row locks that the others skip, and
records only the uploads it took (grader/batch/schema.py holds the tables).

An upload's bytes are on disk (fsync'd) and its row committed before the student gets an
answer; the queue is the `uploads` table, so a server killed at any point finds every
accepted upload again on restart. A result is written in the same transaction that marks its
upload graded, and only for an upload still running: each upload is recorded once.

Every accepted upload uses one of its student's attempts (`counts`), except one the service
could not grade for a fault of its own: that one stops counting toward the attempt limit and
the least interval between uploads once its result says so, and never counts again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any, Literal

from grader.batch.database import LOCK_CLASS, Database, connect, errors, shown
from grader.batch.schema import SchemaError, check, migrate
from grader.errors import UsageError
from grader.render.escape import folded
from grader.serve.lookalike import described, skeleton
from grader.serve.roster import Student
from grader.serve.tokens import new_token, same_hash, token_hash

Role = Literal["student", "instructor"]
Status = Literal["queued", "running", "graded", "problem"]

SESSION_SECONDS = 14 * 24 * 3600
ANONYMOUS_SECONDS = 3600  # a sign-in form's session, before anyone signed in
# Whatever is sent, the sessions table stays bounded: requests without a cookie each start a
# sign-in form's session, of which the newest ANONYMOUS_LIMIT are kept (under a flood the
# oldest forms go first and say "reload the page"); one person keeps their newest
# SESSIONS_PER_PERSON (browsers), the oldest being signed out.
ANONYMOUS_LIMIT = 10_000
SESSIONS_PER_PERSON = 20

# What the pruning at each new session reads, through the indexes on sessions (created) and
# (person, created): the expired sessions, then when the anonymous sessions, or one person's,
# pass their limit, the creation time of the newest one past it (SQLite and PostgreSQL alike).
_SESSIONS_EXPIRED = "DELETE FROM sessions WHERE created < ? OR (person IS NULL AND created < ?)"
_SESSIONS_ANONYMOUS_CUTOFF = (
    "SELECT created FROM sessions WHERE person IS NULL ORDER BY created DESC LIMIT 1 OFFSET ?"
)
_SESSIONS_PERSON_CUTOFF = (
    "SELECT created FROM sessions WHERE person = ? ORDER BY created DESC LIMIT 1 OFFSET ?"
)
# The same for LTI logins' states and nonces, which anyone may start (each kept a day, as
# PyLTI1p3 asks): the LTI_LIMIT expiring last are kept, a flood's oldest going first.
LTI_LIMIT = 10_000
_LTI_EXPIRED = "DELETE FROM lti WHERE expires < ?"
_LTI_CUTOFF = "SELECT expires FROM lti ORDER BY expires DESC LIMIT 1 OFFSET ?"


@dataclass(frozen=True)
class Person:
    """Someone who may sign in."""

    id: str
    name: str
    role: Role


@dataclass(frozen=True)
class Session:
    """A browser's session: who signed in (None: nobody yet) and its CSRF token."""

    person: Person | None
    csrf: str


@dataclass(frozen=True)
class Upload:
    """One accepted upload and where it stands."""

    id: int
    student: str
    filename: str
    content_hash: str
    received_at: float
    status: Status
    score: float | None
    max_score: float | None
    problem: str | None
    recorded: int
    counts: bool = True  # uses an attempt: not when the service failed to grade it


@dataclass(frozen=True)
class View:
    """What a graded upload shows beside its whole page: its assignment, the page of its
    public cases (what a student reads before the hidden cases are released) and its
    lateness (the penalty in percent and one line saying why)."""

    assignment: str
    public_page: str
    public_score: float
    public_max: float
    late_percent: float = 0.0
    late_note: str = ""


_UPLOAD_COLUMNS = (
    "id, student, filename, content_hash, received_at, status, score, max_score, problem, recorded,"
    " counts"
)


def _upload(row: Sequence[Any]) -> Upload:
    """An upload from a row of _UPLOAD_COLUMNS (`counts` is an integer in the database)."""
    values = [*row[:-1], bool(row[-1])]
    return Upload(*values)


class Store:
    """serve.sqlite (or the PostgreSQL database `database`) and the uploads folder. One
    connection, shared by the web handlers and the grading thread under a lock (every
    statement is short)."""

    def __init__(self, out: Path, database: str | None = None) -> None:
        self.out = out
        self.blobs = out / "uploads"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.database = database
        # This process's mark on the uploads it takes (a replica among several, on PostgreSQL).
        self.replica = secrets.randbelow(2**31 - 1) + 1
        target = database or out / "serve.sqlite"
        self.db: Database = connect(target)
        try:
            check(self.db, ("service",))
            self.db.tune("FULL")  # committed means on disk
            migrate(self.db, ("service",))
            if self.db.dialect == "postgresql":  # held while this replica lives
                self.db.execute("SELECT pg_advisory_lock(?, ?)", (LOCK_CLASS, self.replica))
        except errors(SchemaError) as exc:
            self.db.close()
            raise UsageError(f"{shown(target)}: not the service's database ({exc})") from None

    def gradebook(self) -> Path | str:
        """Where the service's gradebook is: beside serve.sqlite, or the same database."""
        return self.database or self.out / "gradebook.sqlite"

    def close(self) -> None:
        """Close the database."""
        with self.lock:
            self.db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Database]:
        with self.lock, self.db.transaction() as db:
            yield db

    # --- people and tokens ---------------------------------------------------------------

    def issue(self, people: list[Student], role: Role) -> list[tuple[Student, str]]:
        """New tokens for these people (added when new; an old token stops working). An id
        that looks like another's already here (not the same but for case) is a UsageError."""
        issued = [(p, new_token()) for p in people]
        with self._transaction() as db:
            # An id that looks like someone's already here (grader/serve/lookalike.py) would
            # be a second account the class page shows the same: refused, nothing issued.
            known = {
                skeleton(str(row[0])): str(row[0]) for row in db.execute("SELECT id FROM people")
            }
            for person, _ in issued:
                other = known.setdefault(skeleton(person.id), person.id)
                if folded(other) != folded(person.id):
                    raise UsageError(f"{described((other, person.id))} ({other!a} has a token)")
            for person, token in issued:
                row = db.execute("SELECT role FROM people WHERE id=?", (person.id,)).fetchone()
                if row is not None and row[0] != role:
                    raise UsageError(f"{person.id} is already a {row[0]}, not a {role}")
                db.execute(
                    "INSERT INTO people VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "name=excluded.name, token_hash=excluded.token_hash",
                    (person.id, person.name, role, token_hash(token)),
                )
                db.execute("DELETE FROM sessions WHERE person=?", (person.id,))
        return issued

    def revoke(self, ids: Sequence[str]) -> list[Person]:
        """Revoke these people's tokens (ids matched as the roster matches them: case and
        Unicode form aside): their links and tokens stop signing in and their sessions end,
        until `issue` gives them new ones; their uploads stay. Any id unknown: UsageError,
        and nobody's token is revoked."""
        with self._transaction() as db:
            rows = db.execute("SELECT id, name, role FROM people").fetchall()
            known = {folded(str(row[0])): Person(*row) for row in rows}
            unknown = [i for i in ids if folded(i) not in known]
            if unknown:
                raise UsageError(
                    f"--revoke {unknown[0]}: nobody of that id was ever issued a token here"
                )
            people = list({folded(i): known[folded(i)] for i in ids}.values())
            for person in people:
                db.execute("UPDATE people SET token_hash=NULL WHERE id=?", (person.id,))
                db.execute("DELETE FROM sessions WHERE person=?", (person.id,))
        return people

    def person_for_token(self, token: str) -> Person | None:
        """Who this token signs in, if anyone. The spaces and line ends around it are not
        part of it (a token never holds any): they come with a token copied from a mail."""
        token = token.strip()
        wanted = token_hash(token)
        with self.lock:
            row = self.db.execute(
                "SELECT id, name, role, token_hash FROM people WHERE token_hash=?", (wanted,)
            ).fetchone()
        if row is None or not same_hash(row[3], token):
            return None
        return Person(row[0], row[1], row[2])

    def people(self, role: Role) -> list[Person]:
        """Everyone of a role, by id."""
        with self.lock:
            rows = self.db.execute(
                "SELECT id, name, role FROM people WHERE role=? ORDER BY id", (role,)
            ).fetchall()
        return [Person(*row) for row in rows]

    def person(self, person_id: str) -> Person | None:
        """One person by id."""
        with self.lock:
            row = self.db.execute(
                "SELECT id, name, role FROM people WHERE id=?", (person_id,)
            ).fetchone()
        return Person(*row) if row else None

    def revoked(self, person_id: str) -> bool:
        """Whether this person's token was revoked and none issued since: they sign in by no
        route (a link, a token, an LTI launch) until `issue` gives them a new one."""
        with self.lock:
            row = self.db.execute(
                "SELECT token_hash FROM people WHERE id=?", (person_id,)
            ).fetchone()
        return row is not None and row[0] is None

    # --- sessions ------------------------------------------------------------------------

    def new_session(self, person: Person | None) -> str:
        """A session (signed in as `person`, or nobody yet); returns the cookie's value. The
        expired sessions go, and the oldest of those past their limit (module constants)."""
        key, now = new_token(), time.time()
        with self._transaction() as db:
            db.execute(_SESSIONS_EXPIRED, (now - SESSION_SECONDS, now - ANONYMOUS_SECONDS))
            whose: tuple[str, ...] = (person.id,) if person else ()
            if person is None:
                found = db.execute(_SESSIONS_ANONYMOUS_CUTOFF, (ANONYMOUS_LIMIT - 1,))
            else:
                found = db.execute(_SESSIONS_PERSON_CUTOFF, (*whose, SESSIONS_PER_PERSON - 1))
            cutoff = found.fetchone()
            if cutoff is not None:  # room for this one: the oldest past the limit go
                where = "person = ?" if person else "person IS NULL"
                db.execute(
                    f"DELETE FROM sessions WHERE {where} AND created <= ?", (*whose, cutoff[0])
                )
            db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?)",
                (token_hash(key), person.id if person else None, new_token(), now),
            )
        return key

    def session(self, key: str) -> Session | None:
        """The session a cookie names, if it exists and has not expired."""
        with self.lock:
            row = self.db.execute(
                "SELECT s.csrf, s.created, p.id, p.name, p.role FROM sessions s "
                "LEFT JOIN people p ON p.id = s.person WHERE s.key_hash=?",
                (token_hash(key),),
            ).fetchone()
        age = time.time() - row[1] if row is not None else 0.0
        if row is None or age > (SESSION_SECONDS if row[2] is not None else ANONYMOUS_SECONDS):
            return None  # expired, if not pruned yet
        person = Person(row[2], row[3], row[4]) if row[2] is not None else None
        return Session(person, row[0])

    def end_session(self, key: str) -> None:
        """Sign out."""
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE key_hash=?", (token_hash(key),))

    # --- uploads and the queue ------------------------------------------------------------

    def blob(self, content: str) -> Path:
        """Where an upload's bytes are: named by their hash, never by the student's name."""
        return self.blobs / content

    def read(self, content: str) -> bytes:
        """An upload's bytes, by their hash: from OUT/uploads/, or from PostgreSQL, where
        every replica finds them (OSError when they are not there)."""
        if self.db.dialect == "sqlite":
            return self.blob(content).read_bytes()
        with self.lock:
            row = self.db.execute(
                "SELECT data FROM upload_data WHERE content_hash=?", (content,)
            ).fetchone()
        if row is None:
            raise OSError(2, "not in the database")
        return bytes(row[0])

    def accept(
        self,
        student: str,
        filename: str,
        data: bytes,
        max_attempts: int | None = None,
        min_interval: float = 0.0,
    ) -> int | None:
        """Keep an upload: its bytes on disk (on PostgreSQL: in the row's transaction), then
        its row in the queue, both durable before this returns its id. None: the student's
        attempt or rate limit, checked in the same transaction (two uploads at once cannot
        both slip under it) over the uploads that count."""
        content = hashlib.sha256(data).hexdigest()
        shared = self.db.dialect == "postgresql"  # the bytes go in with the row, below
        path = self.blob(content)
        if not shared and not path.exists():
            scratch = path.with_name(f".{content}.{os.getpid()}.{threading.get_ident()}")
            with scratch.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(scratch, path)
            folder = os.open(self.blobs, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        with self._transaction() as db:
            if shared:  # replicas take their turns at one student's limit, as SQLite's lock does
                db.execute("SELECT 1 FROM people WHERE id=? FOR UPDATE", (student,))
            count, last = db.execute(
                "SELECT COUNT(*), MAX(received_at) FROM uploads WHERE student=? AND counts=1",
                (student,),
            ).fetchone()
            if max_attempts is not None and count >= max_attempts:
                return None
            if last is not None and time.time() - last < min_interval:
                return None
            if shared:
                db.execute(
                    "INSERT INTO upload_data VALUES (?, ?) ON CONFLICT (content_hash) DO NOTHING",
                    (content, data),
                )
            row = db.execute(
                "INSERT INTO uploads (student, filename, content_hash, size, received_at, status)"
                " VALUES (?, ?, ?, ?, ?, 'queued') RETURNING id",
                (student, filename, content, len(data), time.time()),
            ).fetchone()
        return int(row[0])

    def requeue_running(self) -> int:
        """On start: what a stopped server was grading goes back to the queue. On
        PostgreSQL, only what a replica that is gone was grading (see `requeue_orphans`)."""
        if self.db.dialect == "sqlite":
            with self._transaction() as db:
                sql = "UPDATE uploads SET status='queued' WHERE status='running'"
                return db.execute(sql).rowcount
        return self.requeue_orphans()

    def requeue_orphans(self) -> int:
        """On PostgreSQL: the uploads of replicas that are gone (their advisory lock,
        held while they are connected, is released) go back to the queue, for the replicas
        still running; a live replica's are left alone. Nothing to do with SQLite's one
        server."""
        if self.db.dialect == "sqlite":
            return 0
        with self._transaction() as db:
            return db.execute(
                "UPDATE uploads SET status='queued', claimed_by=NULL WHERE status='running' AND"
                " (claimed_by IS NULL OR claimed_by NOT IN (SELECT objid::bigint FROM pg_locks"
                " WHERE locktype='advisory' AND classid=? AND objsubid=2 AND granted AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())))",
                (LOCK_CLASS,),
            ).rowcount

    def claim(self, count: int) -> list[Upload]:
        """Take up to `count` queued uploads, oldest first, and mark them running as this
        replica's: rows another replica is taking at the same moment are skipped."""
        if count <= 0:
            return []
        with self._transaction() as db:
            rows = db.execute(
                "UPDATE uploads SET status='running', claimed_by=? WHERE id IN (SELECT id FROM"
                f" uploads WHERE status='queued' ORDER BY id LIMIT ?{db.skip_locked})"
                f" RETURNING {_UPLOAD_COLUMNS}",
                (self.replica, count),
            ).fetchall()
        return sorted((_upload(row) for row in rows), key=lambda upload: upload.id)

    def finish(
        self,
        upload: int,
        score: float | None,
        max_score: float | None,
        page: str,
        problem: str,
        view: View | None = None,
        counts: bool = True,
    ) -> bool:
        """Record an upload's result (graded when there is a score, else a problem) and its
        view; False when it was not running as this replica's any more (recorded already).
        `counts` False: the service failed to grade it, and it stops using an attempt."""
        status = "graded" if score is not None else "problem"
        uncount = "" if counts else ", counts=0"
        with self._transaction() as db:
            done = (
                db.execute(
                    "UPDATE uploads SET status=?, graded_at=?, score=?, max_score=?, page=?, "
                    f"problem=?, recorded=recorded+1{uncount} WHERE id=? AND status='running'"
                    " AND claimed_by=?",
                    (status, time.time(), score, max_score, page, problem, upload, self.replica),
                ).rowcount
                == 1
            )
            if done and view is not None:
                db.execute(
                    "INSERT INTO views VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (upload) DO UPDATE"
                    " SET assignment = excluded.assignment, public_page = excluded.public_page,"
                    " public_score = excluded.public_score, public_max = excluded.public_max,"
                    " late_percent = excluded.late_percent, late_note = excluded.late_note",
                    (upload, *astuple(view)),
                )
            return done

    def release(self, upload: int) -> bool:
        """Put an upload this replica took back in the queue, ungraded (its workers are gone)."""
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE uploads SET status='queued', claimed_by=NULL"
                    " WHERE id=? AND status='running' AND claimed_by=?",
                    (upload, self.replica),
                ).rowcount
                == 1
            )

    def superseded(self, upload_id: int, assignment: str) -> bool:
        """Whether a later upload of the same student, of this assignment, is graded already:
        graded out of order (an early upload slow, a later one quick), this one is not the
        student's latest, and the gradebook keeps the later one as its latest."""
        with self.lock:
            row = self.db.execute(
                "SELECT 1 FROM uploads u JOIN views v ON v.upload = u.id WHERE u.student ="
                " (SELECT student FROM uploads WHERE id=?) AND u.id > ? AND u.status='graded'"
                " AND v.assignment=? LIMIT 1",
                (upload_id, upload_id, assignment),
            ).fetchone()
        return row is not None

    def view(self, upload_id: int) -> View | None:
        """A graded upload's view (None: not graded, or graded before views were kept)."""
        with self.lock:
            row = self.db.execute(
                "SELECT assignment, public_page, public_score, public_max, late_percent, "
                "late_note FROM views WHERE upload=?",
                (upload_id,),
            ).fetchone()
        return View(*row) if row else None

    def views(self, student: str) -> dict[int, View]:
        """The views of a student's graded uploads, by upload id."""
        with self.lock:
            rows = self.db.execute(
                "SELECT v.* FROM views v JOIN uploads u ON u.id = v.upload WHERE u.student=?",
                (student,),
            ).fetchall()
        return {int(r[0]): View(*r[1:]) for r in rows}

    def released(self) -> bool:
        """Whether the instructor released the hidden cases' feedback from the class page."""
        with self.lock:
            row = self.db.execute("SELECT value FROM settings WHERE key='released'").fetchone()
        return bool(row and row[0] == "1")

    def release_hidden(self, released: bool = True) -> None:
        """Release the hidden cases' feedback to the students (or take it back)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO settings VALUES ('released', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                ("1" if released else "0",),
            )

    # --- LTI launches' short-lived data (states, nonces, launches) ------------------------

    def lti_put(self, key: str, value: str, seconds: float) -> None:
        """Keep a value of an LTI login or launch for `seconds` (the expired ones go, and
        the soonest to expire past LTI_LIMIT)."""
        now = time.time()
        with self._transaction() as db:
            db.execute(_LTI_EXPIRED, (now,))
            cutoff = db.execute(_LTI_CUTOFF, (LTI_LIMIT - 1,)).fetchone()
            if cutoff is not None:  # room for this one
                db.execute("DELETE FROM lti WHERE expires <= ?", (cutoff[0],))
            db.execute(
                "INSERT INTO lti VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE"
                " SET value = excluded.value, expires = excluded.expires",
                (key, value, now + seconds),
            )

    def lti_get(self, key: str, take: bool = False) -> str | None:
        """A kept value, if not expired; `take`: and forget it (a nonce is good once)."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT value FROM lti WHERE key=? AND expires >= ?", (key, time.time())
            ).fetchone()
            if take:
                db.execute("DELETE FROM lti WHERE key=?", (key,))
        return str(row[0]) if row else None

    def regrade_latest(self) -> int:
        """Queue each student's latest upload again (after the course changed)."""
        with self._transaction() as db:
            return db.execute(
                "UPDATE uploads SET status='queued' WHERE status IN ('graded', 'problem') AND id IN"
                " (SELECT MAX(id) FROM uploads GROUP BY student)"
            ).rowcount

    def upload(self, upload_id: int) -> Upload | None:
        """One upload by id."""
        with self.lock:
            row = self.db.execute(
                f"SELECT {_UPLOAD_COLUMNS} FROM uploads WHERE id=?", (upload_id,)
            ).fetchone()
        return _upload(row) if row else None

    def page(self, upload_id: int) -> str | None:
        """An upload's feedback page, once graded."""
        with self.lock:
            row = self.db.execute("SELECT page FROM uploads WHERE id=?", (upload_id,)).fetchone()
        return row[0] if row else None

    def history(self, student: str) -> list[Upload]:
        """A student's uploads, newest first."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {_UPLOAD_COLUMNS} FROM uploads WHERE student=? ORDER BY id DESC",
                (student,),
            ).fetchall()
        return [_upload(row) for row in rows]

    def latest(self) -> dict[str, Upload]:
        """Each student's latest upload."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {_UPLOAD_COLUMNS} FROM uploads WHERE id IN "
                "(SELECT MAX(id) FROM uploads GROUP BY student)"
            ).fetchall()
        return {row[1]: _upload(row) for row in rows}

    def counts(self) -> dict[str, int]:
        """How many uploads there are in each status (the class view's live state)."""
        with self.lock:
            rows = self.db.execute("SELECT status, COUNT(*) FROM uploads GROUP BY status")
            return {str(r[0]): int(r[1]) for r in rows}

    def attempts(self, student: str) -> tuple[int, float | None]:
        """A student's number of attempts used and when the last one came (the uploads that
        count: not those the service failed to grade)."""
        with self.lock:
            row = self.db.execute(
                "SELECT COUNT(*), MAX(received_at) FROM uploads WHERE student=? AND counts=1",
                (student,),
            ).fetchone()
        return int(row[0]), row[1]

    def attempt_counts(self) -> dict[str, int]:
        """Each student's number of attempts used (students with none are left out)."""
        with self.lock:
            rows = self.db.execute(
                "SELECT student, COUNT(*) FROM uploads WHERE counts=1 GROUP BY student"
            )
            return {str(r[0]): int(r[1]) for r in rows}

    def last_id(self) -> int:
        """The newest upload's id (0: none yet)."""
        with self.lock:
            return int(self.db.execute("SELECT COALESCE(MAX(id), 0) FROM uploads").fetchone()[0])
