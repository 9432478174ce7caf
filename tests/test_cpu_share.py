"""A grade does not depend on the machine's load: time limits charge the time the code ran,
slept or read, not the time it waited for a CPU behind other processes (cpu_wait.py); and a
notebook's processes stay in the one session the grader made, which the kernel gives one
share of the CPUs, however many processes it holds (seccomp.session_program)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.course.config import Config, Mode, load_config
from grader.engine import grade_path
from grader.run.child import STALE, _Sampler
from grader.run.cpu_wait import STRETCH, QueueWait, charged

from conftest import repo_config_raw, write_notebook

BURN = """\
import time as _time
def burn(seconds):
    start = _time.thread_time()
    while _time.thread_time() - start < seconds:
        pass
"""


def _one_target_course(tmp_path: Path) -> Config:
    """The bundled self-attention assignment cut to `softmax` on one input, with a 1 s
    limit per cell and per call."""
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    spec["targets"] = {"softmax": dict(spec["targets"]["softmax"], sizes=[{"N": 3}])}
    del spec["mistakes"]  # its mistakes are of the targets cut
    raw["assignments"] = {"self_attention": spec}
    raw["defaults"]["time_limit"] = {"submission": 20, "cell": 1, "call": 1}
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return load_config(folder / "config.yaml")


@pytest.fixture
def one_cpu_shared_with_six_spinners() -> Iterator[None]:
    """This process (and every process it starts: the grader's workers and their students)
    on one CPU, with six busy processes, each in a session of its own (so the kernel's
    autogroups give each a share), on the same CPU: a seventh of it is left."""
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(6)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        os.sched_setaffinity(0, before)


def test_a_student_starved_of_the_cpu_by_other_processes_keeps_the_points(
    tmp_path: Path, one_cpu_shared_with_six_spinners: None
) -> None:
    """A cell and a call that each need a quarter of their 1 s limit of CPU take about
    1.75 s on the clock with a seventh of a CPU: under STRETCH times the limit."""
    config = _one_target_course(tmp_path)
    softmax = BURN + (
        "burn(0.25)\n"
        "def softmax(items_in):\n"
        "    burn(0.25)\n"
        "    e = np.exp(np.asarray(items_in, dtype=float))\n"
        "    return e / e.sum()\n"
    )
    path = write_notebook(tmp_path / "slow.ipynb", ["import numpy as np", softmax])
    report = grade_path(path, config, "self_attention")
    assert report.errors == (), report.errors
    (target,) = report.targets
    assert (target.status, report.score) == ("passed", report.max_score), target.messages


def test_sleeping_counts_against_the_limit(tmp_path: Path) -> None:
    """Time off the CPU that is not spent waiting for one (a sleep) is the code's own."""
    config = _one_target_course(tmp_path)
    softmax = (
        "import time\n"
        "def softmax(items_in):\n"
        "    time.sleep(1.5)\n"
        "    e = np.exp(np.asarray(items_in, dtype=float))\n"
        "    return e / e.sum()\n"
    )
    path = write_notebook(tmp_path / "sleepy.ipynb", ["import numpy as np", softmax])
    (target,) = grade_path(path, config, "self_attention").targets
    assert target.status == "timeout", target


def test_a_limit_charges_the_clock_less_the_wait_but_ends_by_stretch_times_it() -> None:
    assert charged(2.0, 0.5) == 1.5
    assert charged(2.0, 0.0) == 2.0
    assert charged(3.0, 2.9) == pytest.approx(3.0 / STRETCH)  # the clock's bound
    assert charged(1.0, -1.0) == 1.0  # a wait read backwards counts as none


def test_the_wait_is_read_from_the_kernel_and_none_where_it_cannot_be(tmp_path: Path) -> None:
    own = QueueWait()
    first = own.seconds()
    assert own.fd >= 0 and first >= 0.0
    assert own.seconds() >= first
    own.close()
    assert QueueWait(str(tmp_path / "missing")).seconds() == 0.0
    garbled = tmp_path / "garbled"
    garbled.write_text("not numbers")
    assert QueueWait(str(garbled)).seconds() == 0.0


SESSION_PROBE = """\
import os, subprocess
def _session_made():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.write(write, b"new" if os.getsid(0) == os.getpid() else b"kept")
        os._exit(0)
    os.waitpid(pid, 0)
    return os.read(read, 4)
SAID = _session_made()
subprocess.run(["true"], start_new_session=True, check=True)
def softmax(items_in):
    e = np.exp(np.asarray(items_in, dtype=float))
    return e / e.sum() if SAID == b"kept" else e
"""


@pytest.mark.parametrize("sandbox", ["required", "none"])
def test_a_process_of_the_notebook_cannot_make_a_session_of_its_own(
    tmp_path: Path, sandbox: Mode
) -> None:
    """setsid answers as done (a program started in a new session still starts) and leaves
    the process in the student's session: softmax is right only when it stayed. Without
    the sandbox too (r53 #1: there sixty spinners still cost classmates points)."""
    config = _one_target_course(tmp_path)
    path = write_notebook(tmp_path / "sessions.ipynb", ["import numpy as np", SESSION_PROBE])
    report = grade_path(path, config, "self_attention", sandbox=sandbox)
    assert report.errors == (), report.errors
    (target,) = report.targets
    assert target.status == "passed", target.messages


def test_a_tick_of_the_limit_handled_late_is_never_taken_for_the_notebooks_alarm() -> None:
    """r53 #6: a process starved of the CPU runs a tick's handler long after its limit was
    disarmed; taken for the notebook's own alarm, it ended the process (SIGALRM). An alarm
    of the notebook's that was given the timer back is still its own."""
    sampler = _Sampler()
    # The ticks themselves go to a handler that does nothing: `stale` is asked below, when
    # a starved process would run the real one.
    handler = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    try:
        sampler.arm(0.02)
        time.sleep(0.05)  # its ticks come
        sampler.arm(0)
        time.sleep(STALE * 4)  # the handler of the last one runs late
        assert sampler.stale()
        signal.setitimer(signal.ITIMER_REAL, 0.01)  # the notebook's own alarm
        sampler.arm(1.0)  # a limit takes the timer, keeping the alarm
        sampler.arm(0)  # and gives it back
        time.sleep(0.05)  # where it goes off
        assert not sampler.stale()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
