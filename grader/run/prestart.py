"""Start the shared worker early, on a thread, while this process goes on importing and
reading: `grader check` spends most of its time starting processes (the sandbox's probe, the
worker's interpreter and NumPy), and those can run beside the grader's own imports.

Nothing here changes what happens: `shared_workers` is what the engine calls anyway. A
start-up that fails is forgotten here; the engine's own call meets the same failure and
reports it as it always has.
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from grader.course.config import Config, Mode
from grader.course.files import DataFile
from grader.course.notebook import load_submission
from grader.course.recognise import choose_assignment
from grader.run import bwrap, head_start
from grader.run.workers import shared_workers

_STARTED: list[threading.Thread] = []


def _start(mode: Mode, files: tuple[DataFile, ...], importable: tuple[str, ...]) -> None:
    try:
        _start_settling(mode, files, importable)
    finally:
        bwrap.SETTLED.set()


def _start_settling(mode: Mode, files: tuple[DataFile, ...], importable: tuple[str, ...]) -> None:
    try:
        support = bwrap.choose(mode, settled=False)
        if mode == "required" and not support.sandboxed:
            return  # the engine refuses it (exit 2); no worker to start
        try:
            shared_workers(support, files, importable)
        except Exception:
            # A remembered 'the sandbox works' that no longer holds: probe afresh, so that
            # the engine's own call gets today's answer (and says why, as always).
            if not support.sandboxed or (fresh := bwrap.recheck()) is None:
                raise
            if fresh.sandboxed or mode != "required":
                shared_workers(fresh, files, importable)
    except Exception:  # the engine's own call meets it and reports it
        return


def _speculate(files: tuple[DataFile, ...], importable: tuple[str, ...]) -> None:
    """Start the sandboxed worker while the probe still runs: where the sandbox can be made
    (nearly everywhere bubblewrap is installed) it is the one the engine will ask for; where
    it cannot, it fails to start and is forgotten (the probe says why, as always)."""
    try:
        shared_workers(bwrap.Support(True), files, importable)
    except Exception:  # no sandbox here: the probe's answer decides
        return


def begin(mode: Mode, files: Sequence[DataFile] = (), importable: Sequence[str] = ()) -> None:
    """Begin probing the sandbox and starting the shared worker for these course `files`
    and `importable` modules, in the background (the sandboxed worker beside the probe)."""
    args = (tuple(files), tuple(importable))
    threads = [threading.Thread(target=_start, args=(mode, *args), daemon=True)]
    if mode != "none" and sys.platform == "linux" and shutil.which("bwrap"):
        threads.append(threading.Thread(target=_speculate, args=args, daemon=True))
    bwrap.SETTLED.clear()  # the engine's answer waits for this start's (bwrap.choose)
    try:
        threads[0].start()
    except BaseException:
        bwrap.SETTLED.set()
        raise
    for thread in threads[1:]:
        thread.start()
    _STARTED.extend(threads)


def finish() -> None:
    """Wait for what `begin` started (so that nothing is probed or started twice); a worker
    given a head start that no one adopted is not needed."""
    while _STARTED:
        _STARTED.pop().join()
    head_start.discard()


def begin_for(config: Config, notebook: Path, assignment_id: str | None, mode: Mode | None) -> None:
    """`begin` for the assignment `notebook` will be graded as (the one named, else the one
    it is recognised as); nothing when that cannot be told (the engine will say why)."""
    try:
        spec, _ = choose_assignment(config, load_submission(notebook), assignment_id)
    except Exception:  # the engine reads it again and reports what is wrong
        return
    begin(mode or config.sandbox, spec.files, spec.preload)
