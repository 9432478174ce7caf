"""A sandbox probe that succeeded is remembered on disk (issue 19): the next start skips the
probe's bubblewrap process; a negative answer, another bwrap binary or a forgotten answer
means a fresh probe, and a stale 'works' is forgotten when a worker cannot start."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.errors import GraderError
from grader.run import bwrap, prestart, probe_memory, seccomp
from grader.run.workers import Workers


class Probes:
    """The answers the probe gives, in turn (the last one repeats), and those it gave."""

    def __init__(self) -> None:
        self.answers: list[bwrap.Support] = []
        self.given: list[bwrap.Support] = []

    def probe(self) -> bwrap.Support:
        answer = self.answers[min(len(self.given), len(self.answers) - 1)]
        self.given.append(answer)
        return answer


@pytest.fixture
def probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Probes]:
    """A stand-in bwrap binary and probe, and a cache folder of the test's own."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    binary = tmp_path / "bwrap"
    binary.write_text("#!/bin/sh\n")
    monkeypatch.setattr(bwrap.programs, "which", lambda name: str(binary))
    monkeypatch.setattr(seccomp, "supported", lambda: True)
    monkeypatch.setattr(bwrap.sys, "platform", "linux")
    probes = Probes()
    monkeypatch.setattr(bwrap, "_probe", probes.probe)
    monkeypatch.setattr(bwrap, "_REMEMBERED", [])
    bwrap.support.cache_clear()
    yield probes
    bwrap.support.cache_clear()


def fresh_start() -> bwrap.Support:
    bwrap.support.cache_clear()  # as a new process
    return bwrap.support()


def test_a_positive_probe_is_remembered_for_the_next_start(probes: Probes) -> None:
    probes.answers.append(bwrap.Support(True))
    assert fresh_start().sandboxed
    assert fresh_start().sandboxed
    assert fresh_start().sandboxed
    assert len(probes.given) == 1, "the probe ran again although it succeeded before"


def test_a_negative_probe_is_never_remembered(probes: Probes) -> None:
    probes.answers.append(bwrap.Support(False, "no user namespaces"))
    assert fresh_start() == bwrap.Support(False, "no user namespaces")
    assert fresh_start() == bwrap.Support(False, "no user namespaces")
    assert len(probes.given) == 2


def test_another_bwrap_binary_is_probed_again(probes: Probes, tmp_path: Path) -> None:
    probes.answers.append(bwrap.Support(True))
    fresh_start()
    binary = tmp_path / "bwrap"
    binary.write_text("#!/bin/sh\n# another build\n")
    stat = binary.stat()
    os.utime(binary, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    fresh_start()
    assert len(probes.given) == 2


def test_recheck_forgets_a_stale_answer_and_probes_afresh(probes: Probes) -> None:
    probes.answers += [bwrap.Support(True), bwrap.Support(False, "bubblewrap failed: no")]
    fresh_start()
    assert fresh_start().sandboxed  # remembered: the sandbox is no longer tried here
    assert bwrap.recheck() == bwrap.Support(False, "bubblewrap failed: no")
    assert bwrap.support() == bwrap.Support(False, "bubblewrap failed: no")
    assert not fresh_start().sandboxed  # forgotten on disk as well
    assert bwrap.recheck() is None  # a probed answer: nothing to forget


def test_a_probed_answer_is_not_rechecked(probes: Probes) -> None:
    probes.answers.append(bwrap.Support(True))
    fresh_start()
    assert bwrap.recheck() is None
    assert len(list((Path(os.environ["GRADER_CACHE_DIR"])).glob("sandbox-probe-*"))) == 1


def test_the_early_start_falls_back_to_a_fresh_probe_when_the_sandbox_is_gone(
    probes: Probes, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes.answers += [bwrap.Support(True), bwrap.Support(False, "bubblewrap failed: gone")]
    fresh_start()
    fresh_start()  # remembered
    started: list[bwrap.Support] = []

    def shared_workers(support: bwrap.Support, *args: object) -> None:
        started.append(support)
        if support.sandboxed:
            raise OSError("bwrap: setting up uid map: Permission denied")

    monkeypatch.setattr(prestart, "shared_workers", shared_workers)
    prestart._start("auto", (), ())
    assert started == [bwrap.Support(True), bwrap.Support(False, "bubblewrap failed: gone")]
    assert bwrap.support() == bwrap.Support(False, "bubblewrap failed: gone")


def test_the_key_names_this_boot_user_and_binary(tmp_path: Path) -> None:
    binary = tmp_path / "bwrap"
    binary.write_text("x")
    first = probe_memory.key(str(binary))
    assert first is not None and first == probe_memory.key(str(binary))
    binary.write_text("xy")
    assert probe_memory.key(str(binary)) != first


def test_the_engine_waits_for_the_early_start_to_settle_the_answer(
    probes: Probes, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes.answers += [bwrap.Support(True), bwrap.Support(False, "bubblewrap failed: gone")]
    fresh_start()
    fresh_start()  # remembered

    def shared_workers(support: bwrap.Support, *args: object) -> None:
        if support.sandboxed:
            time.sleep(0.3)  # a worker's start, which then fails
            raise OSError("bwrap: setting up uid map: Permission denied")

    monkeypatch.setattr(prestart, "shared_workers", shared_workers)
    monkeypatch.setattr(prestart, "_speculate", lambda *args: None)
    prestart.begin("auto")
    try:
        assert bwrap.choose("auto") == bwrap.Support(False, "bubblewrap failed: gone")
    finally:
        prestart.finish()


def test_a_worker_that_cannot_start_forgets_a_remembered_answer(
    probes: Probes, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes.answers.append(bwrap.Support(True))
    fresh_start()
    assert fresh_start().sandboxed  # remembered
    gone = bwrap.Launch([sys.executable, "-c", "pass"], {})  # exits at once: no 'ready'
    monkeypatch.setattr(bwrap, "launch", lambda *args: gone)
    with pytest.raises(GraderError, match="could not start") as failed:
        Workers(1, bwrap.Support(True))
    assert "the same command again probes it afresh" in str(failed.value)
    assert not list(Path(os.environ["GRADER_CACHE_DIR"]).glob("sandbox-probe-*"))
    fresh_start()
    assert len(probes.given) == 2, "the next start did not probe again"
