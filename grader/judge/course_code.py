"""The course's own code — the solution notebook and the mistake catalogue — run the way a
student's notebook runs: in a sandboxed child on a worker. The trusted process never executes
it; it receives the outputs as decoded numbers, exactly as it receives a student's.

Variants and the functions derived from the reference are called under their own names, so
each gets its own results in the child's frames.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from grader.course.cases import Case
from grader.course.config import AssignmentSpec, TimeLimit
from grader.course.notebook import CodeCell
from grader.errors import ConfigError
from grader.judge import run_cache
from grader.judge.child_error import exception_text
from grader.run.frames import CellFrame, MissingFrame, ResultFrame, parse_frames
from grader.run.wire import Value
from grader.run.workers import Workers

# A first cell index no notebook reaches: the cells the grader adds after the course's own.
ADDED_CELLS = 100_000
COURSE_SUBMISSION_SECONDS = 300.0


class CallFailed(Exception):
    """A call of course code that raised or ran out of time (a variant may, as a student's
    code would); its text is what the child reported."""


@dataclass
class CourseOutputs:
    """What the child sent back: per (name, case index) a value or the failure."""

    values: dict[tuple[str, int], Value | CallFailed] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    cell_errors: dict[int, str] = field(default_factory=dict)

    def refuse_failed_cells(self, say: Callable[[int, str], str]) -> None:
        """ConfigError for the first cell of the course's code that failed, worded by `say`
        from the cell and its error: a solution or catalogue that fails is the course's error."""
        if self.cell_errors:
            cell, error = min(self.cell_errors.items())
            raise ConfigError(say(cell, error))

    def get(self, name: str, index: int) -> Value | CallFailed:
        """The outcome of one call; a call the child never reached is a failure."""
        return self.values.get((name, index), CallFailed("never called"))


def added_cell(offset: int, source: str) -> CodeCell:
    """A cell the grader appends to the course's notebook (numbered past any real cell)."""
    return CodeCell(ADDED_CELLS + offset, source, source)


def renamed(cases: Sequence[Case], name: str) -> tuple[Case, ...]:
    """The cases, to be called on `name` and answered with their values (probes included)."""
    return tuple(replace(c, target=name, probe=False) for c in cases)


def course_limits(assignment: AssignmentSpec) -> TimeLimit:
    """The student's limits per cell and call (the course's code must meet them too), with
    room for the many calls a catalogue makes."""
    own = assignment.time_limit
    return TimeLimit(max(own.submission, COURSE_SUBMISSION_SECONDS), own.cell, own.call)


def _error_text(error: object, limits: TimeLimit) -> str:
    if isinstance(error, dict) and error.get("type") == "TimeLimit":
        # The child's bare `TimeLimit` said nothing of which limit, nor where it is set.
        return f"did not finish within {limits.cell:g} s (time_limit.cell in the config)"
    return exception_text(error) if isinstance(error, dict) else "failed"


def run_course_code(
    cells: Sequence[CodeCell],
    plan: Sequence[tuple[str, Sequence[Case]]],
    assignment: AssignmentSpec,
    workers: Workers,
    what: str,
) -> CourseOutputs:
    """Run `cells`, then call `plan`, in a child of one of `workers` (or read what an earlier
    run of the same code on the same inputs answered, cached on disk); ConfigError when it
    cannot finish (`what` names the code in that message)."""
    limits = course_limits(assignment)
    path = run_cache.cache_path(
        run_cache.run_key(cells, plan, limits, assignment, workers.support.sandboxed)
    )
    frames = run_cache.load(path) if path else None
    if frames is None:
        run = workers.run(cells, plan, limits, assignment.files)
        frames = run.frames
        if run.wire_error or not run.finished:
            why = run.wire_error or run.exit_description or "it did not finish"
            raise ConfigError(f"assignment {assignment.id}: {what} could not be run: {why}")
        if path:
            run_cache.save(path, frames)
    outputs = CourseOutputs()
    for frame in parse_frames(frames):
        if isinstance(frame, CellFrame) and frame.error is not None:
            outputs.cell_errors[frame.cell] = _error_text(frame.error, limits)
        elif isinstance(frame, MissingFrame):
            outputs.missing[frame.target] = frame.found
        elif isinstance(frame, ResultFrame):
            key = (frame.target, frame.case)
            if frame.status == "ok" and "value" in frame.values:
                outputs.values[key] = frame.values["value"]
            elif frame.status == "timeout":
                outputs.values[key] = CallFailed("did not finish within the time limit")
            else:
                outputs.values[key] = CallFailed(_error_text(frame.error, limits))
    return outputs
