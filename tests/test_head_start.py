"""`grader check` gives its worker a head start (issue 19): the worker the last identical
command needed is started before the grader's own imports, and the engine adopts it only when
its command line is exactly the one the engine would run; anything else is killed unused."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.run import bwrap, head_start, probe_memory, workers

ARGV = ["check", "nb.ipynb", "--course", "."]


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(head_start, "_ARGV", [])
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


def started_early(how: bwrap.Launch) -> subprocess.Popen[bytes]:
    process = sleeper()
    head_start._EARLY.append((head_start._comparable(how), process))
    for fd in how.pass_fds:
        os.close(fd)
    return process


def test_the_same_command_line_is_adopted_with_its_descriptors_closed() -> None:
    early = started_early(launch("--ro-bind", "/usr", "/usr"))
    asked = launch("--ro-bind", "/usr", "/usr")  # another seccomp pipe, the same filter
    assert head_start.adopt(asked, head_start.SHARED_INIT) is early
    with pytest.raises(OSError):
        os.fstat(asked.pass_fds[0])
    assert head_start._EARLY == []


def test_another_command_line_or_first_message_is_not_adopted_and_is_killed() -> None:
    early = started_early(launch("--ro-bind", "/usr", "/usr"))
    other = launch("--ro-bind", "/usr", "/usr", "--ro-bind", "/srv", "/sandbox/course")
    assert head_start.adopt(other, head_start.SHARED_INIT) is None
    os.close(other.pass_fds[0])
    same = launch("--ro-bind", "/usr", "/usr")
    assert head_start.adopt(same, b"an init with cases to warm up on") is None
    os.close(same.pass_fds[0])
    head_start.discard()
    assert early.poll() is not None, "a worker nobody adopted was left running"


def test_a_plan_is_kept_only_for_a_command_started_from_the_command_line(
    tmp_path: Path, own_cache: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("assignments: {}\n")
    head_start.note(config, ["matplotlib.pyplot"], sandboxed=True)
    assert not own_cache.exists(), "grading from Python planned a head start"
    head_start.start(ARGV)  # the bwrap probe was never remembered here: nothing starts
    assert head_start._EARLY == []
    head_start.note(config, ["matplotlib.pyplot"], sandboxed=True)
    assert head_start._planned(ARGV) == ["matplotlib.pyplot"]
    assert head_start._planned([*ARGV, "--format", "json"]) is None  # another command
    config.write_text("assignments: {a: {}}\n")
    assert head_start._planned(ARGV) is None  # the course changed since
    head_start.note(config, [], sandboxed=False)
    assert head_start._planned(ARGV) is None


def test_other_commands_get_no_head_start(tmp_path: Path) -> None:
    head_start.start(["grade", "submissions/"])
    head_start.note(tmp_path, [], sandboxed=True)
    assert head_start._ARGV == [] and head_start._EARLY == []


@pytest.mark.sandbox
def test_the_shared_worker_is_the_one_started_early(tmp_path: Path) -> None:
    support = bwrap.support()
    assert support.sandboxed, support.reason
    probe_memory.remember(bwrap.shutil.which("bwrap") or "bwrap")
    config = tmp_path / "config.yaml"
    config.write_text("assignments: {}\n")
    head_start.start(ARGV)
    head_start.note(config, [], sandboxed=True)
    head_start.start(ARGV)  # the next identical command
    [(_, early)] = head_start._EARLY
    started = workers.Workers(1, support)  # what shared_workers starts for a course
    try:
        assert [w.process for w in started.all] == [early]
        assert started.all[0].alive()
    finally:
        started.close()
