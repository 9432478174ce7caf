"""The worker's warm-up: our own machinery run once before forking, leaving nothing behind."""

from __future__ import annotations

import gc
import signal
import sys

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.run.warmup import SOURCE, warm_up


def test_warm_up_restores_the_process_and_holds_no_solution(config: Config) -> None:
    assignment = config.assignment("self_attention")
    plan = build_cases(assignment).plan(assignment)
    stdout, stderr, handler = sys.stdout, sys.stderr, signal.getsignal(signal.SIGALRM)
    try:
        warm_up(plan)
        assert (sys.stdout, sys.stderr) == (stdout, stderr)
        assert signal.getsignal(signal.SIGALRM) == handler
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    for name in (t.name for t in assignment.targets):
        assert f"def {name}" not in SOURCE  # generic operations, never an exercise's answer
