"""A submission that was not graded for a fault on the grader's side (no worker could start
for it, a sandbox that could not be set up) is lost, not the student's zero: the batch says
so, exits 3, keeps no grade for it, and the same command grades it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.batch.grade import grade_batch
from grader.batch.gradebook import Gradebook
from grader.batch.outcome import exit_status
from grader.course.config import Config
from grader.run.workers import Workers

from conftest import OUT_OF_PROCESSES, REPO, no_worker_for_marked

DEMO = REPO / "demo" / "submissions"


def test_a_run_no_worker_could_start_for_is_lost_and_graded_the_next_time(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    for name in ("ada", "bruno"):
        shutil.copy(DEMO / f"{name}.ipynb", klass / f"{name}.ipynb")
    marker = OUT_OF_PROCESSES
    notebook = json.loads((klass / "bruno.ipynb").read_text(encoding="utf-8"))
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook["cells"].insert(0, {**cell, "source": [marker]})
    (klass / "bruno.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    real = Workers.run
    no_worker_for_marked(monkeypatch)
    first = grade_batch(klass, config, out, "self_attention", jobs=1)
    assert first.lost == ["bruno"]
    (bruno,) = [e for e in first.entries if e.student == "bruno"]
    assert bruno.report is None and "could not start" in bruno.problem
    assert exit_status(first, allow_ungraded=True) == 3
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert {student for student, _ in book.latest("self_attention")} == {"ada"}
    finally:
        book.close()
    monkeypatch.setattr(Workers, "run", real)
    again = grade_batch(klass, config, out, "self_attention", jobs=1)
    assert again.lost == [] and again.graded == 1 and again.skipped == 1
    assert exit_status(again, allow_ungraded=False) in (0, 1)
