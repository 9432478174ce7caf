"""`grader check` and `grader grade` give their workers a head start (issue 19): the workers
the last identical command asked for are started before the grader's own imports, and the
engine adopts one only when its command line and first message are exactly the ones it would
use; anything else is killed unused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.run import bwrap, head_start, probe_memory, workers

ARGV = ["check", "nb.ipynb", "--course", "."]
INIT = b"the first message"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(head_start, "_ARGV", [])
    monkeypatch.setattr(head_start, "_NOTED", [])
    monkeypatch.setattr(head_start, "_REPLACED", [])
    monkeypatch.setattr(head_start, "_EARLY", [])
    yield tmp_path / "cache"
    head_start.discard()


def sleeper() -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "import time; time.sleep(60)"]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )


def launch(*argv: str) -> bwrap.Launch:
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    return bwrap.Launch(["bwrap", *argv, "--seccomp", str(read_fd)], {}, (read_fd,))


def started_early(how: bwrap.Launch, init: bytes = INIT) -> subprocess.Popen[bytes]:
    process = sleeper()
    head_start._EARLY.append((head_start._comparable(how), init, process))
    for fd in how.pass_fds:
        os.close(fd)
    return process


def test_the_same_command_line_and_message_are_adopted_with_the_descriptors_closed() -> None:
    early = started_early(launch("--ro-bind", "/usr", "/usr"))
    asked = launch("--ro-bind", "/usr", "/usr")  # another seccomp pipe, the same filter
    assert head_start.adopt(asked, INIT, []) is early
    with pytest.raises(OSError):
        os.fstat(asked.pass_fds[0])
    assert head_start._EARLY == []


def test_another_command_line_or_first_message_is_not_adopted_and_is_killed() -> None:
    early = started_early(launch("--ro-bind", "/usr", "/usr"))
    other = launch("--ro-bind", "/usr", "/usr", "--ro-bind", "/srv", "/sandbox/course")
    assert head_start.adopt(other, INIT, []) is None
    os.close(other.pass_fds[0])
    same = launch("--ro-bind", "/usr", "/usr")
    assert head_start.adopt(same, b"an init with other cases to warm up on", []) is None
    os.close(same.pass_fds[0])
    head_start.discard()
    assert early.poll() is not None, "a worker nobody adopted was left running"


def plain_view_launch(preload: list[str]) -> bwrap.Launch:
    return bwrap.launch(bwrap.Support(True), (), preload)


def test_what_a_command_asked_for_is_planned_for_its_next_start(own_cache: Path) -> None:
    asked = plain_view_launch(["json"])
    assert head_start.adopt(asked, INIT, ["json"]) is None
    assert not list(own_cache.glob("head-start-*")), "grading from Python planned a head start"
    head_start.start(ARGV)  # the bwrap probe was never remembered here: nothing starts
    assert head_start._EARLY == []
    for _ in range(2):  # e.g. grader grade --jobs 2
        assert head_start.adopt(plain_view_launch(["json"]), INIT, ["json"]) is None
    assert head_start._planned(ARGV) == [(["json"], INIT), (["json"], INIT)]
    assert head_start._planned(["check", "other.ipynb", "--course", "."]) != []  # same course
    assert head_start._planned(["check", "nb.ipynb", "--course=."]) != []
    assert head_start._planned(["check", "nb.ipynb", "--course", "other"]) == []
    assert head_start._planned([*ARGV, "--assignment", "softmax"]) == []
    assert head_start._planned(["grade", "nb.ipynb", "--course", "."]) == []
    with_files = launch("--ro-bind", "/srv", "/sandbox/course")
    head_start.adopt(with_files, b"other", ["json"])  # not what a head start can start
    assert head_start._planned(ARGV) == [(["json"], INIT), (["json"], INIT)]
    for fd in (*asked.pass_fds, *with_files.pass_fds):
        os.close(fd)


def test_a_plan_cannot_name_a_file_outside_its_own(own_cache: Path) -> None:
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), INIT, [])
    path = head_start._plan_path(ARGV)
    assert path is not None
    path.write_text('[{"preload": [], "init": "../../secret"}]')
    assert head_start._planned(ARGV) == []


@pytest.mark.parametrize("text", ["[" * 100_000, '[{"init": 1}', "\udc80", ""])
def test_a_damaged_plan_starts_nothing_and_never_raises(own_cache: Path, text: str) -> None:
    # A plan nested too deep raised RecursionError from `start`: a traceback before any
    # command ran (the plan is the cache's: a disk error, or an edit by hand).
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), INIT, [])
    path = head_start._plan_path(ARGV)
    assert path is not None
    path.write_text(text, errors="surrogateescape")
    head_start._NOTED.clear()
    head_start.start(ARGV)
    assert head_start._EARLY == [] and head_start._REPLACED == []


def test_a_plan_holds_what_the_last_run_asked_for_only() -> None:
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), INIT, [])
    assert head_start._planned(ARGV) == [([], INIT)]
    head_start._NOTED.clear()
    head_start.start(ARGV)  # e.g. the course now says `sandbox: none`: no worker noted
    assert head_start._planned(ARGV) == []


def test_a_plan_replaced_takes_the_first_messages_only_it_named_along(own_cache: Path) -> None:
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), INIT, [])
    path = head_start._plan_path(ARGV)
    assert path is not None
    old = head_start._init_path(path, INIT)
    assert old.read_bytes() == INIT
    elsewhere = own_cache / f"{path.stem}-elsewhere.init"
    elsewhere.write_bytes(b"named by no plan")
    text = json.loads(path.read_text())
    path.write_text(json.dumps([*text, {"init": "../" + elsewhere.name}]))
    head_start._NOTED.clear()  # the next command, after the course's cases changed
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), b"another first message", [])
    assert not old.exists()
    assert head_start._planned(ARGV) == [([], b"another first message")]
    assert elsewhere.read_bytes() == b"named by no plan"  # only what the plan may name
    head_start._NOTED.clear()  # and again with the same cases: the message is kept
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), b"another first message", [])
    assert head_start._planned(ARGV) == [([], b"another first message")]


def test_a_start_reads_its_plan_once(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `start` starts and what it will replace come from one read of the plan: a newer
    plan that another command writes meanwhile is neither started nor stripped of its files."""
    head_start.start(ARGV)
    head_start.adopt(plain_view_launch([]), INIT, [])
    path = head_start._plan_path(ARGV)
    assert path is not None
    theirs = head_start._init_path(path, b"their message")
    reads: list[Path] = []
    real = Path.read_text

    def read_text(self: Path, *args: object, **kwargs: object) -> str:
        text = real(self, *args, **kwargs)  # type: ignore[arg-type]
        if self == path:
            reads.append(self)
            # Another command writes its plan right after this read.
            theirs.write_bytes(b"their message")
            path.write_text(json.dumps([{"init": theirs.name}]))
        return text

    monkeypatch.setattr(Path, "read_text", read_text)
    head_start._NOTED.clear()
    head_start.start(ARGV)
    monkeypatch.setattr(Path, "read_text", real)
    assert len(reads) == 1
    assert [head_start._init_path(path, INIT).name] == head_start._REPLACED
    head_start.adopt(plain_view_launch([]), INIT, [])
    assert theirs.read_bytes() == b"their message"


def test_other_commands_get_no_head_start() -> None:
    head_start.start(["report", "results/"])
    assert head_start._ARGV == [] and head_start._EARLY == []


@pytest.mark.sandbox
def test_the_shared_worker_is_the_one_started_early() -> None:
    support = bwrap.support()
    assert support.sandboxed, support.reason
    probe_memory.remember(bwrap.programs.which("bwrap") or "bwrap")
    head_start.start(ARGV)
    workers.Workers(1, support).close()  # what shared_workers starts for a course
    head_start.start(ARGV)  # the next identical command
    [(_, _, early)] = head_start._EARLY
    started = workers.Workers(1, support)
    try:
        assert [w.process for w in started.all] == [early]
        assert started.all[0].alive()
    finally:
        started.close()


def test_a_worker_given_another_filter_is_not_adopted() -> None:
    from grader.run import seccomp

    asked = plain_view_launch([])
    _, early = head_start._spawn_remembered(
        {
            "argv": [sys.executable, "-c", "import time; time.sleep(60)", "--seccomp", "FD"],
            "env": {},
            "user": None,
            "filter": (seccomp.program() + b"\0" * 8).hex(),  # one instruction more
        }
    )
    head_start._EARLY.append((head_start._comparable(asked), INIT, early))
    assert head_start.adopt(asked, INIT, []) is None
    head_start.discard()
    assert early.poll() is not None


@pytest.mark.parametrize(
    "launch",
    [
        {"argv": ["bwrap", "--seccomp", "3"], "env": {}, "user": None, "filter": ""},
        {"argv": ["bwrap", "FD"], "env": {}, "user": None, "filter": ""},
        {"argv": ["bwrap", "--seccomp", "FD"], "env": {"A": 1}, "user": None, "filter": ""},
        {"argv": ["bwrap", "--seccomp", "FD"], "env": {}, "user": [0], "filter": ""},
        {"argv": ["bwrap", "--seccomp", "FD"], "env": {}, "user": None, "filter": "zz"},
    ],
)
def test_a_remembered_launch_that_is_not_whole_starts_nothing(launch: dict[str, object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        head_start._spawn_remembered(launch)


@pytest.mark.sandbox
def test_a_head_start_spawns_from_the_plan_without_the_sandboxs_modules(
    own_cache: Path, tmp_path: Path
) -> None:
    probe_memory.remember(bwrap.programs.which("bwrap") or "bwrap")
    head_start.start(ARGV)
    asked = plain_view_launch([])
    head_start.adopt(asked, INIT, [])  # the plan for the next start: this launch
    for fd in asked.pass_fds:
        os.close(fd)
    script = (
        "import sys; from grader.run import head_start\n"
        f"head_start.start({ARGV!r})\n"
        "print(len(head_start._EARLY), sorted(m for m in ('grader.run.bwrap', "
        "'grader.run.view', 'grader.run.seccomp', 'importlib.metadata') if m in sys.modules))\n"
        "head_start.discard()"
    )
    env = {**os.environ, "GRADER_CACHE_DIR": str(own_cache)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.split("\n")[0] == "1 []", done.stdout + done.stderr


def fake_bubblewrap(folder: Path) -> str:
    """A stand-in for bubblewrap that only waits (its probe remembered as the real one's)."""
    binary = folder / "bwrap"
    binary.write_text("#!/bin/sh\nexec sleep 60\n")
    binary.chmod(0o755)
    probe_memory.remember(str(binary))
    return str(binary)


def plan_launch(binary: str, *words: str) -> None:
    """Note, for ARGV's next start, a worker launched as `binary` `words` (a sandbox's)."""
    head_start._NOTED.clear()
    head_start.start(ARGV)  # this command's plan: made from here on
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    argv = [binary, *head_start.SANDBOX_WORDS, *words, "--seccomp", str(read_fd), "--", "x"]
    head_start._note([], INIT, bwrap.Launch(argv, {}, (read_fd,)))
    os.close(read_fd)


def started() -> int:
    before = len(head_start._EARLY)
    head_start.start(ARGV)
    return len(head_start._EARLY) - before


def test_a_launch_starts_only_while_each_folder_it_binds_is_the_one_planned(
    tmp_path: Path,
) -> None:
    binary, stage = fake_bubblewrap(tmp_path), tmp_path / "grader-view-stage"
    stage.mkdir(mode=0o700)
    plan_launch(binary, "--ro-bind", str(stage), "/sandbox/lib")
    assert started() == 1  # the same stage: started
    plan_launch(binary, "--ro-bind", str(stage), "/sandbox/lib")
    stage.rmdir()  # pruned
    assert started() == 0
    stage.mkdir(mode=0o755)  # made again under its name, not as a private stage is
    assert started() == 0, "the plan was read once: it is gone"
    plan_launch(binary, "--ro-bind", str(stage), "/sandbox/lib")
    stage.rmdir()
    stage.mkdir(mode=0o700)
    stage.chmod(0o777)  # the same name, now a folder anyone can write to
    assert started() == 0
    plan_launch(binary, "--ro-bind", str(stage), "/sandbox/lib")
    stage.rmdir()
    stage.write_text("a file where the stage was")
    assert started() == 0


def test_a_remembered_launch_with_course_files_or_without_the_sandbox_starts_nothing(
    tmp_path: Path,
) -> None:
    binary = fake_bubblewrap(tmp_path)
    plan_launch(binary, "--ro-bind", str(tmp_path), "/sandbox/course/data.csv")
    assert started() == 0
    plan_launch(binary)
    assert started() == 1
    plan_launch(binary)
    path = head_start._plan_path(ARGV)
    assert path is not None
    path.write_text(path.read_text().replace('"--unshare-all", ', ""))
    assert started() == 0
    other = tmp_path / "other-bwrap"  # a bubblewrap whose probe is not remembered
    other.write_bytes((tmp_path / "bwrap").read_bytes())
    other.chmod(0o755)
    plan_launch(str(other))
    assert started() == 0


def test_where_course_files_are_bound_is_what_the_head_start_refuses() -> None:
    from grader.course.files import SANDBOX_COURSE

    assert head_start.COURSE_INSIDE == SANDBOX_COURSE


def test_the_head_start_imports_neither_openssl_nor_the_sandboxs_modules(
    own_cache: Path, tmp_path: Path
) -> None:
    binary = fake_bubblewrap(tmp_path)
    plan_launch(binary)
    script = (
        "import sys; from grader.run import head_start\n"
        f"head_start.start({ARGV!r})\n"
        "print(len(head_start._EARLY), sorted(m for m in ('hashlib', 'shutil', "
        "'importlib.metadata', 'grader.run.bwrap', 'grader.run.view') if m in sys.modules))\n"
        "head_start.discard()"
    )
    env = {**os.environ, "GRADER_CACHE_DIR": str(own_cache)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.split("\n")[0] == "1 []", done.stdout + done.stderr
