"""Judging leaves nothing it decoded or parsed on its inputs: a caller that keeps many runs
and submissions (a benchmark, a service) holds their bytes and cells only, so a full
collection does not walk thousands of syntax trees and decoded frames. Asked again, each is
decoded or parsed again, to the same result."""

from __future__ import annotations

from typing import Any

import pytest

import grader.course.notebook as notebook
import grader.engine as engine
import grader.run.sandbox as sandbox
from grader.course.config import Config
from grader.course.notebook import Submission, load_submission
from grader.report import Report
from grader.run.sandbox import ChildRun

from conftest import REPO


def test_a_judged_run_and_submission_keep_no_frames_or_trees(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[tuple[Submission, ChildRun, tuple[Any, ...]]] = []
    real_finish = engine.finish

    def finish(submission: Submission, *args: Any) -> Report:
        judged.append((submission, args[3], args))
        return real_finish(submission, *args)

    monkeypatch.setattr(engine, "finish", finish)
    spec = config.assignment("self_attention")
    submission = load_submission(REPO / "exercises" / "self_attention.ipynb")
    report = engine.grade_submission(submission, spec, "none")
    [(kept, run, args)] = judged
    assert kept is submission

    decoded = counting(monkeypatch, sandbox, "FrameReader")
    parsed = counting(monkeypatch, notebook, "parse_cell")
    assert run.frames and decoded == [1]  # decoded again: judging kept no frames
    first = submission.cells[0].index
    submission.tree(first)
    assert parsed == [len([c for c in submission.cells if c.analysed])]  # parsed again
    again = real_finish(submission, *args[:-1], report.seconds)
    assert again.targets == report.targets and again.errors == report.errors


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of `module.name` from now on (one counter in a list)."""
    calls = [0]
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls
