"""Warm a batch worker before it forks: run our own child machinery once, in the worker,
on a small notebook of the grader's own (no solution in it) and on every case.

A child forked from a cold worker pays, for every student, numpy's and Python's first-call
costs (random seeding, array printing, ufunc dispatch caches, encoding paths) and the
copy-on-write of every page those first calls write. Done once here, every child inherits
them ready.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from grader.course.cases import Case
from grader.course.notebook import CodeCell
from grader.run.child import Runner, _alarm

# Common notebook operations, none of them an answer to any exercise.
SOURCE = """\
import numpy as np
np.random.seed(1)
a = np.random.normal(size=(4, 3))
b = np.hstack([a, a]) @ np.vstack([a.T, a.T])
c = np.exp(a) * np.sqrt(np.abs(a)) + np.maximum(a, 0) - np.max(a, axis=0, keepdims=True)
d = np.transpose(a).dot(a) / np.sum(a ** 2, axis=1).reshape(-1, 1)[0] + np.zeros_like(a).T @ a
e = [float(x) for x in np.ones((1, 1))] + list(np.tanh(a[:, 0])) + [np.mean(a), np.log(2.0)]
f = np.concatenate([a.flatten(), np.linspace(0, 1, 3), np.arange(3.0), np.full(2, -np.inf)])
g = np.where(np.triu(np.ones((3, 3))) > 0, a[:3], -1e9).argmax(axis=0).astype(float)
print(a, np.round(c, 2), d.shape, e[:2], f[-3:], g)
"""


def _echo(*args: Any) -> Any:
    return args[0] if args else None


def _fail(*args: Any) -> Any:
    raise ValueError("warm-up")


def warm_up(plan: Sequence[tuple[str, Sequence[Case]]]) -> None:
    """Run the warm-up cell and call two stand-ins on every case, writing to /dev/null."""
    null = os.open(os.devnull, os.O_WRONLY)
    saved = sys.stdout, sys.stderr, signal.getsignal(signal.SIGALRM)
    try:
        runner = Runner(null, 5.0, 5.0)
        signal.signal(signal.SIGALRM, _alarm)
        sys.stdout = sys.stderr = runner.out
        cell = CodeCell(1, SOURCE, SOURCE)
        runner.run_cell(cell)
        for name, cases in plan:
            for stand_in in (_echo, _fail):
                runner.namespace[name] = stand_in
                runner.run_target(name, cases)
                runner.flush()
    except Exception:  # a warm-up is an optimisation: never a reason to fail a batch
        pass
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        with contextlib.suppress(TypeError, ValueError):
            signal.signal(signal.SIGALRM, saved[2])
        os.close(null)
    gc.collect()
    gc.freeze()  # what the worker holds now is never traversed again by a child's collector
