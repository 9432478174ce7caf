"""The grader's side of the workers: start them (bwrap.py says how), hand each a job over a
pipe, read its answer with a deadline, and replace any worker that stops answering.

A worker is a fresh process, never a fork of the grader: it inherits no memory, no lock, no
queue, no environment and no file descriptor but its two pipes. The grader parses each
notebook itself (trusted code, bounded), sends the cells and cases, and gets back raw frames
and a small header that it checks like everything else a sandbox says.
"""

from __future__ import annotations

import contextlib
import operator
import os
import pickle
import queue
import select
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

from grader.course.cases import Case
from grader.course.config import TimeLimit
from grader.course.files import DataFile
from grader.course.notebook import CodeCell
from grader.errors import GraderError
from grader.run import bwrap, head_start, memory_group, sandbox
from grader.run.background import Spawner
from grader.run.cpu_wait import STRETCH
from grader.run.pipes import MAX_HEADER, encode_message, read_exact
from grader.run.sandbox import ENDINGS, MAX_OUTPUT, ChildRun

Plan = Sequence[tuple[str, Sequence[Case]]]
START_SECONDS = 60.0  # importing numpy and the preloads, on a busy machine
GRACE_SECONDS = 10.0  # past the child's own deadline, for the worker to kill it and answer
_TEXT = ("exit_description", "wire_error")
_FLAGS = ("finished", "timed_out", "went_silent", "isolated")


class WorkerLost(Exception):
    """The worker did not answer in time, or answered out of form: it has been killed."""


def _wait(fd: int, events: int, deadline: float) -> None:
    poller = select.poll()
    poller.register(fd, events)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WorkerLost("no answer in time")
        if poller.poll(left * 1000):
            return


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    try:
        return read_exact(fd, size, lambda: _wait(fd, select.POLLIN, deadline))
    except EOFError:
        raise WorkerLost("the worker closed its pipe") from None


def _write_all(fd: int, data: bytes, deadline: float) -> None:
    view = memoryview(data)
    while view:
        _wait(fd, select.POLLOUT, deadline)
        try:
            view = view[os.write(fd, view[: 1 << 16]) :]
        except (BrokenPipeError, BlockingIOError) as exc:
            raise WorkerLost("the worker closed its pipe") from exc


def _read_reply(fd: int, deadline: float) -> dict[str, Any]:
    import json

    size = int.from_bytes(_read_exact(fd, 4, deadline), "big")
    if size > MAX_HEADER:
        raise WorkerLost("an oversized header")
    try:
        header = json.loads(_read_exact(fd, size, deadline))
    except ValueError as exc:
        raise WorkerLost("a header that is not JSON") from exc
    if not isinstance(header, dict):
        raise WorkerLost("a header that is not an object")
    return header


def _as_run(header: dict[str, Any], raw: bytes) -> ChildRun:
    """A reply header checked field by field: only booleans, short text and a number."""
    if header.get("kind") != "done":
        raise WorkerLost("an answer of the wrong kind")
    flags = {k: header.get(k) for k in _FLAGS}
    text = {k: header.get(k) for k in _TEXT}
    seconds = header.get("seconds")
    if not all(isinstance(v, bool) for v in flags.values()):
        raise WorkerLost("an answer with bad flags")
    if not all(isinstance(v, str) and len(v) < 1000 for v in text.values()):
        raise WorkerLost("an answer with bad text")
    if not isinstance(seconds, float | int) or isinstance(seconds, bool):
        raise WorkerLost("an answer with a bad time")
    ending = header.get("ending")
    if ending not in ENDINGS:
        raise WorkerLost("an answer with a bad ending")
    return ChildRun(raw=raw, seconds=float(seconds), ending=ending, **flags, **text)  # type: ignore[arg-type]


def checked_run(header: dict[str, Any], raw: bytes) -> ChildRun:
    """A child's run that another process reports (a cluster's worker), checked as a reply
    on a local worker's pipe is; WorkerLost when it is out of form."""
    if not isinstance(raw, bytes) or len(raw) > MAX_OUTPUT:
        raise WorkerLost("an answer of a bad size")
    return _as_run(header, raw)


# Workers are started by one long-lived thread: bubblewrap's --die-with-parent follows the
# thread that started it, and a worker must not die with a request's or a batch's thread.
_SPAWNER = Spawner("grader-spawner")


def known_plan(plans: Sequence[Plan], plan: Plan) -> int | None:
    """The index of the plan among `plans` (those a worker was started with) that holds the
    very same cases, in the same order, as `plan`; None when there is none. Identity, not
    equality: the worker's copy was pickled from these objects, and cases are never changed
    (Case.fresh_args hands out copies), so the same objects mean the same inputs."""
    for index, known in enumerate(plans):
        if len(known) == len(plan) and all(
            name == other and len(cases) == len(theirs) and all(map(operator.is_, cases, theirs))
            for (name, cases), (other, theirs) in zip(known, plan, strict=True)
        ):
            return index
    return None


class Worker:
    """One worker process and its two pipes. `start` execs it; `ready` waits for its warm-up."""

    def __init__(
        self,
        support: bwrap.Support,
        plans: Sequence[Plan],
        preload: Sequence[str],
        files: Sequence[DataFile] = (),
        importable: Sequence[str] = (),
        warm: bool = True,
    ):
        """Start the worker, able to read the course's `files` and import the `preload` and
        `importable` modules, and send it what to import and warm up on (no student data);
        `warm` False: it holds the plans without running them first (a worker for one
        notebook is ready sooner, and its one child gains nothing from a warm-up)."""
        self.support = support
        how = bwrap.launch(support, files, [*preload, *importable])
        self.plans = [[(name, tuple(cases)) for name, cases in p] for p in plans]
        payload = pickle.dumps(self.plans)
        init: dict[str, Any] = {"kind": "init", "preload": list(preload), "size": len(payload)}
        if not warm:
            init["warm"] = False
        self._init = encode_message(init, payload)
        # one started (and sent this very init) at the command's start, else a new one
        early = head_start.adopt(how, self._init, [*preload, *importable])
        self.process = early or _SPAWNER.call(bwrap.spawn, how)
        # an early worker may also have been sent a job (a notebook, head_start.send_job)
        self.early_job = head_start.early_job(early) if early else None
        self.sent_init, self._init = self._init, b"" if early else self._init
        self.jobs = 0
        self.memory: memory_group.Group | None = None  # its cgroup, once ready (if any)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.to_fd, self.from_fd = self.process.stdin.fileno(), self.process.stdout.fileno()

    def ready(self) -> Worker:
        """Wait for the worker to have imported and warmed up; GraderError if it cannot."""
        deadline = time.monotonic() + START_SECONDS
        try:
            _write_all(self.to_fd, self._init, deadline)
            answer = _read_reply(self.from_fd, deadline)
        except WorkerLost as exc:
            self.kill()
            raise GraderError(f"a grading worker could not start: {exc}") from None
        if answer.get("kind") != "ready":
            self.kill()
            raise GraderError("a grading worker could not start")
        # Ready, it forks nothing until sent a job: all its processes are moved at once.
        if memory_group.place() is not None or memory_group.can_pin_oom_mark():
            tree = memory_group.tree(self.process.pid)
            memory_group.pin_oom_mark(tree)
            if memory_group.place() is not None:
                self.memory = memory_group.make(tree, sandbox.MEMORY_LIMIT)
        return self

    def alive(self) -> bool:
        """True while the worker's process has not exited."""
        return self.process.poll() is None

    def _job(
        self, cells: Sequence[CodeCell], plan: Plan, limits: TimeLimit, files: Sequence[DataFile]
    ) -> tuple[dict[str, Any], bytes]:
        """The header and the whole message of the job that runs `cells` on `plan`."""
        numbers = {"submission": limits.submission, "cell": limits.cell, "call": limits.call}
        placed = [(f.inside(self.support.sandboxed), f.name) for f in files]
        header: dict[str, Any] = {"kind": "job", "limits": numbers, "files": placed}
        known = known_plan(self.plans, plan)
        if known is None:
            payload = pickle.dumps((list(cells), [(n, tuple(c)) for n, c in plan]))
        else:  # the worker holds this plan since its start: only the cells cross
            payload, header["plan"] = pickle.dumps(list(cells)), known
        header["size"] = len(payload)
        return header, encode_message(header, payload)

    def busy_with_another(
        self,
        cells: Sequence[CodeCell],
        plan: Plan,
        limits: TimeLimit,
        files: Sequence[DataFile] = (),
    ) -> bool:
        """True, and the worker killed, when it was sent an early job (head_start.send_job)
        that is not byte for byte this one: it is running another notebook, or the same one
        with other cases or limits, and must be replaced. False otherwise."""
        if self.early_job is None or self.early_job == self._job(cells, plan, limits, files)[1]:
            return False
        self.early_job = None
        self.kill()
        return True

    def run(
        self,
        cells: Sequence[CodeCell],
        plan: Plan,
        limits: TimeLimit,
        files: Sequence[DataFile] = (),
    ) -> ChildRun:
        """One student's run, with the course's `files` in its working folder. WorkerLost:
        the worker is dead and must be replaced (also when it was sent an early job that is
        not this one: Workers.run replaces such a worker first, busy_with_another)."""
        header, message = self._job(cells, plan, limits, files)
        early, self.early_job = self.early_job, None
        if self.jobs == 0:  # the next identical `grader check` sends it at once
            head_start.note_job(self.sent_init, header)
        self.jobs += 1
        deadline = time.monotonic() + limits.submission * STRETCH + GRACE_SECONDS
        try:
            if early is None:
                _write_all(self.to_fd, message, deadline)
            elif early != message:
                raise WorkerLost("it was running another job")
            reply = _read_reply(self.from_fd, deadline)
            size = reply.get("size")
            if not isinstance(size, int) or not 0 <= size <= MAX_OUTPUT:
                raise WorkerLost("an answer of a bad size")
            run = _as_run(reply, _read_exact(self.from_fd, size, deadline))
        except WorkerLost:
            self.kill()
            raise
        if self.memory is not None and self.memory.killed():
            return over_memory(run, self.memory.limit)
        return run

    def kill(self) -> None:
        """The worker and everything it started (bubblewrap's sandbox dies with it)."""
        self.signal_kill()
        self.reap()

    def signal_kill(self) -> None:
        """Send the worker's process group SIGKILL, without waiting for it to end (`reap`)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def reap(self) -> None:
        """Close the pipes, wait for the killed worker to end and remove its memory group."""
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        self.process.wait()
        if self.memory is not None:
            self.memory.remove()
            self.memory = None


def over_memory(run: ChildRun, limit: int) -> ChildRun:
    """A run in which the kernel killed one of the notebook's processes because together they
    went over the memory limit (memory_group.py): killed, its answers dropped."""
    text = (
        f"the notebook's process was killed (memory limit: its processes together went over "
        f"{limit / (1 << 30):g} GB)"
    )
    return ChildRun(
        ending="killed", exit_description=text, seconds=run.seconds, isolated=run.isolated
    )


def lost_run(limits: TimeLimit, why: str) -> ChildRun:
    """What a student's run is when its worker had to be killed."""
    text = f"the notebook's worker stopped answering ({why}) and was replaced"
    return ChildRun(timed_out=True, exit_description=text, ending="lost", seconds=limits.submission)


def unstarted_run(why: str) -> ChildRun:
    """What a student's run is when no worker could start to run it (the machine is out of
    processes or memory): the grader's fault, which a batch does not count as the student's."""
    text = f"no worker could start to run this notebook ({why}): a fault of the grader's side"
    return ChildRun(exit_description=text, ending="no_worker")


class Workers:
    """A fixed number of workers, each used by one thread at a time; a worker that fails is
    replaced by a fresh one, so no student can stall the others."""

    def __init__(
        self,
        count: int,
        support: bwrap.Support,
        plans: Sequence[Plan] = (),
        preload: Sequence[str] = (),
        files: Sequence[DataFile] = (),
        importable: Sequence[str] = (),
        warm: bool = True,
    ) -> None:
        """Start `count` workers (in parallel), each able to read the course's `files` and
        import the `preload` modules (imported at once) and the `importable` ones (on a
        notebook's demand), and wait until each has warmed up (on `plans`, unless `warm` is
        False: see Worker)."""
        self.support, self.plans, self.preload = support, list(plans), list(preload)
        self.files, self.importable = tuple(dict.fromkeys(files)), tuple(importable)
        self.warm = warm
        self.idle: queue.Queue[Worker] = queue.Queue()
        self.closed = False
        started = [
            Worker(support, plans, preload, self.files, self.importable, warm) for _ in range(count)
        ]
        self.all = list(started)
        try:
            for worker in started:
                self.idle.put(worker.ready())
        except GraderError as exc:
            for worker in started:
                worker.kill()
            if support.sandboxed and bwrap.forget_remembered():
                raise GraderError(
                    f"{exc}; the sandbox worked at an earlier start on this machine, not now: "
                    "the same command again probes it afresh"
                ) from None
            raise

    def _fresh(self, old: Worker) -> Worker:
        """A new worker in `old`'s place; GraderError once the workers are closed (a batch
        stopped by Ctrl-C must not start one for the job a thread still holds)."""
        if self.closed:
            raise GraderError("the grading workers were stopped")
        worker = Worker(
            self.support, self.plans, self.preload, self.files, self.importable, self.warm
        )
        self.all = [w for w in self.all if w is not old] + [worker]
        if self.closed:  # closed while it started: close() may not have seen it
            worker.kill()
            raise GraderError("the grading workers were stopped")
        return worker.ready()

    def run(
        self,
        cells: Sequence[CodeCell],
        plan: Plan,
        limits: TimeLimit,
        files: Sequence[DataFile] | None = None,
    ) -> ChildRun:
        """Run one student's notebook on the next free worker, with `files` of the course
        (default: all the workers' own) in its working folder. A worker lost mid-run (killed
        from outside: a student's process cannot reach it) is replaced and the run tried
        once more on the fresh one; a second loss is the student's run, stopped."""
        files = self.files if files is None else tuple(files)
        if unseen := [f.name for f in files if f not in self.files]:
            raise GraderError(f"the workers were started without the course files {unseen}")
        worker = self.idle.get()
        try:
            for _attempt in range(2):
                try:
                    if not worker.alive() or worker.busy_with_another(
                        cells, plan, limits, files
                    ):  # killed from outside since its last job, or sent another early
                        worker = self._fresh(worker)
                    run = worker.run(cells, plan, limits, files)
                    break
                except WorkerLost as exc:
                    run = lost_run(limits, str(exc))
                    if self.closed:
                        break
                    worker = self._fresh(worker)  # a fresh exec, never a fork of this one
                except GraderError as exc:  # no fresh worker could start (the machine is
                    # out of processes or memory): this student's run, not the class, stops;
                    # the next job tries a fresh one again
                    run = unstarted_run(str(exc))
                    break
        finally:
            self.idle.put(worker)
        run.isolated = self.support.sandboxed
        run.note = "" if run.isolated else bwrap.note(self.support)
        return run

    def close(self) -> None:
        """Stop every worker now, even mid-submission (their children die with them)."""
        self.closed = True
        stopping = list(self.all)
        for worker in stopping:  # all at once: their sandboxes are torn down side by side
            worker.signal_kill()
        for worker in stopping:
            worker.reap()


_SHARED: dict[tuple[bwrap.Support, tuple[DataFile, ...], tuple[str, ...]], Workers] = {}
_SHARED_LOCK = threading.Lock()


def shared_workers(
    support: bwrap.Support,
    files: Sequence[DataFile] = (),
    importable: Sequence[str] = (),
    plans: Sequence[Plan] = (),
) -> Workers:
    """One worker kept for single notebooks (`grader check`, `check()`, the pytest plugin,
    a loop over `grade_path`) per set of course `files` and `importable` modules (not
    imported until a notebook does): it holds no student's data, so it serves them all.
    `plans`: the cases it holds from its start, when this call starts it (`grader check`:
    the assignment's, so that its job carries the cells alone; not warmed up on: one
    notebook gains nothing from it); a job for other cases carries them, as always."""
    key = (support, tuple(files), tuple(importable))
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Workers(1, key[0], plans, files=key[1], importable=key[2], warm=False)
        return _SHARED[key]
