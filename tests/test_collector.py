"""The garbage collector where the grader makes objects that are not garbage
(grader/run/collector.py): the `grader` command starts collecting rarely; a batch grades its class
with the long-lived objects frozen and the youngest generation collected every THRESHOLD new
objects, and the collector is as it was once the batch ends, its objects unfrozen."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.batch import grade
from grader.course.config import Config
from grader.run import collector

from conftest import REPO


def _in_a_fresh_python(code: str) -> Any:
    """What `code`, run in a fresh interpreter (the collector is process-wide), prints last,
    read as JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.sandbox
def test_the_class_is_graded_with_start_up_frozen_and_the_collector_put_back(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bruno"):
        shutil.copy(REPO / "demo" / "submissions" / f"{name}.ipynb", folder)
    seen: dict[str, Any] = {}
    grading = grade._run

    def watched(*args: Any, **kwargs: Any) -> None:
        seen["threshold"], seen["frozen"] = gc.get_threshold(), gc.get_freeze_count()
        grading(*args, **kwargs)

    monkeypatch.setattr(grade, "_run", watched)
    before = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    batch = grade.grade_batch(folder, config, tmp_path / "out", "self_attention")
    assert sorted(e.student for e in batch.entries if e.report) == ["ada", "bruno"]
    assert seen["threshold"] == (collector.THRESHOLD, *before[1:])
    assert seen["frozen"] > 10_000  # the modules, the course, the references
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before


def test_the_collector_is_put_back_when_the_batch_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(KeyboardInterrupt), collector.for_the_class():
        assert gc.get_threshold()[0] == collector.THRESHOLD
        raise KeyboardInterrupt
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_the_command_starts_collecting_rarely_and_a_library_user_is_left_alone() -> None:
    """`grader check`'s start-up made about 73 collections (19 ms of its CPU); the command's
    entry raises the threshold before any import. Importing the grader changes nothing."""
    code = (
        "import atexit, gc, json, sys\n"
        "import grader.cli, grader.engine  # a library user: nothing changed\n"
        "library = gc.get_threshold()\n"
        "sys.argv = ['grader', '--version']\n"
        "atexit.register(lambda: print(json.dumps(\n"
        "    {'library': library, 'command': gc.get_threshold()})))\n"
        "from grader.__main__ import entry\n"
        "entry()\n"
    )
    seen = _in_a_fresh_python(code)
    assert seen["library"] == list(gc.get_threshold())
    assert seen["command"] == [collector.START_THRESHOLD, *gc.get_threshold()[1:]]


def test_a_worker_imports_collecting_rarely_and_its_children_collect_as_usual(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sandboxed worker's numpy import made about 40 collections before "ready"; the
    students' children, forked after, must collect as any Python does."""
    import importlib
    import os
    import pickle

    from grader.run import worker

    seen: list[int] = []
    real = importlib.import_module

    def noted(name: str) -> object:
        seen.append(gc.get_threshold()[0])
        return real(name)

    monkeypatch.setattr(importlib, "import_module", noted)
    plans = pickle.dumps([])
    reading, writing = os.pipe()
    os.write(writing, plans)
    os.close(writing)
    before = gc.get_threshold()
    try:
        worker._init(reading, {"size": len(plans), "preload": ["json"], "warm": False})
    finally:
        gc.unfreeze()  # _init froze this test process's objects
        os.close(reading)
    assert seen == [worker.START_THRESHOLD, worker.START_THRESHOLD]  # numpy.random, json
    assert gc.get_threshold() == before


def test_serve_collects_as_usual_once_loaded_and_a_callers_freeze_is_left_alone() -> None:
    """`grader serve` runs for days: the start-up's rare collections must not last as long.
    A caller that froze objects itself keeps them frozen after a batch."""
    code = (
        "import gc, json\n"
        "from grader.run import collector\n"
        "usual = gc.get_threshold()\n"
        "collector.pause_start_up()\n"
        "paused = gc.get_threshold()\n"
        "collector.resume_usual()\n"
        "resumed = gc.get_threshold()\n"
        "gc.freeze()\n"
        "theirs = gc.get_freeze_count()\n"
        "with collector.for_the_class():\n"
        "    pass\n"
        "print(json.dumps({'usual': usual, 'paused': paused, 'resumed': resumed,\n"
        "    'theirs': theirs, 'after': gc.get_freeze_count()}))\n"
    )
    seen = _in_a_fresh_python(code)
    assert seen["paused"][0] == collector.START_THRESHOLD
    assert seen["resumed"] == seen["usual"]
    assert seen["theirs"] > 0 and seen["after"] >= seen["theirs"]
