"""`grader grade --cluster`: the notebooks run on Dask distributed workers, judged here.

A LocalCluster of two worker processes grades as the local pool does; a worker killed in the
middle of a batch has its notebooks graded by the other, each recorded once; a scheduler lost
in the middle stops the batch with one line, and the same command finishes the rest.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from distributed import Client, LocalCluster
from test_per_student import SECRET
from test_per_student import course as per_student_course

from grader.batch import cluster as cluster_module
from grader.batch.entries import Batch, Entry
from grader.batch.grade import grade_batch
from grader.cli import main
from grader.course.cases import build_cases
from grader.course.config import Config, TimeLimit, load_config
from grader.course.per_student import SECRET_ENV, for_student
from grader.engine import require
from grader.errors import GraderError
from grader.run.sandbox import MAX_OUTPUT

import students
from conftest import REPO, write_notebook

DEMO = REPO / "demo" / "submissions"


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """Two Dask worker processes of one thread each, with their nannies (which restart a
    worker that dies)."""
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    ) as local:
        yield local


def slow_class(folder: Path, count: int, seconds: float = 0.3) -> Path:
    """`count` correct notebooks that each sleep a little: a batch that takes a while."""
    folder.mkdir()
    for i in range(count):
        cells = students.cells()
        cells.insert(1, f"import time\ntime.sleep({seconds})  # student {i}")
        write_notebook(folder / f"s{i:02d}.ipynb", cells)
    return folder


def outcomes(batch: Batch) -> list[tuple[str, object, str]]:
    """Each student's grade as data: score, and per target status, score and mistakes."""
    found: list[tuple[str, object, str]] = []
    for entry in batch.entries:
        report = entry.report
        if report is None:
            found.append((entry.student, None, entry.problem))
            continue
        targets = [(t.name, t.status, t.score, tuple(t.mistakes)) for t in report.targets]
        found.append((entry.student, (report.score, targets), ""))
    return found


def recorded(out: Path) -> Counter[str]:
    """How many gradebook rows each student has."""
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return Counter(row[0] for row in db.execute("SELECT student FROM submissions"))


@pytest.mark.slow
def test_importing_the_cli_and_the_batch_imports_no_dask() -> None:
    code = (
        "import sys, grader.cli, grader.batch.grade\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_cluster_grades_as_the_local_pool(config: Config, cluster: LocalCluster) -> None:
    local = grade_batch(DEMO, config, None, "self_attention", jobs=2)
    remote = grade_batch(DEMO, config, None, "self_attention", cluster=cluster.scheduler_address)
    assert outcomes(remote) == outcomes(local)
    # the demo class has every kind of outcome: full marks, mistakes, errors, unreadable
    scores = {o[1][0] for o in outcomes(local) if o[1] is not None}  # type: ignore[index]
    assert len(scores) > 3 and any(o[1] is None for o in outcomes(local))


def plugin_folders(dask_worker: Any) -> list[str]:
    """Run on a Dask worker: its scratch folder, then the folders of its grading plugins."""
    plugins = dask_worker.plugins.values()
    own = [p.folder for p in plugins if isinstance(p, cluster_module.GradingPlugin)]
    return [dask_worker.local_directory, *own]


@pytest.mark.slow
def test_a_worker_killed_mid_batch_leaves_each_submission_graded_once(
    config: Config, cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 12
    folder = slow_class(tmp_path / "class", count)
    out = tmp_path / "out"
    with Client(cluster.scheduler_address) as client:
        before = client.run(os.getpid)
    killed: list[int] = []
    seen: list[str] = []
    folders: dict[str, list[str]] = {}  # each worker's plugin folders, and its own scratch

    def on_entry(entry: Entry) -> None:
        seen.append(entry.student)
        if len(seen) == 2:  # both workers are busy with the next ones
            with Client(cluster.scheduler_address) as client:
                folders.update(client.run(plugin_folders))
            killed.append(next(iter(before.values())))
            os.kill(killed[0], signal.SIGKILL)

    batch = grade_batch(
        folder, config, out, "self_attention", on_entry=on_entry, cluster=cluster.scheduler_address
    )
    assert killed
    with Client(cluster.scheduler_address) as client:
        client.wait_for_workers(2, timeout=60)
        after = client.run(os.getpid)
    assert killed[0] not in after.values()  # the nanny started a fresh worker in its place
    # the data files' folder is in each worker's scratch folder, and goes with a dead one
    dead = next(address for address, pid in before.items() if pid == killed[0])
    for scratch, *plugin in folders.values():
        assert plugin and all(Path(f).parent == Path(scratch) for f in plugin), folders
    assert folders[dead][1:] and not any(Path(f).exists() for f in folders[dead][1:])
    names = [f"s{i:02d}" for i in range(count)]
    assert sorted(seen) == names  # each answer recorded once
    assert recorded(out) == Counter(names)
    full = {e.student: e.report.score == e.report.max_score for e in batch.entries if e.report}
    assert full == dict.fromkeys(names, True)  # graded elsewhere, not lost


@pytest.mark.slow
def test_workers_of_another_grader_version_are_refused_in_one_line(
    config: Config, cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_module, "grader_version", lambda: "0.0.1-elsewhere")
    address = cluster.scheduler_address
    with pytest.raises(GraderError, match=r"the client 0\.0\.1-elsewhere: install the same") as e:
        grade_batch(DEMO, config, None, "self_attention", cluster=address)
    with Client(address) as client:  # the refusal names the machine to fix (r46 #10)
        workers = set(client.scheduler_info()["workers"])
    assert re.match(r"Dask worker (\S+): this Dask worker has grader", str(e.value))
    assert str(e.value).split()[2].rstrip(":") in workers
    with Client(address) as client:  # the refused plugin is not left for later workers
        plugins = client.run(lambda dask_worker: list(dask_worker.plugins))
    assert not any(name.startswith("attention-grader-") for v in plugins.values() for name in v)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(*command: str) -> subprocess.Popen[bytes]:
    """A Dask scheduler or worker, in a process group of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def start_cluster(address: str, port: int) -> list[subprocess.Popen[bytes]]:
    """A scheduler at `port` and one worker process of two threads, ready to grade."""
    scheduler = start("distributed.cli.dask_scheduler", "--port", str(port), "--no-dashboard")
    worker = start(
        "distributed.cli.dask_worker", address, "--nthreads", "2", "--no-dashboard", "--no-nanny"
    )
    with Client(address, timeout=60) as client:
        client.wait_for_workers(1, timeout=60)
    return [scheduler, worker]


def graded_rows(out: Path) -> int:
    try:
        return sum(recorded(out).values())
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.slow
def test_a_lost_scheduler_is_one_line_and_the_same_command_finishes(tmp_path: Path) -> None:
    count = 16
    folder = slow_class(tmp_path / "class", count)
    out = tmp_path / "out"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out)]
    command += ["--course", str(REPO), "--assignment", "self_attention", "--cluster", address]
    processes = start_cluster(address, port)
    try:
        batch = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while graded_rows(out) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop(processes[0])  # the scheduler
        _, err = batch.communicate(timeout=120)
        lines = err.decode().strip().splitlines()
        assert batch.returncode == 3
        assert [line for line in lines if "Error" in line or "Traceback" in line] == [lines[-1]]
        assert f"the Dask scheduler at {address} stopped answering" in lines[-1]
        assert "the same command grades the rest" in lines[-1]
        kept = graded_rows(out)
        assert 2 <= kept < count
        stop(processes[1])
        processes = start_cluster(address, port)  # the cluster is back, at the same address
        again = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert f"{count - kept} graded, {kept} unchanged" in again.stdout
        assert recorded(out) == Counter(f"s{i:02d}" for i in range(count))
    finally:
        for process in processes:
            stop(process)


@pytest.mark.slow
def test_no_scheduler_at_the_address_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    address = f"tcp://127.0.0.1:{free_port()}"
    args = ["grade", str(DEMO), "--course", str(REPO), "--cluster", address]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if "Error" in line]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert errors[0].startswith(f"Error: --cluster {address}: cannot reach a Dask scheduler")


def test_an_answer_out_of_form_is_the_students_run_stopped() -> None:
    limits = TimeLimit()
    good = {
        "kind": "done",
        "finished": True,
        "timed_out": False,
        "went_silent": False,
        "isolated": True,
        "exit_description": "",
        "wire_error": "",
        "seconds": 0.5,
        "ending": "",
        "note": "",
    }
    run = cluster_module._answer(good, b"", limits)
    assert (run.finished, run.ending, run.seconds) == (True, "", 0.5)
    for bad_header, raw in [
        ({**good, "finished": "yes"}, b""),
        ({**good, "ending": "rm -rf"}, b""),
        ({**good, "exit_description": "x" * 5000}, b""),
        (["not", "a", "dict"], b""),
        (good, "frames as text"),
        (good, b"\0" * (MAX_OUTPUT + 1)),
    ]:
        stopped = cluster_module._answer(bad_header, raw, limits)
        assert (stopped.ending, stopped.finished) == ("lost", False)
        assert "a Dask worker sent" in stopped.exit_description


def per_student_config(tmp_path: Path) -> Config:
    """The bundled course whose self_attention gives each student public cases of their own."""
    return load_config(per_student_course(tmp_path) / "config.yaml")


@pytest.mark.slow
def test_per_student_inputs_run_on_the_cluster_with_each_students_own_cases(
    cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A per-student spec keeps its assignment's id: the cluster ran the plan its workers
    carry under that id (built without the student's seed), while the grader judged against
    the student's own cases, so a correct notebook lost its public cases there."""
    config = per_student_config(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bob"):
        write_notebook(folder / f"{name}.ipynb", students.cells())
    monkeypatch.setenv(SECRET_ENV, SECRET)
    local = grade_batch(folder, config, None, "self_attention", jobs=1)
    remote = grade_batch(folder, config, None, "self_attention", cluster=cluster.scheduler_address)
    assert outcomes(remote) == outcomes(local)
    full = [e.report is not None and e.report.score == e.report.max_score for e in remote.entries]
    assert full == [True, True]


def test_a_task_names_the_plan_its_workers_carry_only_when_it_is_that_very_plan(
    tmp_path: Path,
) -> None:
    """One rule with the local pool (workers.known_plan): the class's plan goes by its
    assignment's id; a student's own cases (same id, other inputs) and a plan of equal but
    other case objects go as themselves."""
    config = per_student_config(tmp_path)
    spec = config.assignment("self_attention")
    carried = {"self_attention": build_cases(spec).plan(spec)}
    assert cluster_module.carried_plan(carried, build_cases(spec).plan(spec)) == "self_attention"
    own = for_student(spec, "ada", SECRET.encode())
    own_plan = build_cases(own).plan(own)
    assert own.id == "self_attention"
    assert cluster_module.carried_plan(carried, own_plan) is own_plan
    copied = [
        (name, [copy.copy(case) for case in cases]) for name, cases in carried["self_attention"]
    ]
    assert cluster_module.carried_plan(carried, copied) is copied


@pytest.mark.slow
def test_the_services_cluster_pool_is_given_the_course_secret(
    cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grader serve --cluster` made its pool without the secret: every upload for an
    assignment with per-student inputs ended as a fault ("the course secret is needed")."""
    from grader.serve.grading import Grading  # the serve extra, which make test installs
    from grader.serve.store import Store

    config = per_student_config(tmp_path)
    monkeypatch.setenv(SECRET_ENV, SECRET)
    store = Store(tmp_path / "out")
    grading = Grading(config, store, require(config.sandbox), 1, cluster.scheduler_address)
    pool = grading._pool(list(config.assignments.values()))
    try:
        assert pool.secret == SECRET.encode()
    finally:
        pool.close()
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_client_stopped_by_a_signal_takes_its_plugin_off_the_cluster(
    cluster: LocalCluster, tmp_path: Path, signum: int
) -> None:
    # r46: Ctrl-C cleaned up; SIGTERM (a service manager) or SIGHUP (a dropped ssh session)
    # ended the client at once and left its plugin on every worker for good: each worker
    # restarted kept one sandboxed pool per such run.
    address = cluster.scheduler_address
    folder = slow_class(tmp_path / "class", 8, seconds=0.5)
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--course", str(REPO)]
    command += ["-a", "self_attention", "--out", str(tmp_path / "out"), "--cluster", address]

    def ours() -> list[str]:
        with Client(address) as client:
            found = client.run(lambda dask_worker: list(dask_worker.plugins))
        return [name for names in found.values() for name in names if "attention-grader" in name]

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ours() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert ours(), "the client never put its plugin on the workers"
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, err
    assert f"stopped by {signal.Signals(signum).name}; what was graded is in" in err
    assert ours() == []
