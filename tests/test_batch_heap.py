"""The heap a batch held before judging is left out of the collector's walks while it judges
(grade._settled_heap), and given back afterwards."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from grader.batch import grade as batch_module
from grader.batch.grade import grade_batch
from grader.batch.pool import Done
from grader.course.config import Config

import students
from conftest import write_notebook


def test_the_heap_is_frozen_only_while_it_is_settled() -> None:
    gc.unfreeze()  # a clean start, whatever ran in this process before
    held = [object() for _ in range(10)]  # noqa: F841 (kept alive: part of the heap before)
    with batch_module._settled_heap():
        during = gc.get_freeze_count()
    assert during > 0
    assert gc.get_freeze_count() == 0


def test_a_heap_frozen_by_its_process_stays_frozen() -> None:
    gc.unfreeze()
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with batch_module._settled_heap():
            assert gc.get_freeze_count() == before
        assert gc.get_freeze_count() == before  # not thawed by the batch
    finally:
        gc.unfreeze()


def test_the_heap_is_given_back_when_judging_fails() -> None:
    gc.unfreeze()
    with pytest.raises(RuntimeError), batch_module._settled_heap():
        raise RuntimeError("a pool lost")
    assert gc.get_freeze_count() == 0


@pytest.mark.slow
def test_a_batch_judges_with_its_earlier_heap_frozen_and_thaws_it(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.unfreeze()
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ann", "bob"):
        write_notebook(folder / f"{name}.ipynb", students.cells())
    counts: list[int] = []
    real_judge = batch_module._judge

    def judge(done: Done, *args: object) -> object:
        counts.append(gc.get_freeze_count())
        return real_judge(done, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module, "_judge", judge)
    batch = grade_batch(folder, config, tmp_path / "out", "self_attention", jobs=1)
    assert [e.student for e in batch.entries if e.report is not None] == ["ann", "bob"]
    assert len(counts) == 2 and all(count > 0 for count in counts)
    assert gc.get_freeze_count() == 0
