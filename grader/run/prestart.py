"""Start the shared worker early, on a thread, while this process goes on importing and
reading: `grader check` spends most of its time starting processes (the sandbox's probe, the
worker's interpreter and NumPy), and those can run beside the grader's own imports.

Nothing here changes what happens: `shared_workers` is what the engine calls anyway. A
start-up that fails is forgotten here; the engine's own call meets the same failure and
reports it as it always has.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from grader.course.config import Config, Mode
from grader.course.files import DataFile
from grader.course.notebook import load_submission
from grader.course.recognise import choose_assignment
from grader.run import bwrap
from grader.run.workers import shared_workers

_STARTED: list[threading.Thread] = []


def _start(mode: Mode, files: tuple[DataFile, ...], importable: tuple[str, ...]) -> None:
    try:
        support = bwrap.choose(mode)
        if mode == "required" and not support.sandboxed:
            return  # the engine refuses it (exit 2); no worker to start
        shared_workers(support, files, importable)
    except Exception:  # the engine's own call meets it and reports it
        return


def begin(mode: Mode, files: Sequence[DataFile] = (), importable: Sequence[str] = ()) -> None:
    """Begin probing the sandbox and starting the shared worker for these course `files`
    and `importable` modules, in the background."""
    thread = threading.Thread(
        target=_start, args=(mode, tuple(files), tuple(importable)), daemon=True
    )
    thread.start()
    _STARTED.append(thread)


def finish() -> None:
    """Wait for what `begin` started (so that nothing is probed or started twice)."""
    while _STARTED:
        _STARTED.pop().join()


def begin_for(config: Config, notebook: Path, assignment_id: str | None, mode: Mode | None) -> None:
    """`begin` for the assignment `notebook` will be graded as (the one named, else the one
    it is recognised as); nothing when that cannot be told (the engine will say why)."""
    try:
        spec, _ = choose_assignment(config, load_submission(notebook), assignment_id)
    except Exception:  # the engine reads it again and reports what is wrong
        return
    begin(mode or config.sandbox, spec.files, spec.preload)
