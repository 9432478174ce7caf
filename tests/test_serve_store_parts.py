"""The service's store is split by what it holds: people and their tokens, uploads and their
queue, and (in store.py) sessions and LTI states, on one shared connection; one Store still
answers for all of them."""

from __future__ import annotations

from pathlib import Path

from grader.batch.roster import Student
from grader.serve import people, store, uploads
from grader.serve.store import Store


def test_each_part_holds_its_own_tables_and_the_store_answers_for_all(tmp_path: Path) -> None:
    parts = {
        people: ("issue", "revoke", "revoked", "person_for_token", "person", "people"),
        uploads: ("accept", "claim", "finish", "release", "history", "latest", "attempts"),
        store: ("new_session", "session", "end_session", "lti_put", "lti_get"),
    }
    for module, methods in parts.items():
        for name in methods:
            assert getattr(Store, name).__module__ == module.__name__, name
    held = Store(tmp_path / "out")
    try:
        ((_, token),) = held.issue([Student("ada", "Ada")], "student")
        person = held.person_for_token(token)
        assert person is not None and held.session(held.new_session(person)) is not None
        assert held.accept(person.id, "hw.ipynb", b"{}") == held.last_id() == 1
        held.lti_put("state", "x", 60)
        assert held.lti_get("state", take=True) == "x" and held.lti_get("state") is None
    finally:
        held.close()
