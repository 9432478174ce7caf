"""A head start for `grader check`: its sandboxed worker is started first thing, before the
grader imports NumPy, the judging side and the command line library, so that the worker's
interpreter and NumPy start beside ours instead of after them.

Which worker a command needs (the assignment's preloads) is known only once the config is
read and the notebook recognised. So the answer of the last identical command (the same
arguments, in the same folder, with the same course variables) is remembered on disk, with
the config file's size and time: `note` writes it once the command knows, `start` reads it
at the next start and starts that worker. The engine's worker (workers.py) `adopt`s it only
when its command line is exactly the one the engine would have run (the sandbox's view,
preloads and all); anything else is killed unused. So a stale or wrong plan costs a process
start, never a different sandbox. Only sandboxed workers get a head start, and only where
the sandbox is known to work (probe_memory.py): nothing here probes or waits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.course.cache_home import cache_dir
from grader.run import bwrap, probe_memory
from grader.run.pipes import encode_message

COMMANDS = ("check",)  # the commands that grade one notebook on the shared worker
_ENVIRONMENT = ("GRADER_COURSE", "GRADER_CONFIG")  # what else names the course
# The first message of a shared worker (workers.shared_workers: no cases to warm up on).
_NO_PLANS = pickle.dumps([])
SHARED_INIT = encode_message({"kind": "init", "preload": [], "size": len(_NO_PLANS)}, _NO_PLANS)
_ARGV: list[list[str]] = []  # the command `start` was given
_EARLY: list[tuple[tuple[Any, ...], subprocess.Popen[bytes]]] = []
_LOCK = threading.Lock()


def _plan_path(argv: Sequence[str]) -> Path | None:
    """Where the plan for this command line (in this folder, with these variables) lives."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        here = os.getcwd()
    except OSError:
        return None
    named = [os.environ.get(name, "") for name in _ENVIRONMENT]
    text = repr((here, list(argv), named, os.geteuid())).encode("utf-8", "surrogatepass")
    return folder / f"head-start-{hashlib.blake2b(text, digest_size=20).hexdigest()}.json"


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def note(config: Path, preload: Sequence[str], sandboxed: bool) -> None:
    """Remember what this command (the one `start` was given) needs, once it knows: the
    worker for `preload`, while the course at `config` is unchanged and graded `sandboxed`
    (without a sandbox, or with course files, nothing is remembered). Nothing where `start`
    was not called: grading from Python (a test, check(), the service) plans nothing."""
    path = _plan_path(_ARGV[0]) if _ARGV else None
    if path is None:
        return
    try:
        plan = {"config": str(config.resolve()), "stamp": _stamp(config), "preload": [*preload]}
        if not sandboxed:
            path.unlink(missing_ok=True)
            return
        text = json.dumps(plan, sort_keys=True)
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except (OSError, ValueError):
        return


def _planned(argv: Sequence[str]) -> list[str] | None:
    """The preloads remembered for `argv`, if its course is unchanged since."""
    path = _plan_path(argv)
    try:
        plan = json.loads(path.read_text(encoding="utf-8")) if path else None
        if not isinstance(plan, dict) or _stamp(Path(plan["config"])) != plan["stamp"]:
            return None
        preload = plan["preload"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(preload, list) or not all(isinstance(p, str) for p in preload):
        return None
    return preload


def start(argv: Sequence[str]) -> None:
    """Start the worker the last identical command needed (nothing for other commands, a
    command not seen before, a changed course or an untested sandbox). Never raises."""
    if not argv or argv[0] not in COMMANDS:
        return
    _ARGV[:] = [list(argv)]
    try:
        preload = _planned(argv)
        binary = shutil.which("bwrap")
        if preload is None or binary is None or not probe_memory.remembered(binary):
            return
        launch = bwrap.launch(bwrap.Support(True), (), preload)
        process = _spawn(launch)
    except Exception:  # a head start only: the engine starts its worker as always
        return
    with _LOCK:
        _EARLY.append((_comparable(launch), process))
    try:  # what the shared worker is sent first: warm up on nothing (workers.py)
        assert process.stdin is not None
        os.write(process.stdin.fileno(), SHARED_INIT)
    except OSError:
        discard()


def _spawn(launch: bwrap.Launch) -> subprocess.Popen[bytes]:
    """Start `launch` exactly as the engine's workers do (workers.py)."""
    try:
        return subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **bwrap.process_options(launch),
        )
    finally:
        for fd in launch.pass_fds:
            os.close(fd)


def _comparable(launch: bwrap.Launch) -> tuple[Any, ...]:
    """A launch as compared: all of it but the number of the seccomp filter's descriptor
    (a fresh pipe each time, holding the same filter)."""
    argv = list(launch.argv)
    for at, word in enumerate(argv[:-1]):
        if word == "--seccomp":
            argv[at + 1] = "FD"
    return (tuple(argv), tuple(sorted(launch.env.items())), launch.user, len(launch.pass_fds))


def adopt(launch: bwrap.Launch, init: bytes) -> subprocess.Popen[bytes] | None:
    """The worker started early with exactly `launch`'s command line and already sent
    `init`, which then belongs to the caller (`launch`'s descriptors are closed: the early
    one read its own), else None."""
    with _LOCK:
        for at, (started, process) in enumerate(_EARLY):
            if started == _comparable(launch) and init == SHARED_INIT and process.poll() is None:
                del _EARLY[at]
                break
        else:
            return None
    for fd in launch.pass_fds:
        os.close(fd)
    return process


def discard() -> None:
    """Kill what was started early and not adopted (the plan was stale)."""
    with _LOCK:
        unused = [process for _, process in _EARLY]
        _EARLY.clear()
    for process in unused:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        for pipe in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        process.wait()
