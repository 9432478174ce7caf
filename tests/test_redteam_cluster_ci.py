"""Red-team findings on the cluster path (`grader grade --cluster`) and the student-CI path
(`grader check`, `pytest --notebook`): each test shows the hostile or faulty case handled."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cluster import free_port, graded_rows, slow_class, start, start_cluster, stop

from conftest import REPO

# The CLI, with the cluster's no-worker wait cut short (the default is 30 s).
SHORT_WAIT = (
    "import sys\n"
    "from grader.batch import cluster\n"
    "cluster.NO_WORKER_SECONDS = 3.0\n"
    "from grader.cli import main\n"
    "sys.argv = ['grader', *sys.argv[1:]]\n"
    "main()\n"
)


@pytest.mark.slow
def test_a_batch_whose_last_worker_leaves_stops_in_one_line(tmp_path: Path) -> None:
    count = 12
    folder = slow_class(tmp_path / "class", count, seconds=0.5)
    out = tmp_path / "out"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    command = [sys.executable, "-c", SHORT_WAIT, "grade", str(folder), "--out", str(out)]
    command += ["--course", str(REPO), "--assignment", "self_attention", "--cluster", address]
    processes = start_cluster(address, port)  # one worker, with no nanny to restart it
    try:
        batch = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while graded_rows(out) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop(processes[1])  # the only worker: Dask keeps the tasks until one joins
        left = time.monotonic()
        try:
            _, err = batch.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            batch.kill()
            batch.communicate()
            pytest.fail("the batch waited for ever for a worker")
        waited = time.monotonic() - left
        lines = err.decode().strip().splitlines()
        assert batch.returncode == 3, err.decode()
        assert [line for line in lines if "Error" in line or "Traceback" in line] == [lines[-1]]
        assert f"the Dask scheduler at {address} has had no worker for 3 s" in lines[-1]
        assert waited < 30  # the wait cut short, not the default (nor for ever)
        kept = graded_rows(out)
        assert 2 <= kept < count  # what was graded is kept
    finally:
        for process in processes:
            stop(process)


# A Dask worker `--preload`: it claims another grader version, so the plugin cannot start.
OTHER_VERSION = (
    "import grader.batch.cluster as cluster\ncluster.grader_version = lambda: '0.0.0-elsewhere'\n"
)


@pytest.mark.slow
def test_a_worker_that_cannot_grade_joining_mid_batch_stops_it_in_one_line(
    tmp_path: Path,
) -> None:
    count = 24
    folder = slow_class(tmp_path / "class", count, seconds=1.0)
    out = tmp_path / "out"
    preload = tmp_path / "other_version.py"
    preload.write_text(OTHER_VERSION)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out)]
    command += ["--course", str(REPO), "--assignment", "self_attention", "--cluster", address]
    processes = start_cluster(address, port)
    try:
        batch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while graded_rows(out) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = ["distributed.cli.dask_worker", address, "--nthreads", "2"]
        worker += ["--no-dashboard", "--no-nanny", "--preload", str(preload)]
        processes.append(start(*worker))
        said, err = batch.communicate(timeout=300)
        lines = err.decode().strip().splitlines()
        # before: each task handed to it failed at once, as a grader fault, most of the class
        assert "grader fault" not in said.decode() + err.decode()
        assert not (out / "grader-faults.log").exists()
        assert batch.returncode == 3, err.decode()
        assert [line for line in lines if "Error" in line or "Traceback" in line] == [lines[-1]]
        assert f"a Dask worker of the scheduler at {address} cannot grade" in lines[-1]
        assert "has grader 0.0.0-elsewhere" in lines[-1]
        assert 1 <= graded_rows(out) < count
    finally:
        for process in processes:
            stop(process)
