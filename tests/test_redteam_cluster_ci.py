"""Red-team findings on the cluster path (`grader grade --cluster`) and the student-CI path
(`grader check`, `pytest --notebook`): each test shows the hostile or faulty case handled."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from test_cluster import free_port, graded_rows, slow_class, start, start_cluster, stop

from grader.author.export import template

from conftest import REPO

DEMO = REPO / "demo" / "submissions"

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


def _github_steps() -> tuple[dict[str, str], dict[str, str]]:
    """The GitHub template's job env and its steps' scripts, by step id."""
    job = yaml.safe_load(template("github"))["jobs"]["run-autograding-tests"]
    return job["env"], {s["id"]: s["run"] for s in job["steps"] if "id" in s and "run" in s}


@pytest.mark.slow
def test_a_json_module_in_the_students_repository_cannot_forge_the_github_points(
    tmp_path: Path,
) -> None:
    from test_export import run_bash, step_outputs

    env, steps = _github_steps()
    exercise = REPO / "exercises" / "self_attention.ipynb"  # unsolved: few points
    (tmp_path / env["NOTEBOOK"]).write_bytes(exercise.read_bytes())
    # beside the notebook, where the workflow's `python -c` runs: no workflow edit needed
    (tmp_path / "json.py").write_text(
        "def load(handle):\n    return {'score': 99, 'max_score': 99}\n", encoding="utf-8"
    )
    output = tmp_path / "output"
    variables = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum.md")}
    run_bash(steps["grade"], tmp_path, {**env, "GRADER_COURSE": str(REPO), **variables})
    check = [
        str(Path(sys.executable).parent / "grader"),
        "check",
        str(tmp_path / env["NOTEBOOK"]),
        "--format",
        "json",
    ]
    check += ["--course", str(REPO)]
    report = json.loads(subprocess.run(check, capture_output=True, text=True).stdout)
    assert report["score"] < report["max_score"]
    expected = f"{report['score']:g}/{report['max_score']:g}"
    assert step_outputs(output)["points"] == expected


def test_a_pip_package_in_the_students_repository_does_not_run_as_the_install_step(
    tmp_path: Path,
) -> None:
    from test_export import run_bash

    for name in ["github", "gitlab"]:
        if name == "github":
            script = _github_steps()[1]["install"].replace("${{ vars.GRADER_PACKAGE }}", "pip")
        else:
            job = yaml.safe_load(template("gitlab"))["grade-notebook"]
            script = next(line for line in job["before_script"] if "pip install" in line)
        # `python -m pip` in the repository's root would import this pip: the student's
        # code would stand in for the grader's installation, before any sandbox
        hijack = tmp_path / name / "pip"
        hijack.mkdir(parents=True)
        marker = tmp_path / name / "hijacked"
        (hijack / "__init__.py").write_text("")
        (hijack / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
        done = run_bash(script, tmp_path / name, {"GRADER_PACKAGE": "pip", "PIP_NO_INDEX": "1"})
        assert not marker.exists(), (name, script)
        assert "Requirement already satisfied: pip" in done.stdout, (name, done.stderr)


# A Dask worker `--preload`: a machine where no sandbox can be made (no bubblewrap).
NO_SANDBOX = (
    "from grader.run import bwrap\n"
    "bwrap.support = lambda: bwrap.Support(False, 'no bubblewrap on this machine (the test)')\n"
)


@pytest.mark.slow
def test_a_cluster_worker_without_the_sandbox_is_refused_under_auto(tmp_path: Path) -> None:
    # Unsandboxed, a notebook has the network: it could reach the scheduler (no password by
    # default) and run code on every worker, and in this command through Dask's pickles.
    preload = tmp_path / "no_sandbox.py"
    preload.write_text(NO_SANDBOX)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start("distributed.cli.dask_scheduler", "--port", str(port), "--no-dashboard")
    worker = ["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard"]
    processes = [scheduler, start(*worker, "--no-nanny", "--preload", str(preload))]
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader", "grade", str(DEMO), "--out", str(out)]
    command += ["--course", str(REPO), "--assignment", "self_attention", "--cluster", address]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, done.stdout + done.stderr
        assert [line for line in lines if "Error" in line or "Traceback" in line] == [lines[-1]]
        assert "a Dask worker cannot make the sandbox, which a cluster requires" in lines[-1]
        assert "no bubblewrap on this machine (the test)" in lines[-1]
        assert not (out / "gradebook.sqlite").exists() or graded_rows(out) == 0
        # asked for in so many words, a cluster without the sandbox still grades
        unsafe = subprocess.run([*command, "--sandbox", "none"], capture_output=True, text=True)
        assert unsafe.returncode in (0, 1), unsafe.stderr
        assert graded_rows(out) > 0
    finally:
        for process in processes:
            stop(process)


# A task of Dask's left with its exception (as a cancelled gather's waits are, once the last
# worker left), and one of anyone else's, both never retrieved; then asyncio's word at exit.
UNRETRIEVED = (
    "import asyncio, gc, sys\n"
    "from distributed.client import AllExit\n"
    "from grader.batch import cluster\n"
    "if sys.argv[1] == 'quiet':\n"
    "    cluster._quiet_dask()\n"
    "async def fails(exc):\n"
    "    raise exc\n"
    "async def main():\n"
    "    for exc in (AllExit(), ValueError('not a Dask task')):\n"
    "        asyncio.ensure_future(fails(exc))\n"
    "    await asyncio.sleep(0.1)\n"
    "asyncio.run(main())\n"
    "gc.collect()\n"
)


@pytest.mark.parametrize("quiet", ["quiet", "loud"])
def test_a_dask_task_left_with_its_exception_says_nothing_once_connected(quiet: str) -> None:
    err = subprocess.run(
        [sys.executable, "-c", UNRETRIEVED, quiet], capture_output=True, text=True, check=True
    ).stderr
    assert "ValueError: not a Dask task" in err  # another's still said
    assert ("AllExit" in err) == (quiet == "loud")
