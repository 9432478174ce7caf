"""`grader serve` grading for real, in the sandbox: the feedback a student reads is the batch's
page, and a server killed outright grades every accepted upload exactly once on restart."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from grader.batch.classreport import write_report
from grader.batch.entries import FAULT_LOG
from grader.batch.grade import grade_batch
from grader.batch.gradebook import Gradebook
from grader.course.config import Config, load_config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store

import students
from conftest import repo_config_raw, write_notebook
from serving import free_port, issue, sign_in, start_server, stop

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def wait_graded(client: TestClient | httpx.Client, upload: str, seconds: float = 90) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = client.get(f"{upload}/status").json()["state"]
        if state in ("graded", "problem"):
            return str(state)
        time.sleep(0.05)
    raise AssertionError(f"{upload} not graded in {seconds} s")


def hand_in(client: TestClient, token: str, notebook: Path) -> str:
    """Sign in with `token` and upload `notebook`; where its result is shown."""
    form = sign_in(client, token)
    sent = {"notebook": (notebook.name, notebook.read_bytes())}
    answer = client.post("/upload", data={"csrf": form}, files=sent, follow_redirects=False)
    return str(answer.headers["location"])


def a_problem(tmp_path: Path, config: Config, notebook: Path) -> tuple[str, Store]:
    """alice uploads `notebook` to a service over OUT = tmp_path/out, which answers with a
    problem (no grade): the page she reads, and the store (open, for the caller to close)."""
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    with TestClient(make_app(Service(store, Limits(min_interval=0), grading))) as client:
        where = hand_in(client, tokens["alice"], notebook)
        assert wait_graded(client, where) == "problem"
        return client.get(where).text, store


def test_a_student_reads_the_same_feedback_as_the_batch_writes(
    tmp_path: Path, config: Config
) -> None:
    (tmp_path / "class").mkdir()
    notebook = write_notebook(
        tmp_path / "class" / "alice.ipynb", students.cells(scaled=students.SCALE_HARDCODED)
    )
    batch = grade_batch(notebook.parent, config, tmp_path / "batch", sandbox="required")
    assert batch.graded == 1
    expected = (tmp_path / "batch" / "feedback" / "alice.html").read_text()
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    app = make_app(Service(store, Limits(min_interval=0), grading))
    with TestClient(app) as client:
        form = sign_in(client, tokens["alice"])
        sent = {"notebook": ("alice.ipynb", notebook.read_bytes())}
        answer = client.post("/upload", data={"csrf": form}, files=sent, follow_redirects=False)
        where = answer.headers["location"]
        assert wait_graded(client, where) == "graded"
        page = client.get(where).text
    served = "\n".join(line for line in page.splitlines() if not line.startswith("<nav>"))
    assert served == expected.rstrip("\n") and "scale" in served
    assert store.upload(1).recorded == 1  # type: ignore[union-attr]
    # Kept beside it: the assignment, and (no hidden cases in this course) the same score.
    view = store.view(1)
    assert view is not None and view.assignment == "self_attention"
    assert view.public_score == store.upload(1).score and view.late_note == ""  # type: ignore[union-attr]
    store.close()
    book = Gradebook(tmp_path / "out" / "gradebook.sqlite")
    ((student, report),) = book.latest()
    assert student == "alice" and report.score == batch.entries[0].report.score  # type: ignore[union-attr]
    book.close()
    assert write_report(tmp_path / "out").is_file()  # `grader report` reads the served class


def test_a_killed_server_grades_every_accepted_upload_once_after_restart(
    tmp_path: Path,
) -> None:
    out, port = tmp_path / "out", free_port()
    store = Store(out)
    tokens = issue(store)
    store.close()
    notebook = write_notebook(tmp_path / "nb.ipynb", students.cells()).read_bytes()
    server = start_server(out, port)
    base = f"http://127.0.0.1:{port}"
    accepted = []
    for student in ("alice", "bob") * 4:
        with httpx.Client(base_url=base) as client:
            form = sign_in(client, tokens[student])
            sent = {"notebook": (f"{student}.ipynb", notebook)}
            answer = client.post("/upload", data={"csrf": form}, files=sent)
            assert answer.status_code == 303
            accepted.append(answer.headers["location"])
    assert stop(server, signal.SIGKILL) == -signal.SIGKILL  # mid-grading, with no warning
    db = sqlite3.connect(out / "serve.sqlite")
    left = db.execute("SELECT COUNT(*) FROM uploads WHERE status != 'graded'").fetchone()[0]
    assert left > 0  # the workers were still warming up: the kill came mid-queue
    running = db.execute("SELECT COUNT(*) FROM uploads WHERE status = 'running'").fetchone()[0]
    server = start_server(out, port)
    try:
        with httpx.Client(base_url=base) as client:
            sign_in(client, tokens["ada"])
            assert {wait_graded(client, where) for where in accepted} == {"graded"}
    finally:
        # A graceful stop: uvicorn ends by re-raising the signal, as a process stopped by it
        assert stop(server, signal.SIGTERM) == -signal.SIGTERM
        assert server.stdout is not None
        said = server.stdout.read().decode()
        assert "stopped; 0 uploads wait for the next start" in said
        # The restart says where its time went and what it found of the last run's queue.
        assert f"uploads waiting ({running} were being graded when the last server" in said
        assert "1 grading workers ready in " in said
    rows = db.execute("SELECT status, recorded, score = max_score FROM uploads").fetchall()
    assert rows == [("graded", 1, 1)] * len(accepted), (left, rows)


def test_a_student_is_served_their_own_public_cases_with_per_student_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """per_student_inputs: the service judges each upload on that student's own public cases
    (from the course secret), as `grader grade` does, and gives the batch's score."""
    from test_per_student import SECRET, course

    import grader.serve.grading as grading_module
    from grader.course.config import load_config
    from grader.course.per_student import SECRET_ENV, derive_seed

    monkeypatch.setenv(SECRET_ENV, SECRET)
    config = load_config(course(tmp_path) / "config.yaml")
    (tmp_path / "class").mkdir()
    notebook = write_notebook(tmp_path / "class" / "alice.ipynb", students.cells())
    batch = grade_batch(notebook.parent, config, tmp_path / "batch", sandbox="required")
    assert batch.graded == 1
    judged_on: list[int | None] = []
    prepare = grading_module._prepare

    def spy(spec: object, pool: object) -> object:
        judged_on.append(spec.public_seed)  # type: ignore[attr-defined]
        return prepare(spec, pool)  # type: ignore[arg-type]

    monkeypatch.setattr(grading_module, "_prepare", spy)
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    with TestClient(make_app(Service(store, Limits(min_interval=0), grading))) as client:
        assert wait_graded(client, hand_in(client, tokens["alice"], notebook)) == "graded"
    upload = store.upload(1)
    store.close()
    assert derive_seed(SECRET.encode(), "self_attention", "alice") in judged_on
    assert upload is not None and upload.score == batch.entries[0].report.score  # type: ignore[union-attr]


def test_an_upload_no_worker_could_start_for_is_a_problem_not_a_zero(
    tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.run.workers import Workers, unstarted_run

    marker = "# the machine is out of processes for this one"
    real = Workers.run

    def out_of_processes(self: Workers, cells: Any, *args: Any, **kw: Any) -> Any:
        if any(marker in cell.source for cell in cells):
            return unstarted_run("a grading worker could not start: out of processes")
        return real(self, cells, *args, **kw)

    monkeypatch.setattr(Workers, "run", out_of_processes)
    notebook = write_notebook(tmp_path / "alice.ipynb", [marker, *students.cells()])
    page, store = a_problem(tmp_path, config, notebook)
    upload = store.upload(1)
    store.close()
    assert upload is not None and upload.score is None
    assert "could not start" in page and "upload it again in a while" in page
    book = Gradebook(tmp_path / "out" / "gradebook.sqlite")
    assert book.latest() == []  # nothing recorded for the class either
    book.close()


def test_an_upload_no_assignment_fits_is_told_what_to_upload_not_a_flag(
    tmp_path: Path, config: Config
) -> None:
    # The student was told to "pass --assignment", an option of a command they never run.
    notebook = write_notebook(tmp_path / "alice.ipynb", ["def helper(x):\n    return x"])
    page, store = a_problem(tmp_path, config, notebook)
    store.close()
    assert "cannot tell which assignment" in page and "--assignment" not in page
    assert "upload the notebook of one of this course&#39;s assignments" in page


def test_a_running_server_prunes_its_cache_folder_when_a_prune_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command prunes the cache folder at its exit; a server may run for a semester."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(cache))
    out, port = tmp_path / "out", free_port()
    server = start_server(out, port)
    try:
        deadline = time.monotonic() + 30
        while not (cache / "last-pruned").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (cache / "last-pruned").exists(), "the running server started no prune"
        assert server.poll() is None  # while it serves, not at its exit
        # A second server on the same OUT would take the first's running uploads back.
        second = subprocess.run(
            [sys.executable, "-m", "grader", "serve", "--out", str(out), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2, second.stderr
        assert f"another grader serve is using it (process {server.pid} on" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        stop(server, signal.SIGTERM)


def a_served_class(tmp_path: Path, config: Config) -> tuple[Path, Store, dict[str, str], Grading]:
    """A correct notebook, the service's store over OUT = tmp_path/out with the class's
    tokens, and its grading (one worker, sandboxed)."""
    (tmp_path / "class").mkdir()
    notebook = write_notebook(tmp_path / "class" / "hw.ipynb", students.cells())
    store = Store(tmp_path / "out")
    tokens = issue(store)
    return notebook, store, tokens, Grading(config, store, require("required"), jobs=1)


def waiting(grading: Grading, seconds: float = 60) -> str:
    """What the grading thread waits for (its `busy`), once it says so."""
    deadline = time.monotonic() + seconds
    while not grading.busy and time.monotonic() < deadline:
        time.sleep(0.1)
    return grading.busy


def recorded(out: Path) -> list[str]:
    """The students the served class's gradebook holds a latest submission of."""
    book = Gradebook(out / "gradebook.sqlite")
    try:
        return sorted(dict(book.latest()))
    finally:
        book.close()


def test_a_record_the_gradebook_refuses_is_a_fault_not_a_stuck_queue(
    tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the record before the store's 'graded', a record that failed for another reason
    # than a lock stopped the grading thread with the upload 'running': taken first again at
    # every start, it stopped every start.
    real = Gradebook.record

    def refuses_bob(book: Gradebook, student: str, *rest: Any) -> None:
        if student == "bob":
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        real(book, student, *rest)

    monkeypatch.setattr(Gradebook, "record", refuses_bob)
    notebook, store, tokens, grading = a_served_class(tmp_path, config)
    with TestClient(make_app(Service(store, Limits(min_interval=0), grading))) as client:
        assert wait_graded(client, hand_in(client, tokens["bob"], notebook)) == "graded"
        assert wait_graded(client, hand_in(client, tokens["alice"], notebook)) == "graded"
        assert grading.failed == ""
    store.close()
    assert "OverflowError" in (tmp_path / "out" / FAULT_LOG).read_text()
    assert recorded(tmp_path / "out") == ["alice"]


def test_stopped_while_the_gradebook_stays_locked_the_upload_is_graded_again_at_start(
    tmp_path: Path, config: Config
) -> None:
    # The store said 'graded' before the gradebook had the record: stopped while another
    # program still held the gradebook, the upload was lost to the report and the exports.
    notebook, store, tokens, grading = a_served_class(tmp_path, config)
    service = Service(store, Limits(min_interval=0), grading, grace=0.5)
    holder = sqlite3.connect(tmp_path / "out" / "gradebook.sqlite", isolation_level=None)
    try:
        with TestClient(make_app(service)) as client:
            assert wait_graded(client, hand_in(client, tokens["alice"], notebook)) == "graded"
            holder.execute("BEGIN EXCLUSIVE")
            where = hand_in(client, tokens["bob"], notebook)
            assert "database is locked" in waiting(grading)
        assert not grading.thread.is_alive()  # stopped within its grace, not 15 s later
        assert client.get(f"{where}/status").json()["state"] not in ("graded", "problem")
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
    store.close()
    store = Store(tmp_path / "out")
    again = Grading(config, store, require("required"), jobs=1)
    with TestClient(make_app(Service(store, Limits(min_interval=0), again))) as client:
        sign_in(client, tokens["bob"])
        assert wait_graded(client, where) == "graded"
    store.close()
    assert recorded(tmp_path / "out") == ["alice", "bob"]


def test_a_gradebook_locked_by_another_program_is_waited_for_and_nothing_is_dropped(
    tmp_path: Path, config: Config
) -> None:
    # Past SQLite's 5 s wait, "database is locked" ended the grading thread: the upload in
    # hand was marked graded but never written to the gradebook, and later uploads stayed
    # queued until a restart.
    notebook, store, tokens, grading = a_served_class(tmp_path, config)
    with TestClient(make_app(Service(store, Limits(min_interval=0), grading))) as client:
        assert wait_graded(client, hand_in(client, tokens["alice"], notebook)) == "graded"
        holder = sqlite3.connect(tmp_path / "out" / "gradebook.sqlite", isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # a spreadsheet tool, a backup, a second grader
        try:
            where = hand_in(client, tokens["bob"], notebook)
            assert "database is locked" in waiting(grading)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert wait_graded(client, where) == "graded"
        other = write_notebook(
            tmp_path / "class" / "hw2.ipynb", students.cells(self_attention=students.MISSING_BIAS)
        )
        later = hand_in(client, tokens["alice"], other)
        assert wait_graded(client, later) == "graded"  # the grading thread goes on
        deadline = time.monotonic() + 30
        while grading.busy and time.monotonic() < deadline:
            time.sleep(0.1)
        assert grading.busy == "" and grading.failed == ""
    store.close()
    book = Gradebook(tmp_path / "out" / "gradebook.sqlite")
    try:
        latest = dict(book.latest())
        assert sorted(latest) == ["alice", "bob"]  # bob's, graded while it was locked, too
        assert latest["alice"].score < latest["bob"].score == latest["bob"].max_score
    finally:
        book.close()


@pytest.mark.parametrize("keep", ["best", "latest"])
def test_the_gradebook_keeps_the_upload_the_assignments_keep_names(
    tmp_path: Path, keep: str
) -> None:
    # The service recorded every upload as the student's grade whatever `keep:` said (r48
    # S1): under `keep: best` a worse later upload replaced a better one, as the batch never
    # does. A regrade then weighs each upload against those graded again only.
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["keep"] = keep
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "config.yaml").write_text(json.dumps(raw))
    config = load_config(tmp_path / "course" / "config.yaml")
    (tmp_path / "class").mkdir()
    good = write_notebook(tmp_path / "class" / "good.ipynb", students.cells())
    worse = write_notebook(
        tmp_path / "class" / "worse.ipynb", students.cells(scaled=students.SCALE_HARDCODED)
    )
    store = Store(tmp_path / "out")
    tokens = issue(store)
    grading = Grading(config, store, require("required"), jobs=1)
    with TestClient(make_app(Service(store, Limits(min_interval=0), grading))) as client:
        for notebook in (good, worse):
            assert wait_graded(client, hand_in(client, tokens["alice"], notebook)) == "graded"
        scores = [u.score for u in reversed(store.history("alice"))]
        assert scores[0] is not None and scores[1] is not None and scores[0] > scores[1]
        kept = scores[0] if keep == "best" else scores[1]
        assert _recorded_score(tmp_path / "out") == kept
        queued = store.regrade_latest(["self_attention"] if keep == "best" else [])
        assert queued == (2 if keep == "best" else 1)  # every graded one; the latest alone
        grading.wake()
        deadline = time.monotonic() + 90
        while store.counts().get("graded", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.counts() == {"graded": 2}
    store.close()
    assert _recorded_score(tmp_path / "out") == kept


def _recorded_score(out: Path) -> float:
    book = Gradebook(out / "gradebook.sqlite")
    try:
        report = book.latest_of("alice", "self_attention")
        assert report is not None
        return report.score
    finally:
        book.close()
