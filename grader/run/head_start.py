"""A head start for `grader check` and `grader grade`: their sandboxed workers are started
first thing, before the grader imports NumPy, the judging side and the command line library,
so that the workers' interpreters and NumPy start beside ours instead of after them.

Which workers a command needs (the preloads, the cases each warms up on) is known only once
the config is read. So what the last such command asked for (the same command and course,
assignment, sandbox and worker options, in the same folder, with the same course variables)
is remembered on disk: each worker's preloads, first message and launch (its command line,
environment, user and seccomp filter, as bwrap.launch made them, and the device, inode, owner,
group and mode of each folder and file the command line binds). `start` starts those workers at
the next start from what was remembered, importing nothing of the sandbox's own (the view,
the filter: tens of milliseconds that would come before the worker could start), nor
hashlib's OpenSSL; only a launch that is bubblewrap's with the sandbox's options, binds no
course files and binds only what it was planned with (`_startable`) is started, and each
is sent its first message; the engine's workers
(workers.py) `adopt` one only when its command line and first message are exactly the ones
the engine would use (the sandbox's view, preloads, cases and all); anything else is not
used (`discard` kills it; at the latest it dies with the grader), nor one whose filter is
not the one the engine's launch holds. So a stale or wrong plan costs a process start, never
a different sandbox or worker. Only sandboxed workers without
course files get a head start, and only where the sandbox is known to work
(probe_memory.py): nothing here probes or waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, used
from grader.run import probe_memory

if TYPE_CHECKING:  # the sandbox's launch is imported where a worker is adopted or noted
    from grader.run import bwrap

COMMANDS = ("check", "grade")  # the commands that start sandboxed workers at once
MAX_WORKERS = 16  # at most this many started early
_ENVIRONMENT = ("GRADER_COURSE", "GRADER_CONFIG")  # what else names the course
KEYED = ("--course", "--config", "--assignment", "--sandbox", "--jobs", "-j", "--cluster")
BINDS = ("--ro-bind", "--ro-bind-try", "--bind")  # bubblewrap's options that bind a host path
# A remembered launch is started only when it is bubblewrap's with at least these options.
SANDBOX_WORDS = ("--unshare-all", "--disable-userns", "--clearenv", "--die-with-parent")
# Where course files are bound (files.SANDBOX_COURSE, without that module's imports; a test
# checks that they agree): a launch that names it never gets a head start.
COURSE_INSIDE = "/sandbox/course"
_ARGV: list[list[str]] = []  # the command `start` was given
_NOTED: list[dict[str, Any]] = []  # what this command asked for, in its plan
_REPLACED: list[str] = []  # the first messages' files the plan `start` replaces named
_EARLY: list[tuple[tuple[Any, ...], bytes, subprocess.Popen[bytes]]] = []
_FILTERS: dict[int, bytes] = {}  # the seccomp filter each early worker (by pid) was given
_PLANNED_JOBS: dict[int, tuple[dict[str, Any], int] | None] = {}  # (header, notebook's word)
_JOBS: dict[int, bytes] = {}  # the job each early worker (by pid) was sent after its init
_JOBS_DECIDED = threading.Event()  # set once send_job has decided (the senders wait for it)
_NOTEBOOK_AT: list[int] = []  # where in the command line the graded notebook is named
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
    text = repr((here, _course_words(argv), named, os.geteuid())).encode(errors="surrogatepass")
    return folder / f"head-start-{blake2b(text, digest_size=20).hexdigest()}.json"


def _course_words(argv: Sequence[str]) -> list[str]:
    """The words of a command line that decide which workers it starts: the command and
    the options that name the course, assignment, sandbox and worker count (not the
    notebook, the output folder or the format: the next notebook of the same course, or
    the same class graded into another folder, needs the same workers)."""
    words = [argv[0]] if argv else []
    for at, word in enumerate(argv):
        name, equals, value = word.partition("=")
        if name in KEYED:
            words += [name, value if equals else (argv[at + 1] if at + 1 < len(argv) else "")]
    return words


def _init_path(plan: Path, init: bytes) -> Path:
    return plan.with_name(f"{plan.stem}-{blake2b(init, digest_size=20).hexdigest()}.init")


def _note(preload: Sequence[str], init: bytes, launch: bwrap.Launch) -> None:
    """Add a worker (its `launch` made for `preload`, its first message) to this command's
    plan."""
    from grader.run import seccomp

    path = _plan_path(_ARGV[0]) if _ARGV else None
    if path is None:
        return
    argv, env, user, _ = _comparable(launch)
    program = seccomp.program()
    sources = [argv[at + 1] for at, word in enumerate(argv[:-1]) if word in BINDS]
    binds = {source: _bind_identity(source) for source in sources}
    started = {
        "argv": [*argv],
        "env": dict(env),
        "user": user,
        "filter": program.hex(),
        "binds": binds,
    }
    asked = {"preload": [*preload], "init": _init_path(path, init).name, "launch": started}
    with _LOCK, contextlib.suppress(OSError, ValueError):
        replaced = [] if _NOTED else _REPLACED[:]  # once, at the command's first worker
        _REPLACED.clear()
        plan = json.loads(path.read_text(encoding="utf-8")) if _NOTED else []
        plan = [*plan, asked] if isinstance(plan, list) else [asked]
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, data in ((_init_path(path, init), init), (path, json.dumps(plan).encode())):
            if target != path and target.is_file():
                continue  # named by its content's hash: already there
            partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            partial.write_bytes(data)
            partial.replace(target)
        _NOTED.append(asked)
        # The first messages only the replaced plan named (the course's cases changed):
        # nothing will start from them again. A later worker of this command that sends one
        # of them writes it anew; a start reading one as it goes starts nothing early.
        for name in set(replaced) - {asked["init"]}:
            with contextlib.suppress(OSError, ValueError):  # ValueError: a NUL in the name
                path.with_name(name).unlink()


def _read_plan(plan: Path) -> Any:
    """The plan at `plan` as JSON, read once; None when it is missing or unreadable."""
    try:
        return json.loads(plan.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep
        return None


def _init_names(plan: Path, asked: Any) -> list[str]:
    """The first messages' files the plan at `plan` (read as `asked`) names: its own only
    (`{stem}-….init`), never a path elsewhere; none when it was missing or unreadable."""
    names = [a.get("init") for a in asked if isinstance(a, dict)] if isinstance(asked, list) else []
    return [
        name
        for name in names
        if isinstance(name, str)
        and Path(name).name == name
        and name.startswith(f"{plan.stem}-")
        and name.endswith(".init")
    ]


def note_notebook(notebook: Path) -> None:
    """Say which word of the command line names the notebook `grader check` grades and runs
    early (prestart.py): the next identical command runs the notebook its command line
    names there, as soon as its worker is started (send_job)."""
    argv = _ARGV[0] if _ARGV else []
    at = next((at for at, word in enumerate(argv) if at and Path(word) == notebook), None)
    _NOTEBOOK_AT[:] = [] if at is None else [at]


def note_job(init: bytes, header: dict[str, Any]) -> None:
    """Add to this command's plan the header of the job a worker (the one sent `init`) was
    given for the notebook named in the command line (note_notebook), all but its size:
    the next identical `grader check` sends that worker the same job for its notebook."""
    path = _plan_path(_ARGV[0]) if _ARGV and _ARGV[0][0] == "check" else None
    if path is None or not _NOTEBOOK_AT:
        return
    job = {key: value for key, value in header.items() if key != "size"}
    name = _init_path(path, init).name
    with _LOCK, contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
        plan = json.loads(path.read_text(encoding="utf-8"))
        for asked in plan:
            if asked.get("init") == name and "job" not in asked:
                asked["job"], asked["notebook_at"] = job, _NOTEBOOK_AT[0]
                break
        else:
            return
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(plan), encoding="utf-8")
        partial.replace(path)


def _bind_identity(path: str) -> str:
    """What changes when the folder or file at `path` is removed, or replaced by one of
    another kind, owner, group or mode (a staged view pruned, or another user's folder
    made under its name: a stage of the same name built again holds the same files)."""
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_dev}:{info.st_ino}:{info.st_mode}:{info.st_uid}:{info.st_gid}"


def _startable(launch: dict[str, Any], remembered: dict[str, bool]) -> bool:
    """Whether a remembered launch may start now: a sandboxed one (bubblewrap with the
    sandbox's options) without course files, whose bubblewrap's probe is remembered
    (probe_memory.py; `remembered` holds the answers found so far), and whose every bound
    folder and file is still the one it was planned with (_bind_identity: a pruned stage, or a
    folder another user made under its name, is never bound: nothing starts)."""
    argv, binds = launch.get("argv"), launch.get("binds")
    if not (isinstance(argv, list) and argv and isinstance(binds, dict)):
        return False
    words = [str(word) for word in argv]
    sources = {words[at + 1] for at, word in enumerate(words[:-1]) if word in BINDS}
    binary = words[0]
    if binary not in remembered:
        remembered[binary] = os.path.isabs(binary) and probe_memory.remembered(binary)
    return (
        remembered[binary]
        and all(word in words for word in SANDBOX_WORDS)
        and not any(word.startswith(COURSE_INSIDE) for word in words)
        and binds.keys() == sources
        and all(_bind_identity(source) == known for source, known in binds.items())
    )


def _planned(argv: Sequence[str]) -> list[tuple[list[str], bytes]]:
    """The workers the last run of `argv` asked for: each one's preloads and first message."""
    path = _plan_path(argv)
    if path is None:
        return []
    return [(preload, init) for preload, init, _, _ in _planned_launches(path, _read_plan(path))]


Planned = tuple[list[str], bytes, dict[str, Any], tuple[dict[str, Any], int] | None]


def _planned_launches(path: Path, plan: Any) -> list[Planned]:
    """The workers the last run of a command asked for, in its plan at `path` (read as
    `plan`): each one's preloads, first message, launch as remembered (argv, env, user,
    filter) and the job it was sent for the notebook named in its command line (its header
    without the size, and the word's place), if any."""
    if plan is None:
        return []
    workers: list[Planned] = []
    try:
        for asked in plan[:MAX_WORKERS]:
            preload, name, launch = asked["preload"], asked["init"], asked["launch"]
            if not (isinstance(name, str) and name.startswith(f"{path.stem}-")):
                return []
            job = (asked["job"], asked["notebook_at"]) if "job" in asked else None
            if isinstance(preload, list) and all(isinstance(p, str) for p in preload):
                workers.append((preload, path.with_name(name).read_bytes(), launch, job))
                used(path.with_name(name))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []
    used(path)  # kept by the cache's pruning while it is read (course/cache_prune.py)
    return workers


def _spawn_remembered(launch: dict[str, Any]) -> tuple[tuple[Any, ...], subprocess.Popen[bytes]]:
    """Start a worker as a remembered launch says (as bwrap.spawn starts one), its filter
    in a pipe of its own; the launch as compared, and the process. ValueError, TypeError or
    OSError for a launch that is not whole."""
    argv, env, user = launch["argv"], launch["env"], launch["user"]
    program = bytes.fromhex(launch["filter"])
    if not (
        isinstance(argv, list)
        and all(isinstance(a, str) for a in argv)
        and "--seccomp" in argv[:-1]
        and argv[argv.index("--seccomp") + 1] == "FD"
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and (user is None or (isinstance(user, list) and len(user) == 2))
    ):
        raise ValueError("a remembered launch that is not whole")
    who = (int(user[0]), int(user[1])) if user is not None else None
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: the pipe holds them
        os.close(write_fd)
        command = list(argv)
        command[argv.index("--seccomp") + 1] = str(read_fd)
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            pass_fds=(read_fd,),
            user=who[0] if who else None,
            group=who[1] if who else None,
            extra_groups=[] if who else None,
        )
    finally:
        os.close(read_fd)
        with contextlib.suppress(OSError):
            os.close(write_fd)
    _FILTERS[process.pid] = program
    return (tuple(argv), tuple(sorted(env.items())), who, 1), process


def start(argv: Sequence[str]) -> None:
    """Start the workers the last identical command asked for (nothing for other commands,
    a command not seen before, an untested sandbox or a launch whose staged view changed),
    from their remembered launches. Never raises."""
    if not argv or argv[0] not in COMMANDS:
        return
    _ARGV[:] = [list(argv)]
    _JOBS_DECIDED.clear()
    _forget_jobs_but_of_early()  # a job is known by its worker's pid, which may be reused
    path = _plan_path(argv)
    if path is None:
        return
    plan = _read_plan(path)  # once: a newer plan written meanwhile keeps its own files
    planned = _planned_launches(path, plan)
    # What this run's workers ask for makes the next plan (adopt).
    _REPLACED[:] = _init_names(path, plan)
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    remembered: dict[str, bool] = {}
    for _, init, launch, launch_job in planned:
        try:
            if not _startable(launch, remembered):
                continue
            started, process = _spawn_remembered(launch)
        except Exception:  # a head start only: the engine starts its workers as always
            return
        with _LOCK:
            _EARLY.append((started, init, process))
            _PLANNED_JOBS[process.pid] = launch_job
        # On a thread: the worker reads it once started, and a pipe holds only 64 KB. The
        # worker answers 'ready' only once it has read it all, so nothing overtakes it.
        threading.Thread(target=_send, args=(process, init), daemon=True).start()


def _send(process: subprocess.Popen[bytes], init: bytes) -> None:
    """Write the worker's first message, then the job send_job decides it gets, if any."""
    assert process.stdin is not None
    try:
        _write(process.stdin.fileno(), init)
        _JOBS_DECIDED.wait()  # send_job, or discard
        with _LOCK:
            job = _JOBS.get(process.pid)
        if job is not None:
            _write(process.stdin.fileno(), job)
    except OSError:  # it died: not adopted (it is not running), started anew by the engine
        return


def _forget_jobs_but_of_early() -> None:
    """Drop the jobs noted for workers no longer waiting to be adopted (adopted ones took
    theirs along, workers.py; discarded ones are dead)."""
    with _LOCK:
        waiting = {process.pid for _, _, process in _EARLY}
        for table in (_JOBS, _PLANNED_JOBS):
            for pid in [pid for pid in table if pid not in waiting]:
                del table[pid]


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send_job(argv: Sequence[str]) -> None:
    """Send the worker `start` started for `grader check` the job the last identical command
    (the same course options, in the same folder: the notebook may be another) sent it, for
    the notebook this command line names in the same place (note_job): the
    notebook then runs as soon as the worker is ready, while the grader imports and reads
    its course. Only without --student (whose cases are the student's own). The worker that
    adopts it takes its answer only when the job is byte for byte the one it would send
    (workers.py), else it is killed and a fresh one runs the notebook: a stale plan costs a
    process start, never a different run. Never raises."""
    try:
        if argv and argv[0] == "check" and not any(w.startswith("--student") for w in argv):
            _job_for(argv)
    except Exception:  # a head start only: the engine runs the notebook itself
        pass
    finally:
        _JOBS_DECIDED.set()


def _job_for(argv: Sequence[str]) -> None:
    with _LOCK:
        planned = [(process.pid, _PLANNED_JOBS.get(process.pid)) for _, _, process in _EARLY]
    for pid, planned_job in planned:
        if planned_job is None:
            continue
        header, at = planned_job
        if not (isinstance(header, dict) and isinstance(at, int) and 0 < at < len(argv)):
            continue
        import pickle

        from grader.course.notebook import reread
        from grader.run.pipes import encode_message

        payload = pickle.dumps(list(reread(Path(argv[at])).cells))
        message = encode_message({**header, "size": len(payload)}, payload)
        with _LOCK:
            _JOBS[pid] = message
        return  # `grader check` runs one notebook, on one worker


def early_job(process: subprocess.Popen[bytes]) -> bytes | None:
    """The job sent to an early worker after its first message (send_job), if any."""
    with _LOCK:
        return _JOBS.get(process.pid)


def _comparable(launch: bwrap.Launch) -> tuple[Any, ...]:
    """A launch as compared: all of it but the number of the seccomp filter's descriptor
    (a fresh pipe each time, holding the same filter)."""
    argv = list(launch.argv)
    for at, word in enumerate(argv[:-1]):
        if word == "--seccomp":
            argv[at + 1] = "FD"
    return (tuple(argv), tuple(sorted(launch.env.items())), launch.user, len(launch.pass_fds))


def adopt(
    launch: bwrap.Launch, init: bytes, preload: Sequence[str]
) -> subprocess.Popen[bytes] | None:
    """The worker started early with exactly `launch`'s command line and already sent
    `init`, which then belongs to the caller (`launch`'s descriptors are closed: the early
    one read its own), else None. Either way, a worker the head start could have started
    (`preload`: the modules `launch` was made for) is noted in the next start's plan."""
    from grader.run import seccomp

    wanted, program = _comparable(launch), seccomp.program()
    with _LOCK:
        for at, (started, sent, process) in enumerate(_EARLY):
            same_filter = _FILTERS.get(process.pid, program) == program
            if started == wanted and sent == init and same_filter and process.poll() is None:
                del _EARLY[at]
                break
        else:
            process = None
    if process is None:
        if _ARGV and _plain_view(preload) == wanted:
            _note(preload, init, launch)
        return None
    _note(preload, init, launch)
    for fd in launch.pass_fds:
        os.close(fd)
    return process


def _plain_view(preload: Sequence[str]) -> tuple[Any, ...] | None:
    """The sandboxed launch with no course files for `preload`, as compared."""
    from grader.run import bwrap

    try:
        launch = bwrap.launch(bwrap.Support(True), (), preload)
    except OSError:
        return None
    for fd in launch.pass_fds:
        os.close(fd)
    return _comparable(launch)


def discard() -> None:
    """Kill what was started early and not adopted (the plan was stale)."""
    _JOBS_DECIDED.set()
    with _LOCK:
        unused = [process for _, _, process in _EARLY]
        _EARLY.clear()
    _forget_jobs_but_of_early()
    for process in unused:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        for pipe in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        process.wait()
