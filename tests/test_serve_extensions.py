"""`grader serve` with an extensions file it cannot read: the class page says so (every
upload graded meanwhile counts no extension), and stops saying so once it is fixed; before,
every extension was silently dropped and the late penalty recorded."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from test_serve_grading import wait_graded
from test_serve_semester import course

from grader.course.config import Config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store

from conftest import REPO
from serving import issue, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

SOLUTION = (REPO / "solutions" / "self_attention.ipynb").read_bytes()


def _service(config: Config, tmp_path: Path) -> tuple[Starlette, Store, dict[str, str]]:
    """The service for `config`, its store (in tmp_path/out), and the tokens issued."""
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    app = make_app(Service(store, Limits(min_interval=0), grading, config=config))
    return app, store, tokens


def test_an_unreadable_extensions_file_is_said_on_the_class_page(tmp_path: Path) -> None:
    config = course(tmp_path)  # self_attention was due a day ago
    folder = config.path.parent
    (folder / "extensions.csv").write_text("student,hours\nalice,two days\n")
    app, store, tokens = _service(config, tmp_path)
    with TestClient(app, follow_redirects=False) as student:
        form = sign_in(student, tokens["alice"])
        instructor = TestClient(app, follow_redirects=False)
        sign_in(instructor, tokens["ada"])

        def hand_in() -> int:
            sent = {"notebook": ("alice.ipynb", SOLUTION)}
            answer = student.post("/upload", data={"csrf": form}, files=sent)
            where = answer.headers["location"]
            assert wait_graded(student, where) == "graded"
            return int(where.rsplit("/", 1)[1])

        late = store.view(hand_in())
        assert late is not None and late.late_percent > 0
        page = instructor.get("/class").text
        assert "the extensions cannot be read" in page and "extensions.csv line 2" in page
        (folder / "extensions.csv").write_text("student,hours\nalice,48\n")
        time.sleep(0.01)
        on_time = store.view(hand_in())
        assert on_time is not None and on_time.late_percent == 0
        assert "the extensions cannot be read" not in instructor.get("/class").text
    store.close()


def test_a_late_upload_reads_the_extensions_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.serve import semester

    config = course(tmp_path)  # self_attention was due a day ago
    (config.path.parent / "extensions.csv").write_text("student,hours\nalice,48\n")
    reads: list[Path] = []
    real = semester.load_extensions

    def counted(folder: Path) -> dict[str, float]:
        reads.append(folder)
        return real(folder)

    monkeypatch.setattr(semester, "load_extensions", counted)
    app, store, tokens = _service(config, tmp_path)
    with TestClient(app, follow_redirects=False) as student:
        form = sign_in(student, tokens["alice"])
        reads.clear()  # the home page reads them too, for the student's own due date
        sent = {"notebook": ("alice.ipynb", SOLUTION)}
        where = student.post("/upload", data={"csrf": form}, files=sent).headers["location"]
        assert wait_graded(student, where) == "graded"
        view = store.view(int(where.rsplit("/", 1)[1]))
        assert view is not None and view.late_percent == 0  # the extension counted
        # the class page's problem, the page, the gradebook: one read for the upload
        assert reads == [config.path.parent]
        # the due date the student is shown is theirs: moved by the 48 h (r40: it said the
        # class's, already past, beside "on time (with an extension of 48 h)")
        spec = config.assignment("self_attention")
        assert spec.late is not None
        theirs = (spec.late.due + timedelta(hours=48)).isoformat(sep=" ", timespec="minutes")
        home = student.get("/").text
        assert f"due {theirs} (with your extension of 48 h)" in home
    store.close()


def _hand_in(student: TestClient, form: str) -> int:
    """Upload the solution; its id once graded."""
    sent = {"notebook": ("work.ipynb", SOLUTION)}
    where = student.post("/upload", data={"csrf": form}, files=sent).headers["location"]
    assert wait_graded(student, where) == "graded"
    return int(where.rsplit("/", 1)[1])


def test_an_extension_granted_after_a_late_upload_counts_without_a_regrade(
    tmp_path: Path,
) -> None:
    """Before, the upload kept its late penalty (page, best, gradebook) until the instructor
    pressed Regrade, which grades the whole class again."""
    config = course(tmp_path)  # self_attention was due a day ago
    app, store, tokens = _service(config, tmp_path)
    with TestClient(app, follow_redirects=False) as alice:
        bob = TestClient(app, follow_redirects=False)
        alices = _hand_in(alice, sign_in(alice, tokens["alice"]))
        bobs = _hand_in(bob, sign_in(bob, tokens["bob"]))
        for upload in (alices, bobs):
            view = store.view(upload)
            assert view is not None and view.late_percent > 0
        bob_page = store.page(bobs)
        (config.path.parent / "extensions.csv").write_text("student,hours\nalice,48\n")
        deadline = time.monotonic() + 60
        while (view := store.view(alices)) is None or view.late_percent > 0:
            assert time.monotonic() < deadline, "the extension never counted"
            time.sleep(0.1)
        page = store.page(alices)
        assert page is not None and "10%" not in page
        assert store.page(bobs) == bob_page  # graded once: nothing changed for bob
    store.close()


def test_reweighing_extensions_queues_only_the_students_whose_extension_changed(
    tmp_path: Path,
) -> None:
    config = course(tmp_path)
    app, store, tokens = _service(config, tmp_path)
    with TestClient(app, follow_redirects=False) as alice:
        bob = TestClient(app, follow_redirects=False)
        alices = _hand_in(alice, sign_in(alice, tokens["alice"]))
        bobs = _hand_in(bob, sign_in(bob, tokens["bob"]))
    # the service stopped: nothing grades what is queued here
    store.reweigh_extensions({})  # as the service's last look saw them (no file)
    assert store.reweigh_extensions({"ALICE": 48.0}) == ["alice"]  # matched as a batch does
    assert store.reweigh_extensions({"ALICE": 48.0}) == []  # the same hours: nothing again
    status = {u: (store.upload(u) or pytest.fail("lost")).status for u in (alices, bobs)}
    assert status == {alices: "queued", bobs: "graded"}
    store.close()
