"""Past one machine: a batch's notebooks run on Dask distributed workers.

Each Dask worker process starts the warm sandboxed pool once (`GradingPlugin`); a task
carries one notebook's bytes and its case plan (or the name of one the plugin carried to
every worker once: 50 KiB less per task), and returns what a local worker's pipe
returns: a few flags, two short texts, a number and the child's raw frames. Parsing, choosing
the assignment, the course's own code, judging and the gradebook stay with the client, which
checks each answer as it checks a local worker's and decodes the frames itself (numbers
only). Dask moves tasks off a worker that dies; the client records each answer once.

Only this module imports Dask: it is the `cluster` extra, needed for `--cluster` only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from distributed import Client, WorkerPlugin, get_worker
from distributed.comm.core import CommClosedError
from distributed.scheduler import KilledWorker

from grader.batch.gradebook import grader_version
from grader.batch.pool import Job, Pool, PoolLost
from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec, Config, Mode, TimeLimit
from grader.course.files import DataFile
from grader.course.notebook import CodeCell, Submission, load_submission
from grader.engine import require
from grader.errors import GraderError, UsageError
from grader.run import bwrap
from grader.run.sandbox import ChildRun
from grader.run.workers import Plan, WorkerLost, Workers, checked_run, known_plan, lost_run

CONNECT_SECONDS = 10.0  # to reach the scheduler (again, once lost: then the batch stops)
ANSWER_SECONDS = 2 * CONNECT_SECONDS  # for it to answer, once reached
WORKERS_SECONDS = 30.0  # for a first worker to join it
CLOSE_SECONDS = 5.0
IN_FLIGHT_PER_SLOT = 4  # tasks handed out per Dask thread: none waits for the next job
POLL_SECONDS = 5.0  # how often a task's wait asks whether any worker is left to run it
NO_WORKER_SECONDS = WORKERS_SECONDS  # with none that long, the batch stops (PoolLost)
_NOTE_CHARS = 1000


class WorkerRefused(GraderError):
    """Raised by a task on a Dask worker whose grading plugin could not start (another
    grader version, no sandbox where one is required): the client stops the batch with it."""


class GradingPlugin(WorkerPlugin):
    """Installed on every Dask worker (present and future): starts one sandboxed worker per
    Dask thread, warmed up on the batch's cases, with the course's data files beside it."""

    def __init__(
        self,
        mode: Mode,
        plans: Mapping[str, Plan],
        preload: Sequence[str],
        files: Sequence[tuple[str, bytes]],
    ) -> None:
        """What the workers need: the sandbox mode (each machine makes its own sandbox), the
        cases to warm up on, the modules to preload and the data files' names and bytes."""
        self.mode, self.plans, self.preload = mode, dict(plans), list(preload)
        self.file_data = list(files)
        self.version = grader_version()
        self.workers: Workers | None = None
        self.files: dict[str, DataFile] = {}
        self.folder = ""
        self.refused = ""  # why start() failed on this worker, if it did

    async def setup(self, worker: Any) -> None:
        """Start the sandboxed pool off the worker's event loop (it takes a second or two)."""
        try:
            await asyncio.to_thread(self.start, worker.state.nthreads, worker.local_directory)
        except Exception as exc:  # Dask logs it and keeps the worker: its tasks say why
            reason = " ".join(str(exc).split())[:_NOTE_CHARS] or type(exc).__name__
            # which of the machines it is: the one to fix, among many (r46 #10)
            self.refused = f"Dask worker {worker.address}: {reason}"
            if isinstance(exc, GraderError):  # its kind kept: the exit code says it
                raise type(exc)(self.refused) from None
            raise

    def start(self, count: int, scratch: str | None = None) -> None:
        """Write the data files to a private folder and start `count` sandboxed workers. The
        folder is made in the Dask worker's own scratch folder (`scratch`) when it has one:
        a worker killed before its teardown leaves it there, and Dask removes the scratch
        folders of dead workers when the next one starts."""
        if self.version != grader_version():
            raise GraderError(
                f"this Dask worker has grader {grader_version()}, the client {self.version}: "
                "install the same grader, built from the same code, on every machine"
            )
        self.folder = tempfile.mkdtemp(prefix="grader-cluster-", dir=scratch)
        for name, data in self.file_data:
            path = Path(self.folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o444)
            self.files[name] = DataFile(name, path)
        files = list(self.files.values())
        plans = list(self.plans.values())
        # 'auto' is 'required' here: a notebook run without the sandbox has the network, and
        # from there the scheduler, which runs anyone's code on every worker (and whose
        # answers the client unpickles); only `--sandbox none`, said so, runs without it
        support = require(self.mode)
        if self.mode == "auto" and not support.sandboxed:
            raise UsageError(
                "a Dask worker cannot make the sandbox, which a cluster requires unless told "
                f"--sandbox none (then any notebook can run code on every worker): {support.reason}"
            )
        self.workers = Workers(count, support, plans, self.preload, files)

    def teardown(self, worker: Any) -> None:
        """Stop the sandboxed workers and remove the data files."""
        if self.workers is not None:
            self.workers.close()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def run(
        self,
        cells: Sequence[CodeCell],
        plan: Plan | str,
        limits: TimeLimit,
        names: Sequence[str],
    ) -> ChildRun:
        """One student's run on the next free sandboxed worker of this process; `plan`, or
        the plan this plugin carries under that name."""
        if self.workers is None:
            raise WorkerRefused(self.refused or "its grading plugin has not started")
        files = [self.files[name] for name in names]
        cases = self.plans[plan] if isinstance(plan, str) else plan
        return self.workers.run(cells, cases, limits, files)


def run_submission(
    plugin: str,
    name: str,
    data: bytes,
    plan: Plan | str,
    limits: tuple[float, float, float],
    files: tuple[str, ...],
) -> tuple[dict[str, Any], bytes]:
    """A task, on a Dask worker: parse the notebook's bytes (as the client did), run its
    cells and `plan`'s calls in a sandboxed child, and answer as a local worker's pipe does."""
    grading = get_worker().plugins[plugin]
    assert isinstance(grading, GradingPlugin)
    cells = load_submission(Path(name), data).cells
    run = grading.run(cells, plan, TimeLimit(*limits), files)
    header: dict[str, Any] = {
        "kind": "done",
        "finished": run.finished,
        "timed_out": run.timed_out,
        "went_silent": run.went_silent,
        "isolated": run.isolated,
        "exit_description": run.exit_description,
        "wire_error": run.wire_error,
        "seconds": run.seconds,
        "ending": run.ending,
        "note": run.note,
    }
    return header, run.raw


def _answer(header: Any, raw: Any, limits: TimeLimit) -> ChildRun:
    """The task's answer, believed only in its checked form: junk is the student's run,
    stopped (as from a local worker that sent junk)."""
    try:
        if not isinstance(header, dict):
            raise WorkerLost("an answer that is not an object")
        run = checked_run(header, raw)
    except WorkerLost as exc:
        return lost_run(limits, f"a Dask worker sent {exc}")
    note = header.get("note")
    run.note = note if isinstance(note, str) and len(note) < _NOTE_CHARS else ""
    return run


def carried_plan(plans: Mapping[str, Plan], plan: Plan) -> str | Plan:
    """What a task names its plan by: the id the plugin carries it under when it is that
    very plan (the local pool's rule, workers.known_plan: the same case objects), else the
    plan itself (an assignment the batch did not expect, or a student's own public cases,
    which keep their assignment's id)."""
    known = known_plan(list(plans.values()), plan)
    return list(plans)[known] if known is not None else plan


class ClusterPool(Pool):
    """A batch's pool whose children run on a Dask cluster: parsing happens here (trusted,
    bounded), the course's own code on one local sandboxed worker, each student's cells on
    the cluster."""

    def __init__(
        self,
        address: str,
        config: Config,
        requested: str | None,
        assignments: Sequence[AssignmentSpec],
        support: bwrap.Support,
        mode: Mode,
    ) -> None:
        """Connect to the scheduler at `address`, install the plugin on its workers, and
        start the one local worker for the course's own code."""
        self.address = address
        self.client = _connect(address)
        # when the scheduler last had a worker, and when it was last asked (see _result)
        self._lock = threading.Lock()
        self._worker_seen = self._asked = time.monotonic()
        # one name per batch: several batches (courses) may share a cluster
        self.plugin = f"attention-grader-{uuid.uuid4().hex}"
        try:
            self.slots = max(1, sum(self.client.nthreads().values()))
            plans = {a.id: build_cases(a).plan(a) for a in assignments}
            preload = list(dict.fromkeys(name for a in assignments for name in a.preload))
            files = dict.fromkeys(file for a in assignments for file in a.files)
            data = [(file.name, file.source.read_bytes()) for file in files]
            plugin = GradingPlugin(mode, plans, preload, data)
            self.plans = plans  # what the plugin carries, by assignment id
            self.client.register_plugin(plugin, name=self.plugin)
            threads = IN_FLIGHT_PER_SLOT * self.slots
            super().__init__(config, requested, 1, assignments, support, threads=threads)
        except BaseException:  # e.g. a worker of another grader version refused it
            with contextlib.suppress(Exception):  # not left for workers that join later
                self.client.unregister_worker_plugin(self.plugin)
            self.client.close()
            raise

    def execute(
        self, job: Job, submission: Submission, assignment: AssignmentSpec, plan: Plan
    ) -> ChildRun:
        """Run the notebook on the cluster: a worker that dies mid-task has the task moved
        to another by Dask; a lost scheduler stops the batch (PoolLost)."""
        limits = assignment.time_limit
        numbers = (limits.submission, limits.cell, limits.call)
        names = tuple(file.name for file in assignment.files)
        carried = carried_plan(self.plans, plan)
        args = (self.plugin, job.path.name, job.data, carried, numbers, names)
        try:
            future = self.client.submit(run_submission, *args, pure=False)
            header, raw = self._result(future)
        except WorkerRefused as exc:  # it would fail every task handed to it, at once
            raise PoolLost(
                f"a Dask worker of the scheduler at {self.address} cannot grade ({exc}); what "
                "was graded is kept in the gradebook, and the same command grades the rest "
                "once every worker can"
            ) from None
        except KilledWorker:  # the task killed worker after worker: not retried further
            return lost_run(limits, "Dask workers died running it, one after another")
        except (concurrent.futures.CancelledError, CommClosedError, OSError) as exc:
            if self.client.status == "running":
                raise
            raise PoolLost(
                f"the Dask scheduler at {self.address} stopped answering "
                f"({type(exc).__name__}); what was graded is kept in the gradebook, and the "
                "same command grades the rest"
            ) from None
        return _answer(header, raw, limits)

    def _result(self, future: Any) -> Any:
        """The task's answer, however long the queue; PoolLost once the scheduler has had no
        worker for NO_WORKER_SECONDS (the last one left and none took its place: Dask would
        keep the task, and the batch, waiting for ever)."""
        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except TimeoutError:  # Dask's, the built-in one (an OSError: caught here first)
                pass
            if self._without_workers() >= NO_WORKER_SECONDS:
                future.cancel()
                raise PoolLost(
                    f"the Dask scheduler at {self.address} has had no worker for "
                    f"{NO_WORKER_SECONDS:g} s; what was graded is kept in the gradebook, and "
                    "the same command grades the rest once workers run again"
                )

    def _without_workers(self) -> float:
        """For how long the scheduler has had no worker, as last asked (one question a
        POLL_SECONDS for all the batch's threads)."""
        with self._lock:
            now = time.monotonic()
            if now - self._asked >= POLL_SECONDS:
                self._asked = now
                if self.client.nthreads():
                    self._worker_seen = now
            return now - self._worker_seen

    def close(self) -> None:
        """Take the plugin off the workers (their sandboxed pools stop), disconnect, and
        stop the local worker."""
        if self.client.status == "running":
            with contextlib.suppress(Exception):
                self.client.unregister_worker_plugin(self.plugin)
        with contextlib.suppress(Exception):  # a lost scheduler: nothing more to say to it
            self.client.close(timeout=CLOSE_SECONDS)
        super().close()


def _connect(address: str) -> Client:
    """A client of the scheduler at `address` that has a worker at least; UsageError (one
    line) when there is none."""
    _quiet_dask()
    client = _client(address)
    try:
        client.wait_for_workers(1, timeout=WORKERS_SECONDS)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise UsageError(f"--cluster {address}: no Dask worker joined it ({exc})") from None
    return client


def _quiet_dask() -> None:
    """The grader says in one line what went wrong with the cluster: Dask's own log of a lost
    connection (tracebacks, on stderr) would bury it. That includes asyncio's word on a task
    of Dask's left with its exception at the end (the waits a cancelled gather leaves when the
    last worker is gone: 'Task exception was never retrieved', distributed.client.AllExit)."""
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL)
    quiet = logging.getLogger("asyncio")
    if not any(isinstance(each, _DaskTaskEnded) for each in quiet.filters):
        quiet.addFilter(_DaskTaskEnded())


class _DaskTaskEnded(logging.Filter):
    """Drops asyncio's records of an exception raised by Dask's own code; others pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for an exception of a `distributed` module."""
        exc = record.exc_info[1] if record.exc_info else None
        return exc is None or type(exc).__module__.split(".")[0] != "distributed"


def _client(address: str) -> Client:
    """A client connected to the scheduler at `address`; UsageError (one line) when there is
    none there, within ANSWER_SECONDS even where something else answers (Dask's handshake
    waits for ever on a server that never says a word, and takes a web server's answer for
    the size of a frame): the client is made in a thread of its own, left behind if late."""
    made: list[Client] = []
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            made.append(Client(address, timeout=CONNECT_SECONDS, set_as_default=False))
        except BaseException as exc:  # said by the caller, in one line
            failed.append(exc)

    thread = threading.Thread(target=connect, name="grader-dask-connect", daemon=True)
    thread.start()
    thread.join(ANSWER_SECONDS)
    if made:
        return made[0]
    if not failed:
        raise UsageError(
            f"--cluster {address}: no Dask scheduler answered there in {ANSWER_SECONDS:g} s "
            "(is it the scheduler's address and port?)"
        )
    exc = failed[0]
    if address.startswith("tls://") and "ssl_context" in str(exc):  # no certificate given
        raise UsageError(
            f"--cluster {address}: a tls:// scheduler needs this client's certificates: set "
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT "
            "and DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY (docs/cluster.md)"
        )
    if isinstance(exc, (OSError, TimeoutError, ValueError)):
        raise UsageError(f"--cluster {address}: cannot reach a Dask scheduler there ({exc})")
    if isinstance(exc, Exception):  # e.g. MemoryError: a web server's answer read as a size
        raise UsageError(
            f"--cluster {address}: what answers there is not a Dask scheduler "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
        )
    raise exc  # Ctrl-C and the like
