"""The service's database connection (`serve.sqlite`, or the PostgreSQL database of `--db`)
and its uploads folder, which the store's parts share (people.py, uploads.py, store.py)."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

from grader.batch.database import LOCK_CLASS, Database, connect, errors, is_busy, shown
from grader.batch.gradebook import Busy
from grader.batch.schema import SchemaError, check, migrate
from grader.errors import UsageError


class Connected:
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
            if is_busy(exc):  # a healthy file another program holds: not to be moved away
                raise Busy.holding(target, exc) from None
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
