"""The people the service knows (students and instructors) and their sign-in tokens: issued,
revoked, and who a token signs in."""

from __future__ import annotations

from collections.abc import Sequence

from grader.errors import UsageError
from grader.render.escape import folded
from grader.serve.connected import Connected
from grader.serve.lookalike import described, skeleton
from grader.serve.roster import Student
from grader.serve.stored import Person, Role
from grader.serve.tokens import new_token, same_hash, token_hash


class People(Connected):
    """The `people` table: who may sign in, in which role, with which token (hashed)."""

    def issue(self, people: list[Student], role: Role) -> list[tuple[Student, str]]:
        """New tokens for these people (added when new; an old token stops working). An id
        the same but for case as one here is that person (their account keeps its id, and
        their uploads); one that only looks like another's here is a UsageError."""
        issued = [(p, new_token()) for p in people]
        with self._transaction() as db:
            ids = [str(row[0]) for row in db.execute("SELECT id FROM people")]
            # An id that looks like someone's already here (grader/serve/lookalike.py) would
            # be a second account the class page shows the same: refused, nothing issued.
            known = {skeleton(i): i for i in ids}
            for person, _ in issued:
                other = known.setdefault(skeleton(person.id), person.id)
                if folded(other) != folded(person.id):
                    raise UsageError(f"{described((other, person.id))} ({other!a} has a token)")
            accounts = {folded(i): i for i in ids}
            for person, token in issued:
                account = accounts.setdefault(folded(person.id), person.id)
                row = db.execute("SELECT role FROM people WHERE id=?", (account,)).fetchone()
                if row is not None and row[0] != role:
                    raise UsageError(f"{person.id} is already a {row[0]}, not a {role}")
                db.execute(
                    "INSERT INTO people VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "name=excluded.name, token_hash=excluded.token_hash",
                    (account, person.name, role, token_hash(token)),
                )
                db.execute("DELETE FROM sessions WHERE person=?", (account,))
        return issued

    def revoke(self, ids: Sequence[str]) -> list[Person]:
        """Revoke these people's tokens (ids matched as the roster matches them: case and
        Unicode form aside): their links and tokens stop signing in and their sessions end,
        until `issue` gives them new ones; their uploads stay. Any id unknown: UsageError,
        and nobody's token is revoked."""
        with self._transaction() as db:
            rows = db.execute("SELECT id, name, role FROM people").fetchall()
            known: dict[str, list[Person]] = {}
            for row in rows:  # more than one only where an older grader made two accounts
                known.setdefault(folded(str(row[0])), []).append(Person(*row))
            unknown = [i for i in ids if folded(i) not in known]
            if unknown:
                raise UsageError(
                    f"--revoke {unknown[0]}: nobody of that id was ever issued a token here"
                )
            people = [p for f in dict.fromkeys(folded(i) for i in ids) for p in known[f]]
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
        """One person by id; an id the same but for case (as the roster matches ids: a
        roster that now spells it otherwise) finds their account."""
        with self.lock:
            row = self.db.execute(
                "SELECT id, name, role FROM people WHERE id=?", (person_id,)
            ).fetchone()
            if row is None:
                wanted = folded(person_id)
                rows = self.db.execute("SELECT id, name, role FROM people ORDER BY id")
                row = next((r for r in rows if folded(str(r[0])) == wanted), None)
        return Person(*row) if row else None

    def revoked(self, person_id: str) -> bool:
        """Whether this person's token was revoked and none issued since: they sign in by no
        route (a link, a token, an LTI launch) until `issue` gives them a new one."""
        with self.lock:
            row = self.db.execute(
                "SELECT token_hash FROM people WHERE id=?", (person_id,)
            ).fetchone()
        return row is not None and row[0] is None
