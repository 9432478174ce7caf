"""The student's child, as a sandboxed worker forks it: limits, its own namespaces, its frames.

Runs inside the worker (worker.py), never in the grader. The child reads its own job (the
cells and the cases) from the worker's standard input, so the worker never holds a
student's source; it sends frames (see wire.py) on a pipe the worker reads with a deadline.
The worker kills the child's whole process group when the work is done or the time is up.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import resource
import select
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from grader.run import default_signals, isolation, unprivileged
from grader.run.caught import CAUGHT_EXIT, CAUGHT_MARK, CAUGHT_SHARE
from grader.run.cpu_wait import QueueWait, charged
from grader.run.output import Output
from grader.run.wire import FrameReader, Value, WireError, encode_frame

SANDBOX_FAILED = 72
FILES_FAILED = 73
# The child's exit when the notebook's code went on catching the exception that stops it
# at a time limit, the share of the limit past it when it does, and its mark (caught.py).
CAUGHT_LIMIT = CAUGHT_EXIT
MEMORY_LIMIT = 2 << 30
FILE_SIZE_LIMIT = 16 << 20
OPEN_FILES_LIMIT = 64

Frame = tuple[dict[str, Any], dict[str, Value]]

STARTED = encode_frame({"kind": "started"}, {})
# Written once the sandbox and the files are in place, before any of the notebook's code:
# after it, an exit code of SANDBOX_FAILED or FILES_FAILED is the notebook's own os._exit.
SET_UP = encode_frame({"kind": "set_up"}, {})
DONE = encode_frame({"kind": "done"}, {})
MAX_OUTPUT = 64 << 20


@dataclass(frozen=True)
class Limits:
    """Seconds for the whole submission, one cell and one call (config.TimeLimit's numbers)."""

    submission: float = 20.0
    cell: float = 5.0
    call: float = 2.0


# How a child that did not finish ended, as data (its words are `exit_description`).
Ending = Literal[
    "",  # it finished, or has not ended yet
    "time_limit",  # past the submission's time limit
    "silent",  # stopped answering for longer than any cell may take
    "cpu_limit",  # used up its CPU time
    "killed",  # SIGKILL: memory, a signal from outside, or the grader's stop for its output
    "crashed",  # another signal
    "sandbox_fault",  # the sandbox could not be set up (ours)
    "files_fault",  # the course's files could not be put in place (ours)
    "exited",  # exited early
    "stopped",  # ended some other way
    "lost",  # its worker stopped answering and was replaced
    "no_worker",  # no worker could start to run it (ours: the machine's state)
]
ENDINGS: tuple[Ending, ...] = get_args(Ending)
# Endings that mean the notebook ran out of time (a case it never answered timed out).
OVER_TIME: frozenset[Ending] = frozenset({"time_limit", "silent", "cpu_limit", "killed"})
# Endings that are the grader's fault, not the notebook's.
GRADER_FAULTS: frozenset[Ending] = frozenset({"sandbox_fault", "files_fault", "no_worker"})


@dataclass
class ChildRun:
    """What came back from one child: its raw bytes and how it ended.

    Only bytes cross from a worker to the grader; the grader decodes them into frames with
    every check of wire.py.
    """

    raw: bytes = b""
    finished: bool = False
    timed_out: bool = False
    exit_description: str = ""
    ending: Ending = ""
    seconds: float = 0.0
    wire_error: str = ""
    isolated: bool = False
    went_silent: bool = False
    note: str = ""  # set by the grader: why this run had no sandbox, when it had none
    _frames: list[Frame] | None = field(default=None, repr=False, compare=False)

    @property
    def frames(self) -> list[Frame]:
        """The frames the child sent, decoded once; a malformed stream sets `wire_error`."""
        if self._frames is None:
            reader = FrameReader()
            try:
                self._frames = reader.feed(self.raw)
                if reader.pending:
                    self.wire_error = "the student process sent a truncated frame"
            except WireError as exc:
                self._frames, self.wire_error = [], str(exc)
        return self._frames

    def forget_frames(self) -> None:
        """Drop the decoded frames (decoded again if asked for; `wire_error` stays): judging
        calls this when done, so that a run its caller keeps holds only its bytes."""
        self._frames = None


def _limit_child(limits: Limits) -> None:
    cpu = int(limits.submission) + 1
    for which, value, grace in (
        # SIGXCPU at the soft limit (the notebook "used up its CPU-time limit"), SIGKILL a
        # second later should it go on: with the two equal the kernel sends SIGKILL alone.
        (resource.RLIMIT_CPU, cpu, 1),
        (resource.RLIMIT_AS, MEMORY_LIMIT, 0),
        (resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT, 0),
        (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT, 0),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        _, hard = resource.getrlimit(which)
        capped = value + grace if hard == resource.RLIM_INFINITY else min(value + grace, hard)
        resource.setrlimit(which, (min(value, capped), capped))
    _first_for_the_oom_killer()


def _first_for_the_oom_killer() -> None:
    """The host's OOM killer takes the student's processes (this one and all it starts)
    before any other: the address-space limit is per process, and 64 of them can hold more
    than the machine has. Raising one's own score needs no privilege; a notebook may lower
    it again (down to 0, the worker's) unless the grader pinned the worker's at 1000 (it
    can only while holding CAP_SYS_RESOURCE: memory_group.pin_oom_mark)."""
    with contextlib.suppress(OSError):
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)


def _detach_fds(keep: int, workdir: str) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    os.chdir(workdir)
    # As in a Jupyter kernel, the working folder comes first on the import path: a notebook
    # imports the helper modules the course lists there and those its cells write.
    sys.path.insert(0, workdir)
    # One item at a time, not os.environ.update: its generic Mapping checks would copy some
    # fifty more of the worker's pages into every child.
    settings = (
        ("HOME", workdir),
        ("TMPDIR", workdir),
        ("MPLBACKEND", "Agg"),
        ("GRADER_CHILD", "1"),
    )
    for name, value in settings:
        os.environ[name] = value


def place_files(files: Sequence[Sequence[str]], workdir: str, link: bool) -> None:
    """Each course data file, `(where the worker sees it, its name)`, read-only at its name
    in the working folder: a link to the sandbox's read-only bind, or (without a sandbox) a
    read-only copy, so that no notebook changes the course's own file by writing to it."""
    for source, name in files:
        target = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if link:
            os.symlink(source, target)
        else:
            import shutil  # only without the sandbox: a sandboxed worker never loads it

            shutil.copyfile(source, target)
            os.chmod(target, 0o444)


def _take_job(size: int, plan: Any = None) -> tuple[Any, Any]:
    """In the child, before any student code: its cells and plan, from the worker's stdin
    (the cells alone when the worker already holds the `plan`)."""
    from grader.run.pipes import read_exact

    job = pickle.loads(read_exact(0, size))  # the grader's own bytes
    return (job, plan) if plan is not None else job


def _fork(isolated: bool) -> tuple[int, OSError | None]:
    """The student's process: forked into namespaces of its own when `isolated`; and why
    the kernel refused them, if it did (the child, forked plainly then, takes its job and
    ends as a sandbox fault, as one whose sandbox steps failed)."""
    if not isolated:
        return os.fork(), None
    try:
        return isolation.fork_isolated(), None
    except OSError as exc:
        return os.fork(), exc


def _temporary_folder() -> str:
    """A fresh working folder for a child without the sandbox (which has its own). Imported
    here: a sandboxed worker, which `grader check` waits for, loads neither tempfile nor
    shutil (with bz2 and lzma) for nothing."""
    import tempfile

    return tempfile.mkdtemp(prefix="grader-child-")


class Child:
    """One student process, forked by the worker; `collect` waits for its answers."""

    def __init__(
        self,
        payload_size: int,
        limits: Limits,
        isolated: bool,
        files: Sequence[Sequence[str]] = (),
        plan: Any = None,
    ) -> None:
        """Fork now. The child reads `payload_size` bytes of job from standard input itself:
        its cells and plan, or its cells alone when the worker holds the `plan` already.
        `isolated`: the worker runs in the bubblewrap sandbox, and the child adds its own
        namespaces to it; otherwise it runs with the process limits alone. `files`: the
        course data files to place in its working folder (see place_files)."""
        self.limits = limits
        self.isolated = isolated
        self.took_payload = False
        self.set_up = False  # the child said its sandbox and files were in place
        # The child writes after every cell, and after any call that ends more than 0.2 s
        # after its last write; longer silence, past the time the child takes to end code
        # that goes on catching its limit (CAUGHT_SHARE), means it is stuck where its own
        # time limit could not stop it (a swallowed alarm).
        self.silence = max(limits.cell, limits.call) * (1 + CAUGHT_SHARE) + 1.0
        self.workdir = "" if isolated else _temporary_folder()
        # Without the sandbox a root worker's child becomes nobody (unprivileged.py); what
        # that needs is looked up here, once per worker, not in every child.
        drop_root = not isolated and unprivileged.needed()
        if drop_root:
            unprivileged.account()
        read_fd, write_fd = os.pipe()
        self.started = time.monotonic()
        pid, refused = _fork(isolated)
        if pid == 0:  # pragma: no cover - runs in the child, reported through the pipe
            try:
                os.close(read_fd)
                os.setsid()
                cells, plan = _take_job(payload_size, plan)
                os.write(write_fd, STARTED)
                from grader.run.child import cells_budget, serve

                workdir = self.workdir
                if isolated:
                    try:
                        if refused:
                            raise refused
                        workdir = isolation.set_up_child()
                    except BaseException:
                        os._exit(SANDBOX_FAILED)
                try:
                    place_files(files, workdir, link=isolated)
                except BaseException:
                    os._exit(FILES_FAILED)
                _detach_fds(write_fd, workdir)
                _limit_child(limits)
                if drop_root:  # before die_with_parent: a change of user clears it
                    try:
                        unprivileged.drop(workdir)
                    except BaseException:
                        os._exit(SANDBOX_FAILED)
                isolation.die_with_parent()
                if isolated:
                    default_signals.take_default_actions(write_fd)
                else:  # the sandbox's child did this in set_up_child; best effort here
                    with contextlib.suppress(OSError, AttributeError):
                        isolation.keep_session()
                os.write(write_fd, SET_UP)
                budget = cells_budget(limits.submission, limits.cell)
                serve(cells, plan, write_fd, limits.cell, limits.call, budget)
            finally:
                os._exit(71)
        os.close(write_fd)
        self.pid = pid
        self.read_fd = read_fd
        # The child's own wait for a CPU: the deadline and the watchdog below do not count
        # it, as its own limits do not (cpu_wait.py).
        self.queue = QueueWait(f"/proc/{pid}/schedstat")

    def collect(self) -> ChildRun:
        """Read the child's frames until its last one, its end, the submission's time limit or too
        much output; kill its process group and return what it sent."""
        run, frames = self.collect_output()
        try:
            run.raw = bytes(frames)
        finally:
            frames.release()
            self.close_output()
        return run

    def collect_output(self) -> tuple[ChildRun, memoryview]:
        """As `collect`, but the frames are not copied into `run.raw`: they are left where they
        were read, outside the heap (output.py), for the worker to write to the grader from
        there; release the view, then `close_output`, before the next child is forked."""
        run = ChildRun()
        self.output = buffer = Output(MAX_OUTPUT)
        try:
            self._read(buffer, run)
        finally:
            self._mark(buffer)
            self.queue.close()
            self._stop(run, buffer)
        start = len(STARTED) * self.took_payload + len(SET_UP) * self.set_up
        run.isolated = self.isolated
        run.seconds = time.monotonic() - self.started
        return run, buffer.view(start)

    def close_output(self) -> None:
        """Unmap what `collect_output` read: nothing of this child's frames stays behind in
        the memory the next child is forked from."""
        self.output.close()

    def _mark(self, buffer: Output) -> None:
        """Whether the child took its payload and said it was set up (read by _stop): the
        start of its stream says so, and a mark once seen stays (a stream that grew too
        large is dropped, and a notebook's own exit after it is still its own)."""
        self.took_payload = self.took_payload or buffer.startswith(STARTED)
        self.set_up = self.set_up or buffer.startswith(STARTED + SET_UP)

    def _read(self, buffer: Output, run: ChildRun) -> None:
        """Until the child's last frame, its end, the submission's limit, or too much
        output; silence past `silence` ends it too. Both count the clock's time less what the
        child waited for a CPU (cpu_wait.charged)."""
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN | select.POLLHUP)
        heard: tuple[float, float] | None = (self.started, 0.0)  # last heard: clock and wait
        while True:
            now, wait = time.monotonic(), self.queue.seconds()
            heard = heard or (now, wait)
            remaining = self.limits.submission - charged(now - self.started, wait)
            if remaining <= 0:
                run.timed_out = True
                return
            quiet = self.silence - charged(now - heard[0], wait - heard[1])
            if quiet <= 0:  # silent for longer than any cell or target may be
                run.timed_out = run.went_silent = True
                return
            if not poller.poll(max(1, math.ceil(min(remaining, quiet) * 1000))):
                continue
            heard = None  # heard now: the next round's clock and wait are its
            if not buffer.read(self.read_fd):
                return
            if len(buffer) > MAX_OUTPUT:
                run.wire_error = f"the student process sent more than {MAX_OUTPUT >> 20} MB"
                self._mark(buffer)  # what the child said first, before it is dropped
                buffer.clear()
                return
            if buffer.endswith(DONE):
                run.finished = True
                return

    def _stop(self, run: ChildRun, buffer: Output) -> None:
        os.close(self.read_fd)
        # Kill the group (anything the student spawned) and the child itself, in case it
        # had not yet made its own group.
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(self.pid, signal.SIGKILL)
        _, status, usage = os.wait4(self.pid, 0)
        if self.set_up and (signum := default_signals.marked_signal(buffer, status)):
            # Ended by a signal the kernel does not deliver to a PID namespace's first process
            # (default_signals.py): the wait status and the bytes of one it ended.
            status = signum
            buffer.drop_end(len(default_signals.MARKS[signum]))
        if run.went_silent:
            run.ending = "silent"
            run.exit_description = (
                f"the notebook stopped answering for {self.silence:g} s, longer than any cell "
                "or function may take (it kept running past its time limit), and was stopped"
            )
        elif not run.finished and run.wire_error and _killed(status):  # above, by us
            run.ending = "killed"
            run.exit_description = "the grader stopped the notebook's process"
        elif not run.finished:
            cpu = usage.ru_utime + usage.ru_stime
            gave_up = self.set_up and buffer.endswith(CAUGHT_MARK)
            if gave_up:
                buffer.drop_end(len(CAUGHT_MARK))
            run.ending, run.exit_description = _describe_exit(
                status, run.timed_out, self.limits, self.set_up, cpu, gave_up
            )
        if self.workdir:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)


# SIGKILL from nothing the grader can name (not its time or CPU limit, not its own stop): the
# kernel's OOM killer (the student's processes go first) or a signal from outside (an
# administrator, a service stopping). Not provably the notebook's doing, so a batch grades
# the notebook again at its next run instead of keeping this zero (grade._unchanged).
UNEXPLAINED_KILL = (
    "the notebook's process was killed by a signal the grader did not send (a memory "
    "limit, or from outside the grader)"
)


def _killed(status: int) -> bool:
    """Whether a wait status is a SIGKILL's."""
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _describe_exit(
    status: int,
    timed_out: bool,
    limits: Limits,
    set_up: bool = False,
    cpu: float = 0.0,
    gave_up: bool = False,
) -> tuple[Ending, str]:
    """How a child ended; an exit code of ours (SANDBOX_FAILED, FILES_FAILED) counts as the
    grader's fault only from a child that never said it was set up. `cpu`: the seconds of
    CPU it used (a SIGKILL at its CPU limit's hard end is that limit's, not unexplained).
    `gave_up`: the child's stream ends with CAUGHT_MARK (its exit 71 is a caught limit's)."""
    if timed_out:
        text = f"the notebook did not finish within the {limits.submission:g} s time limit"
        return "time_limit", text
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "cpu_limit", "the notebook used up its CPU-time limit"
        if sig == signal.SIGKILL and cpu >= int(limits.submission) + 1:  # _limit_child's
            return "cpu_limit", "the notebook used up its CPU-time limit"
        if sig == signal.SIGKILL:
            return "killed", UNEXPLAINED_KILL
        return "crashed", f"the notebook's process crashed ({signal.Signals(sig).name})"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == SANDBOX_FAILED and not set_up:
        return "sandbox_fault", "the sandbox could not be set up for this notebook (a grader fault)"
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == FILES_FAILED and not set_up:
        return (
            "files_fault",
            "the course's data files could not be put in the notebook's folder (a grader fault)",
        )
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == CAUGHT_LIMIT and gave_up:
        return "time_limit", (
            "the notebook's code went on catching the exception that stops it at the time "
            "limit (a bare `except:` or `except BaseException:` in a loop), so its process "
            "was ended"
        )
    if os.WIFEXITED(status):
        return "exited", f"the notebook's process exited early (exit code {os.WEXITSTATUS(status)})"
    return "stopped", "the notebook's process stopped unexpectedly"
