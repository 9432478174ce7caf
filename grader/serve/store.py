"""The service's storage in its output folder: `serve.sqlite` (people, sessions, uploads and
their queue, LTI logins' states) and `uploads/<sha256>` (each upload's bytes, named by their
hash). With `--db postgresql://…` the tables are in that database instead, beside the
gradebook's, and several replicas share them (grader/batch/schema.py holds the tables).

The Store is made of parts by what they hold: the connection (connected.py), people and
their tokens (people.py), uploads and their queue (uploads.py, which says how an upload is
kept), and here the sessions and the LTI logins' short-lived data, with the limits that keep
those tables bounded whatever is sent.
"""

from __future__ import annotations

import time

from grader.serve.people import People
from grader.serve.stored import Person, Role, Session, Status, Upload, View
from grader.serve.tokens import new_token, token_hash
from grader.serve.uploads import Uploads

__all__ = ["Person", "Role", "Session", "Status", "Store", "Upload", "View"]


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


class Store(People, Uploads):
    """serve.sqlite (or the PostgreSQL database `database`) and the uploads folder: people
    and tokens, sessions, uploads and their queue, LTI states. One connection, shared by the
    web handlers and the grading thread under a lock (every statement is short)."""

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
