"""`grader serve --cluster`: the service's uploads run on Dask distributed workers (the batch's
ClusterPool), judged and recorded by the service, and the student reads the same feedback as a
local batch writes."""

from __future__ import annotations

import logging
import time
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

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def test_the_service_grades_on_the_cluster_as_a_local_batch(tmp_path: Path, config: Config) -> None:
    (tmp_path / "class").mkdir()
    cells = students.cells(scaled=students.SCALE_HARDCODED)
    notebook = write_notebook(tmp_path / "class" / "alice.ipynb", cells)
    grade_batch(notebook.parent, config, tmp_path / "batch", sandbox="required")
    expected = (tmp_path / "batch" / "feedback" / "alice.html").read_text()
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    ) as cluster:
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
