"""Python's cyclic garbage collector, tuned where the grader makes objects that are not garbage.

CPython walks the young objects every time 700 more exist than were freed, and the older
ones every tenth time. A `grader` process makes most of its objects while it imports (NumPy,
click, jinja2, its own modules) and none of those is garbage: a warm `grader check` made
about 73 collections, 19 ms of its CPU (of about 350), on the path its student waits on.
Then a batch holds, all class long, its modules, the course and the references, and the
collector walked them again and again: a 100-notebook batch made about 220 collections,
130-180 ms of the parent's CPU (1.3-1.8 ms a notebook, of about 11).

- `pause_start_up` (the first thing the `grader` command does, grader/__main__.py): collect
  every START_THRESHOLD new objects, about once in a whole `grader check` (measured: 3
  collections, 0.3 ms). A short command never changes it again (it still collects, rarely);
  `grader serve` calls `resume_usual` once it has loaded, and collects as usual for days.
- `for_the_class` (around a batch's notebooks, grader/batch/grade.py): freeze what exists
  (never walked again) and collect every THRESHOLD new objects (measured: 20-30 ms for 100
  notebooks); afterwards the thresholds are put back and the objects unfrozen, so a process
  that grades many batches (a test run, a library user) leaks nothing. Cyclic garbage made
  before the batch and not yet collected is frozen with the rest until the batch ends (at
  most START_THRESHOLD objects).
Nothing here changes what is graded or written; only when cyclic garbage is freed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# New objects (net) between two collections of the youngest generation while a command starts
# (a warm `grader check` makes about 70,000 in all).
START_THRESHOLD = 50_000
# The same while a class is graded: one notebook's judging makes a few thousand, most freed
# by reference count; cyclic garbage waits at most this long.
THRESHOLD = 10_000


_USUAL: list[tuple[int, int, int]] = []  # the thresholds pause_start_up replaced


def pause_start_up() -> None:
    """Collect only every START_THRESHOLD new objects, until `resume_usual`."""
    if not _USUAL:
        _USUAL.append(gc.get_threshold())
    gc.set_threshold(START_THRESHOLD, *gc.get_threshold()[1:])


def resume_usual() -> None:
    """The thresholds as before `pause_start_up` (nothing when it was not called): for a
    command that runs for days (`grader serve`), once it has loaded."""
    if _USUAL:
        gc.set_threshold(*_USUAL.pop())


@contextmanager
def for_the_class() -> Iterator[None]:
    """Freeze what exists, collect every THRESHOLD new objects; as before afterwards (what
    was frozen unfrozen, unless someone else had frozen objects before: theirs to undo)."""
    before = gc.get_threshold()
    ours = gc.get_freeze_count() == 0
    gc.freeze()
    gc.set_threshold(THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if ours:
            gc.unfreeze()
