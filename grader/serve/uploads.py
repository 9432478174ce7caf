"""The service's uploads and their queue: the `uploads` table and `uploads/<sha256>` (each
upload's bytes, named by their hash; on PostgreSQL, the `upload_data` table). Several replicas
sharing PostgreSQL each take queued uploads with row locks that the others skip, and record
only the uploads they took.

An upload's bytes are on disk (fsync'd) and its row committed before the student gets an
answer; the queue is the `uploads` table, so a server killed at any point finds every
accepted upload again on restart. A result is written in the same transaction that marks its
upload graded, and only for an upload still running: each upload is recorded once.

Every accepted upload uses one of its student's attempts (`counts`), except one the service
could not grade for a fault of its own: that one stops counting toward the attempt limit and
the least interval between uploads once its result says so, and never counts again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import astuple
from pathlib import Path

from grader.batch.database import LOCK_CLASS, Database
from grader.batch.lateness import matched_hours
from grader.serve.connected import Connected
from grader.serve.stored import UPLOAD_COLUMNS, Upload, View, upload_of


class Uploads(Connected):
    """Uploads, their queue, results and views, and the class page's released flag."""

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
        both slip under it) over the uploads that count; a refused upload's bytes are never
        kept (a synced scratch file, put in place under the transaction's lock once accepted)."""
        content = hashlib.sha256(data).hexdigest()
        shared = self.db.dialect == "postgresql"  # the bytes go in with the row, below
        # Written and synced before the lock, put in place under it once accepted: other
        # requests do not wait behind a 2 MB write at a deadline's rush.
        scratch = None if shared else self._scratch(content, data)
        try:
            return self._accept(
                student, filename, data, content, scratch, max_attempts, min_interval
            )
        finally:
            if scratch is not None:
                scratch.unlink(missing_ok=True)  # refused, or there already

    def _accept(
        self,
        student: str,
        filename: str,
        data: bytes,
        content: str,
        scratch: Path | None,
        max_attempts: int | None,
        min_interval: float,
    ) -> int | None:
        shared = self.db.dialect == "postgresql"
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
            if scratch is not None:
                self._keep_bytes(content, scratch)
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

    def _scratch(self, content: str, data: bytes) -> Path | None:
        """The upload's bytes in a scratch file beside their place, synced (None: they are
        there already)."""
        if self.blob(content).exists():
            return None
        scratch = self.blobs / f".{content}.{os.getpid()}.{threading.get_ident()}"
        try:
            with scratch.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:  # a full disk: no partial file left behind
            scratch.unlink(missing_ok=True)
            raise
        return scratch

    def _keep_bytes(self, content: str, scratch: Path) -> None:
        """The synced scratch file in its place in OUT/uploads/, durable (the folder synced)."""
        os.replace(scratch, self.blob(content))
        folder = os.open(self.blobs, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

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
                f" RETURNING {UPLOAD_COLUMNS}",
                (self.replica, count),
            ).fetchall()
        return sorted((upload_of(row) for row in rows), key=lambda upload: upload.id)

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

    def beaten(self, upload_id: int, assignment: str, points: float) -> bool:
        """Under `keep: best`: whether another graded upload of the same student, of this
        assignment, counts more than `points` (after its late penalty), or as much and was
        uploaded later (ties: the latest); the gradebook then keeps that one."""
        with self.lock:
            row = self.db.execute(
                "SELECT 1 FROM uploads u JOIN views v ON v.upload = u.id WHERE u.student ="
                " (SELECT student FROM uploads WHERE id=?) AND u.id <> ? AND u.status='graded'"
                " AND v.assignment=? AND (u.score * (1 - v.late_percent / 100.0) > ? + 1e-9"
                " OR (u.score * (1 - v.late_percent / 100.0) >= ? - 1e-9 AND u.id > ?)) LIMIT 1",
                (upload_id, upload_id, assignment, points, points, upload_id),
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

    def regrade_latest(self, best: Collection[str] = ()) -> int:
        """Queue each student's latest upload again (after the course changed), and their
        latest graded upload of each assignment (its view names it): the gradebook's grade
        of every assignment they handed in is redone, not only the last one's. Of the
        assignments in `best` (`keep: best`) every graded upload is queued: the best is
        chosen again among the new scores (each one graded is weighed against those
        graded again before it, never against a score of the course as it was)."""
        with self._transaction() as db:
            return _requeue(db, best)

    def reweigh_extensions(
        self, hours: Mapping[str, float], best: Collection[str] = ()
    ) -> list[str]:
        """Queue again the graded uploads of each student whose extension is not what it
        was when the service last looked (`hours`, as `extensions.csv` and the roster give
        them; the last look's are kept in `settings`): their latest of each assignment, and
        every one of an assignment in `best`, as Regrade queues them (`_requeue`, for those
        students only), so that lateness, the
        best and the gradebook count the new extension. The first look only records the
        hours. Returns the students queued, by their upload ids' names."""
        now = json.dumps(dict(sorted(hours.items())))
        with self._transaction() as db:
            if self.db.dialect == "postgresql":  # replicas take turns, as SQLite's lock does
                db.execute("SELECT 1 FROM settings WHERE key='extensions' FOR UPDATE")
            row = db.execute("SELECT value FROM settings WHERE key='extensions'").fetchone()
            if row is not None and row[0] == now:
                return []
            db.execute(
                "INSERT INTO settings VALUES ('extensions', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (now,),
            )
            if row is None:
                return []
            before = {str(k): float(v) for k, v in json.loads(row[0]).items()}  # written here
            graded = [
                str(r[0])
                for r in db.execute(
                    "SELECT DISTINCT student FROM uploads WHERE status='graded'"
                ).fetchall()
            ]
            old, new = matched_hours(before, graded), matched_hours(hours, graded)
            changed = sorted(s for s in graded if old.get(s, 0.0) != new.get(s, 0.0))
            if changed:
                _requeue(db, best, changed)
        return changed

    def upload(self, upload_id: int) -> Upload | None:
        """One upload by id."""
        with self.lock:
            row = self.db.execute(
                f"SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id=?", (upload_id,)
            ).fetchone()
        return upload_of(row) if row else None

    def page(self, upload_id: int) -> str | None:
        """An upload's feedback page, once graded."""
        with self.lock:
            row = self.db.execute("SELECT page FROM uploads WHERE id=?", (upload_id,)).fetchone()
        return row[0] if row else None

    def history(self, student: str) -> list[Upload]:
        """A student's uploads, newest first."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {UPLOAD_COLUMNS} FROM uploads WHERE student=? ORDER BY id DESC",
                (student,),
            ).fetchall()
        return [upload_of(row) for row in rows]

    def latest(self) -> dict[str, Upload]:
        """Each student's latest upload."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id IN "
                "(SELECT MAX(id) FROM uploads GROUP BY student)"
            ).fetchall()
        return {row[1]: upload_of(row) for row in rows}

    def assignments(self) -> dict[int, str]:
        """The assignment of each graded upload (those with a view), by upload id."""
        with self.lock:
            rows = self.db.execute("SELECT upload, assignment FROM views")
            return {int(r[0]): str(r[1]) for r in rows}

    def late_percents(self) -> dict[int, float]:
        """The late penalty (percent) of each graded upload that has one, by upload id."""
        with self.lock:
            rows = self.db.execute("SELECT upload, late_percent FROM views WHERE late_percent > 0")
            return {int(r[0]): float(r[1]) for r in rows}

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


def _requeue(db: Database, best: Collection[str], students: Collection[str] | None = None) -> int:
    """Queue again, in the transaction `db`, what Regrade grades again: each student's
    latest upload, their latest graded one of each assignment, and every graded one of an
    assignment in `best`; of `students` only, when given. How many were queued."""
    kept = ", ".join("?" for _ in best) or "NULL"
    only = "" if students is None else f" AND student IN ({', '.join('?' for _ in students)})"
    return int(
        db.execute(
            "UPDATE uploads SET status='queued' WHERE status IN ('graded', 'problem') AND"
            " (id IN (SELECT MAX(id) FROM uploads GROUP BY student) OR id IN (SELECT"
            " MAX(u.id) FROM uploads u JOIN views v ON v.upload = u.id GROUP BY u.student,"
            f" v.assignment) OR id IN (SELECT upload FROM views WHERE assignment IN ({kept})))"
            + only,
            (*best, *(students or ())),
        ).rowcount
    )
