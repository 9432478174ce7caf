"""A student's uploads graded out of order (an early one slow, a later one quick, on two
workers): the served gradebook's latest is still the one handed in last, as the class page
says, so `grader report` and the exports grade the work the student handed in last."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_serve_grading import wait_graded

from grader.batch.gradebook import Gradebook
from grader.course.config import Config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store

import students
from conftest import write_notebook
from serving import issue, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def test_the_gradebooks_latest_is_the_upload_handed_in_last(tmp_path: Path, config: Config) -> None:
    slow = students.cells(scaled_dot_product_self_attention=students.SCALE_HARDCODED)
    slow.insert(1, "import time\ntime.sleep(3)  # graded after the next upload")
    early = write_notebook(tmp_path / "early.ipynb", slow)
    late = write_notebook(tmp_path / "late.ipynb", students.cells())
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=2)
    app = make_app(Service(store, Limits(min_interval=0), grading))
    with TestClient(app, follow_redirects=False) as client:
        form = sign_in(client, tokens["alice"])
        assert grading.ready.wait(60)
        where = []
        for notebook in (early, late):
            sent = {"notebook": (notebook.name, notebook.read_bytes())}
            answer = client.post("/upload", data={"csrf": form}, files=sent)
            where.append(answer.headers["location"])
        for upload in where:
            assert wait_graded(client, upload) == "graded"
        time.sleep(0.2)
    first, second = store.upload(1), store.upload(2)
    assert first is not None and second is not None
    assert first.score is not None and second.score is not None
    assert second.score > first.score and second.filename == "late.ipynb"
    store.close()
    book = Gradebook(tmp_path / "out" / "gradebook.sqlite")
    try:
        ((student, report),) = book.latest()
        assert student == "alice" and report.score == second.score, (report.score, first.score)
    finally:
        book.close()
