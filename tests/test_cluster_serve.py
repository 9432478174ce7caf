"""`grader serve --cluster`: the service's uploads run on Dask distributed workers (the batch's
ClusterPool), judged and recorded by the service, and the student reads the same feedback as a
local batch writes; a scheduler lost mid-grading puts the uploads in hand back in the queue
(none lost, none recorded twice) and the class page says so."""

from __future__ import annotations

import html
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from distributed import Client, LocalCluster
from starlette.testclient import TestClient

from grader.batch.grade import grade_batch
from grader.course.config import Config
from grader.engine import require
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store

import students
from conftest import write_notebook
from serving import issue, sign_in

# Each in the Dask queue long enough for the scheduler to be lost while some are in hand.
UPLOADS, SLEEP = 6, 0.5

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def test_the_service_grades_on_the_cluster_as_a_local_batch(tmp_path: Path, config: Config) -> None:
    (tmp_path / "class").mkdir()
    cells = students.cells(scaled=students.SCALE_HARDCODED)
    notebook = write_notebook(tmp_path / "class" / "alice.ipynb", cells)
    grade_batch(notebook.parent, config, tmp_path / "batch", sandbox="required")
    expected = (tmp_path / "batch" / "feedback" / "alice.html").read_text()
    with one_worker() as cluster:
        store = Store(tmp_path / "out")
        tokens = issue(store)
        grading = Grading(
            config, store, require("required"), 1, cluster.scheduler_address, "required"
        )
        app = make_app(Service(store, Limits(min_interval=0), grading))
        with TestClient(app) as client:
            form = sign_in(client, tokens["alice"])
            sent = {"notebook": ("alice.ipynb", notebook.read_bytes())}
            answer = client.post("/upload", data={"csrf": form}, files=sent)
            where = answer.headers["location"] if answer.status_code == 303 else answer.url.path
            deadline = time.monotonic() + 120
            while client.get(f"{where}/status").json()["state"] != "graded":
                assert time.monotonic() < deadline, f"not graded: {grading.failed}"
                time.sleep(0.05)
            page = client.get(where).text
        with Client(cluster.scheduler_address) as probe:
            ran = probe.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
        store.close()
    assert "run_submission" in ran  # the notebook ran on the Dask worker
    served = "\n".join(line for line in page.splitlines() if not line.startswith("<nav>"))
    assert served == expected.rstrip("\n") and "scale" in served


@contextmanager
def one_worker() -> Iterator[LocalCluster]:
    """A LocalCluster of one worker process with one thread: the service's one slot."""
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    ) as cluster:
        yield cluster


def uploads(out: Path) -> dict[int, tuple[str, int]]:
    """Each upload's status and how many times its result was recorded, by id."""
    with sqlite3.connect(out / "serve.sqlite") as db:
        found = {int(r[0]): (str(r[1]), int(r[2])) for r in db.execute(
            "SELECT id, status, recorded FROM uploads")}  # fmt: skip
    db.close()
    return found


def gradebook_rows(out: Path) -> Counter[str]:
    """How many gradebook rows each upload's notebook has (by content hash)."""
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        found = Counter(str(r[0]) for r in db.execute("SELECT content_hash FROM submissions"))
    db.close()
    return found


def until(done: Callable[[], object], what: str, seconds: float = 120) -> None:
    """Wait until `done()` is true."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_scheduler_lost_mid_grading_queues_the_uploads_in_hand_again(
    tmp_path: Path, config: Config
) -> None:
    out = tmp_path / "out"
    store = Store(out)
    tokens = issue(store)
    for i in range(UPLOADS):
        cells = students.cells()
        cells.insert(1, f"import time\ntime.sleep({SLEEP})  # upload {i}")
        notebook = write_notebook(tmp_path / f"upload{i}.ipynb", cells)
        assert store.accept(("alice", "bob")[i % 2], notebook.name, notebook.read_bytes())
    with one_worker() as cluster:
        address = cluster.scheduler_address
        grading = Grading(config, store, require("required"), 1, address, "required")
        app = make_app(Service(store, Limits(min_interval=0), grading))
        with TestClient(app) as client:
            until(lambda: grading.failed or "graded" in store.counts(), "nothing graded")
            in_hand = {i for i, (status, _) in uploads(out).items() if status == "running"}
            cluster.sync(cluster.scheduler.close)  # the scheduler is lost, mid-grading
            until(lambda: grading.failed, "the loss went unnoticed")
            until(lambda: not grading.thread.is_alive(), "the grading thread kept going")
            sign_in(client, tokens["ada"])
            page = client.get("/class").text
        failed = grading.failed
    assert failed.startswith(f"grading stopped: the Dask scheduler at {address} stopped")
    assert html.escape(failed) in page  # the class page says so
    after = uploads(out)
    queued = {i for i, (status, _) in after.items() if status == "queued"}
    graded = {i for i, (status, _) in after.items() if status == "graded"}
    assert queued | graded == set(after) and graded  # none left 'running', none lost
    assert queued & in_hand  # what was in hand is queued again, ungraded
    assert all(after[i][1] == 0 for i in queued) and all(after[i][1] == 1 for i in graded)
    assert sum(gradebook_rows(out).values()) == len(graded)
    # The next start grades the rest: every upload graded and recorded exactly once.
    with one_worker() as cluster:
        again = Grading(config, store, require("required"), 1, cluster.scheduler_address)
        again.start()
        until(lambda: store.counts() == {"graded": UPLOADS}, f"not all graded: {again.failed}")
        again.stop()
    hashes = {i: store.upload(i).content_hash for i in after}  # type: ignore[union-attr]
    store.close()
    assert all(recorded == 1 for _, recorded in uploads(out).values())
    rows = gradebook_rows(out)
    assert set(rows.values()) == {1}  # none twice
    # An upload graded after a later one of its student (queued again at the loss, or
    # simply slower) is left out of the gradebook: not the student's latest
    # (`Store.superseded`). Each student's last upload is always there.
    for i in (i for i in after if hashes[i] not in rows):
        assert i in queued and any(j > i and j % 2 == i % 2 for j in after), i
    for student in (0, 1):
        assert hashes[max(i for i in after if i % 2 == student)] in rows
    assert graded <= {i for i in after if hashes[i] in rows}
