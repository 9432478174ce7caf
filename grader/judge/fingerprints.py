"""What each catalogued mistake outputs on the seeded cases, from one sandboxed run of the
solution notebook followed by its catalogue (the trusted process runs neither).

Besides a target's own variants there are *inherited* fingerprints: the reference of a target
run with a callee replaced by one of the callee's variants (self_attention with a wrong
softmax_cols). A student output that matches one of those is right apart from the callee.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from grader.course.cases import Case, CaseSet
from grader.course.config import AssignmentSpec
from grader.course.mistakes import Catalogue, Mistake, load_catalogue
from grader.errors import ConfigError
from grader.judge.course_code import (
    ADDED_CELLS,
    CourseOutputs,
    added_cell,
    renamed,
    run_course_code,
)
from grader.judge.reference import called_globals, load_solution
from grader.run.wire import Value
from grader.run.workers import Workers

# Run in the child before the catalogue: its decorator only has to hand the variant back.
_CATALOGUE_STAND_IN = """\
class _GraderCatalogue:
    def mistake(self, *words, **options):
        return lambda variant: variant

CATALOGUE = _GraderCatalogue()
"""

# Run in the child after the catalogue: the reference with one callee swapped for a variant.
_WITH_CALLEE = """\
import types as _grader_types

def _grader_with_callee(fn, callee, replacement):
    scope = dict(fn.__globals__)
    scope[callee] = replacement
    return _grader_types.FunctionType(
        fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__
    )
"""


# Where a fingerprint's mistake comes from: the hand-written catalogue, another target's
# catalogue carried over (transplant.py), or a mutant of the reference (mutants.py).
Origin = Literal["catalogue", "inherited", "mutant"]


@dataclass(frozen=True)
class Fingerprint:
    """A mistake's outputs on a target's cases (`via`: the callee it is inherited from)."""

    mistake: Mistake
    outputs: tuple[Value | Exception, ...]
    via: str | None = None  # the callee whose mistake this is, for inherited fingerprints
    origin: Origin = "catalogue"
    also: tuple[Mistake, ...] = ()  # for a pair of mutations: the second one's mistake


def catalogue_for(assignment: AssignmentSpec) -> Catalogue:
    """The assignment's mistake catalogue, read (not run); empty when it has none."""
    if assignment.mistakes is None:
        return Catalogue()
    return load_catalogue(assignment.mistakes)


@dataclass(frozen=True)
class _Call:
    """One function the child calls on a target's cases, and what its outputs stand for."""

    name: str
    target: str
    mistake: Mistake
    via: str | None
    origin: Origin = "catalogue"


def _calls(
    assignment: AssignmentSpec, catalogue: Catalogue, callees: dict[str, list[str]]
) -> list[_Call]:
    calls = []
    for target in assignment.targets:
        if target.variable:
            continue
        for mistake in catalogue.for_target(target.name):
            calls.append(_Call(mistake.function, target.name, mistake, None))
        for callee in callees[target.name]:
            for mistake in catalogue.for_target(callee):
                name = f"_grader_via_{len(calls)}"
                calls.append(_Call(name, target.name, mistake, callee))
    return calls


def compute_fingerprints(
    assignment: AssignmentSpec,
    case_set: CaseSet,
    catalogue: Catalogue,
    workers: Workers,
) -> dict[str, list[Fingerprint]]:
    """Every target's fingerprints: its own variants', then those inherited from callees."""
    result: dict[str, list[Fingerprint]] = {t.name: [] for t in assignment.targets}
    if not catalogue.mistakes:
        return result
    solution = load_solution(assignment)
    names = {t.name for t in assignment.targets}
    clash = sorted({m.function for m in catalogue.mistakes} & names)
    if clash:
        raise ConfigError(
            f"mistake catalogue {catalogue.path}: a variant may not be named like a target "
            f"({', '.join(clash)}); name it <target>__<mistake id>"
        )
    callees = {
        t.name: sorted(called_globals(solution, t.name) & names - {t.name})
        for t in assignment.targets
    }
    calls = _calls(assignment, catalogue, callees)
    derived = "\n".join(
        f"{c.name} = _grader_with_callee({c.target}, {c.via!r}, {c.mistake.function})"
        for c in calls
        if c.via is not None
    )
    cells = (
        *solution.cells,
        added_cell(0, _CATALOGUE_STAND_IN),
        added_cell(1, catalogue.source),
        added_cell(2, _WITH_CALLEE + derived),
    )
    plan = [(c.name, renamed(case_set.cases[c.target], c.name)) for c in calls]
    outputs = run_course_code(
        cells, plan, assignment, workers, f"mistake catalogue {catalogue.path}"
    )
    outputs.refuse_failed_cells(
        lambda cell, error: f"{_failed_part(cell, catalogue)} fails to load: {error}"
    )
    for call in calls:
        cases = case_set.cases[call.target]
        result[call.target].append(
            Fingerprint(call.mistake, _outputs(outputs, call.name, cases), call.via, call.origin)
        )
    return result


def _failed_part(cell: int, catalogue: Catalogue) -> str:
    """Which part of the course's code a failed cell belongs to: the solution's cells come
    first, the catalogue's are added after them."""
    return "the solution notebook" if cell < ADDED_CELLS else f"mistake catalogue {catalogue.path}"


def _outputs(
    outputs: CourseOutputs, name: str, cases: Sequence[Case]
) -> tuple[Value | Exception, ...]:
    """A variant's outputs; a call that failed is kept as its failure, as a student's is."""
    return tuple(outputs.get(name, case.index) for case in cases)
