"""How a worker makes each student's process: the plan it already holds is not sent again,
and a child cloned straight into its own namespaces is an ordinary process to its code."""

from __future__ import annotations

import errno
import importlib
import os
import pickle
import threading
import time
from pathlib import Path

import pytest

from grader.course.cases import build_cases
from grader.course.config import Config, TimeLimit
from grader.course.notebook import CodeCell, load_submission
from grader.run import bwrap, isolation, sandbox, seccomp
from grader.run.sandbox import Child, Limits
from grader.run.workers import Workers, known_plan

from conftest import write_notebook


def test_a_plan_is_known_by_its_very_cases_not_by_equal_ones(config: Config) -> None:
    assignment = config.assignment("self_attention")
    plan = build_cases(assignment).plan(assignment)
    other = config.assignment("self_attention")
    started = [plan[:1], plan]
    assert known_plan(started, build_cases(other).plan(other)) == 1  # rebuilt: same cases
    assert known_plan(started, [(name, list(cases)) for name, cases in plan[:1]]) == 0
    assert known_plan(started, pickle.loads(pickle.dumps(plan))) is None  # equal copies
    assert known_plan(started, plan[1:]) is None
    assert known_plan(started, [(plan[0][0], plan[0][1][1:])]) is None
    assert known_plan(started, [("renamed", plan[0][1])]) is None
    assert known_plan([], plan) is None


@pytest.mark.slow
def test_a_known_plan_and_a_sent_one_give_the_same_answers(config: Config, tmp_path: Path) -> None:
    assignment = config.assignment("self_attention")
    plan = build_cases(assignment).plan(assignment)
    exercise = Path(__file__).resolve().parent.parent / "solutions" / "self_attention.ipynb"
    cells = load_submission(exercise).cells
    workers = Workers(1, bwrap.Support(False, "test"), [plan])
    try:
        held = workers.run(cells, plan, assignment.time_limit)
        sent = workers.run(cells, pickle.loads(pickle.dumps(plan)), assignment.time_limit)
    finally:
        workers.close()
    assert held.finished and sent.finished
    assert held.raw == sent.raw
    assert sum(head["kind"] == "result" for head, _ in held.frames) == sum(
        len(cases) for _, cases in plan
    )


def test_the_clone_call_is_one_the_filter_knows() -> None:
    assert seccomp.number("clone", "x86_64") == 56
    assert seccomp.number("clone", "aarch64") == 220


ORDINARY = """\
import os, signal, subprocess, threading
seen = {"pid": os.getpid()}
box = []
worker = threading.Thread(target=lambda: box.append(threading.get_native_id()))
worker.start()
worker.join()
seen["thread"] = bool(box) and box[0] != os.getpid()
seen["echo"] = subprocess.run(["/bin/echo", "hi"], capture_output=True).stdout.decode()
pid = os.fork()
if pid == 0:
    os._exit(3)
seen["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
caught = []
signal.signal(signal.SIGUSR1, lambda *args: caught.append(args[0]))
signal.raise_signal(signal.SIGUSR1)
seen["signal"] = caught == [signal.SIGUSR1]
print(sorted(seen.items()))
"""


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_cloned_child_runs_threads_processes_and_signals(tmp_path: Path) -> None:
    support = bwrap.support()
    assert support.sandboxed, support.reason
    cells = load_submission(write_notebook(tmp_path / "s.ipynb", [ORDINARY])).cells
    workers = Workers(1, support)
    try:
        run = workers.run(cells, [], TimeLimit())
    finally:
        workers.close()
    assert run.finished and run.isolated, run.exit_description
    said = [head["output"] for head, _ in run.frames if head["kind"] == "cells_done"]
    expected = [("echo", "hi\n"), ("fork", 3), ("pid", 1), ("signal", True), ("thread", True)]
    assert said == [f"{expected}\n"]


def test_namespaces_the_kernel_refuses_make_a_sandbox_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse() -> int:
        raise isolation.IsolationError(errno.EPERM, "clone: Operation not permitted")

    monkeypatch.setattr(isolation, "fork_isolated", refuse)
    payload = pickle.dumps(([CodeCell(1, "print('ran')", "print('ran')")], []))
    read_fd, write_fd = os.pipe()
    saved = os.dup(0)
    os.dup2(read_fd, 0)  # the child takes its job from its standard input
    try:
        os.write(write_fd, payload)
        child = Child(len(payload), Limits(), isolated=True)
        run = child.collect()
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_fd, write_fd):
            os.close(fd)
    assert child.took_payload  # the job stream stays in step for the next student
    assert run.ending == "sandbox_fault" and not run.finished
    assert b"ran" not in run.raw


def test_a_caller_with_threads_forks_through_the_c_library_and_relays() -> None:
    # Root may clone namespaces (as the sandboxed worker may inside bubblewrap). A process
    # with a second thread must not clone(2) bare: it forks first, and the relay it leaves
    # passes on how the namespace's PID 1 ended.
    read_fd, write_fd = os.pipe()
    helper = os.fork()
    if helper == 0:  # pragma: no cover - reports through the pipe
        try:
            stop = threading.Event()
            threading.Thread(target=stop.wait, daemon=True).start()
            pid = isolation.fork_isolated()
            if pid == 0:
                time.sleep(0.5)
                os._exit(7 if os.getpid() == 1 and not isolation._REFUSED else 5)
            time.sleep(0.2)
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            os.write(write_fd, repr((len(children), status)).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    said = os.read(read_fd, 100).decode()
    os.close(read_fd)
    os.waitpid(helper, 0)
    assert said == "(1, 7)", said  # a relay with one child, PID 1, whose end it passed on


@pytest.mark.sandbox
@pytest.mark.parametrize("code", [72, 73])
def test_a_notebook_that_exits_with_the_grader_fault_codes_is_its_own_exit(
    code: int, tmp_path: Path
) -> None:
    # 72 and 73 say the sandbox or the course's files could not be set up, but only from a
    # child that never said it was set up: the notebook's own os._exit is not the grader's
    # fault (in a batch, a grader fault is not graded at all: the author would get no zero)
    support = bwrap.support()
    assert support.sandboxed, support.reason
    cells = load_submission(write_notebook(tmp_path / "s.ipynb", [f"import os; os._exit({code})"]))
    workers = Workers(1, support)
    try:
        run = workers.run(cells.cells, [], TimeLimit())
    finally:
        workers.close()
    assert run.ending == "exited" and f"exit code {code}" in run.exit_description, run


@pytest.mark.parametrize("code", [72, 73])
def test_a_notebook_that_sends_too_much_then_exits_with_a_fault_code_is_its_own_exit(
    code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stream larger than the limit is dropped, but not the child's word that it was set
    # up: a notebook that writes too much to its pipe and then exits 72 or 73 is its own
    # exit, not a grader fault (which would leave it ungraded: no zero, in a batch).
    monkeypatch.setattr(sandbox, "MAX_OUTPUT", 4096)
    source = (
        "import os, stat\n"
        # whatever its number: the grader's caller may hold many descriptors open (CI does)
        "fd = next(f for f in sorted(map(int, os.listdir('/proc/self/fd'))) if f > 2"
        " and os.path.exists(f'/proc/self/fd/{f}') and stat.S_ISFIFO(os.fstat(f).st_mode))\n"
        "os.write(fd, b'x' * 8192)\n"
        f"os._exit({code})\n"
    )
    # A child forked from this process runs with the modules it holds: like a worker (which
    # imports numpy.random before its first child), so that a child that cannot read the
    # standard library (nobody, under a private interpreter) has what seeding needs.
    importlib.import_module("numpy.random")
    payload = pickle.dumps(([CodeCell(1, source, source)], []))
    read_fd, write_fd = os.pipe()
    saved = os.dup(0)
    os.dup2(read_fd, 0)  # the child takes its job from its standard input
    try:
        os.write(write_fd, payload)
        child = Child(len(payload), Limits(), isolated=False)
        # the child has ended, its bytes still in the pipe, before any of them is read
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        run = child.collect()
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_fd, write_fd):
            os.close(fd)
    assert run.wire_error  # it did send too much
    assert child.took_payload and child.set_up
    assert run.ending == "exited" and f"exit code {code}" in run.exit_description, run


def test_a_notebook_the_grader_stops_for_its_output_is_not_an_unexplained_kill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grader kills a child that sends more than its limit: that SIGKILL is the grader's
    own, not one it cannot name (which a batch grades again at every run)."""
    monkeypatch.setattr(sandbox, "MAX_OUTPUT", 4096)
    source = (
        "import os, stat, time\n"
        "fd = next(f for f in sorted(map(int, os.listdir('/proc/self/fd'))) if f > 2"
        " and os.path.exists(f'/proc/self/fd/{f}') and stat.S_ISFIFO(os.fstat(f).st_mode))\n"
        "os.write(fd, b'x' * 8192)\n"
        "time.sleep(60)\n"
    )
    importlib.import_module("numpy.random")
    payload = pickle.dumps(([CodeCell(1, source, source)], []))
    read_fd, write_fd = os.pipe()
    saved = os.dup(0)
    os.dup2(read_fd, 0)
    try:
        os.write(write_fd, payload)
        run = Child(len(payload), Limits(), isolated=False).collect()
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_fd, write_fd):
            os.close(fd)
    assert run.wire_error and run.ending == "killed", run
    assert run.exit_description == "the grader stopped the notebook's process"
    assert run.exit_description != sandbox.UNEXPLAINED_KILL
