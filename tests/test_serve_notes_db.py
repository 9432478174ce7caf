"""An instructor's override and comment set on the service's pages go into the served
class's gradebook wherever it is: OUT/gradebook.sqlite, or the PostgreSQL database of
`grader serve --db`, where `grader report --db` and the other replicas read it (they went
into a SQLite file in OUT that nothing else reads)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_serve_semester import course, report

from grader.batch.gradebook import Gradebook
from grader.batch.records import Override, comments, overrides, set_override
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.semester import graded_view
from grader.serve.store import Store

from serving import csrf, issue, sign_in

ON_POSTGRESQL = pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])


@pytest.fixture(params=["sqlite", ON_POSTGRESQL])
def database(request: pytest.FixtureRequest) -> str | None:
    """None for OUT's SQLite files, else a fresh PostgreSQL database."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


def test_an_override_set_on_the_page_is_in_the_served_gradebook(
    tmp_path: Path, database: str | None
) -> None:
    config = course(tmp_path)
    out = tmp_path / "out"
    store = Store(out, database)
    try:
        tokens = issue(store)
        app = make_app(Service(store, Limits(min_interval=0), None, config=config))
        upload = store.accept("alice", "alice.ipynb", b"{}")
        assert upload is not None and store.claim(1)
        spec, graded = config.assignment("self_attention"), report(config)
        page, view = graded_view(config.path.parent, "alice", spec, graded, None, time.time())
        assert store.finish(upload, graded.score, graded.max_score, page, "", view)
        instructor = TestClient(app, follow_redirects=False)
        sign_in(instructor, tokens["ada"])
        form = {
            "csrf": csrf(instructor.get("/class/students/alice").text),
            "assignment": "self_attention",
            "target": "softmax",
        }
        sent = instructor.post(
            "/class/students/alice/adjust", data={**form, "points": "2.5", "comment": "why"}
        )
        assert sent.status_code == 303, sent.text[-300:]
        note = {**form, "target": "", "points": "", "comment": "see me after class"}
        assert instructor.post("/class/students/alice/adjust", data=note).status_code == 303
        book = Gradebook(store.gradebook())
        try:
            (kept,) = overrides(book, "self_attention")["alice"]
            assert (kept.target, kept.points, kept.author) == ("softmax", 2.5, "ada")
            said = [c.text for c in comments(book, "self_attention")["alice"]]
            assert said == ["see me after class"]
            # One set where `grader override --db` sets it reaches the student's page too.
            by_hand = Override("alice", "self_attention", "", 4.0, "by hand", "ada", time.time())
            set_override(book, by_hand)
        finally:
            book.close()
        if database is not None:
            assert not (out / "gradebook.sqlite").exists()
        student = TestClient(app, follow_redirects=False)
        sign_in(student, tokens["alice"])
        shown = student.get(f"/submissions/{upload}").text
        assert "softmax set to 2.5 by ada" in shown and "see me after class" in shown
        assert "by hand" in shown
    finally:
        store.close()
