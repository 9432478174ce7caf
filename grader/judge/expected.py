"""Everything trusted that grading one assignment needs, computed once and reused.

The cases (inputs) are built by the grader (cases.py); the references and the catalogue's
fingerprints come from running the course's own code in a sandboxed child, like a student's
(reference.py, fingerprints.py), so this process holds only numbers. The derived mistakes
(derived.py) follow the catalogue's, and are cached on disk as well.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace

from grader.course.cases import CaseSet
from grader.course.config import AssignmentSpec
from grader.judge.derived import derived_fingerprints
from grader.judge.fingerprints import Fingerprint, catalogue_for, compute_fingerprints
from grader.judge.lazy_prints import LazyPrints
from grader.judge.pair_store import Prints
from grader.judge.reference import Reference, compute_references, load_solution
from grader.judge.static import find_function
from grader.run.workers import Workers


@dataclass(frozen=True)
class Expected:
    """What a correct notebook outputs, on the cases and on the probes, and what each
    catalogued or derived mistake outputs (the catalogue's first; those of a cached course
    are decoded for a target when they are first read)."""

    references: dict[str, Reference]
    probe_references: dict[str, Reference]
    fingerprints: Mapping[str, list[Fingerprint]]


_EXPECTED: dict[tuple[str, str], Expected] = {}


def placed(assignment: AssignmentSpec, prints: list[Fingerprint]) -> list[Fingerprint]:
    """The catalogue's fingerprints with each mistake's variant place after the course's
    pattern (variant_places.py), made from the solution's function it changes."""
    from grader.judge.variant_places import with_place

    solution = load_solution(assignment)
    functions: dict[str, ast.FunctionDef | None] = {}
    out = []
    for print_ in prints:
        target = print_.mistake.target
        if target not in functions:
            found = find_function(solution, target)
            functions[target] = found.node if found else None
        out.append(replace(print_, mistake=with_place(print_.mistake, functions[target])))
    return out


def build_expected(assignment: AssignmentSpec, case_set: CaseSet, workers: Workers) -> Expected:
    """References, probe references and fingerprints, from the course's code run on one of
    `workers` (sandboxed); cached per assignment and file state."""
    stamps = [
        p.stat().st_mtime_ns if p and p.exists() else 0
        for p in (assignment.solution, assignment.mistakes)
    ]
    key = (assignment.id, repr((assignment, stamps)))
    if key not in _EXPECTED:
        references, probes = compute_references(assignment, case_set, workers)
        catalogue = catalogue_for(assignment)
        fingerprints = compute_fingerprints(assignment, case_set, catalogue, workers)
        derived = derived_fingerprints(
            assignment, case_set, catalogue, fingerprints, references, workers
        )

        def both(name: str) -> list[Fingerprint]:
            found = derived[name]
            own = placed(assignment, fingerprints[name])
            return Prints([*own, *found], getattr(found, "pairs", None))

        _EXPECTED[key] = Expected(references, probes, LazyPrints(fingerprints, both))
    return _EXPECTED[key]
