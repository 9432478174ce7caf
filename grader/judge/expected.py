"""Everything trusted that grading one assignment needs, computed once and reused.

The cases (inputs) are built by the grader (cases.py); the references and the catalogue's
fingerprints come from running the course's own code in a sandboxed child, like a student's
(reference.py, fingerprints.py), so this process holds only numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.course.cases import CaseSet
from grader.course.config import AssignmentSpec, Tolerance
from grader.judge.compare import compare
from grader.judge.fingerprints import Fingerprint, catalogue_for, compute_fingerprints
from grader.judge.reference import Reference, compute_references
from grader.run.wire import Value
from grader.run.workers import Workers


@dataclass(frozen=True)
class Expected:
    """What a correct notebook outputs, on the cases and on the probes, and what each
    catalogued mistake outputs."""

    references: dict[str, Reference]
    probe_references: dict[str, Reference]
    fingerprints: dict[str, list[Fingerprint]]


_EXPECTED: dict[tuple[str, str], Expected] = {}


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
        fingerprints = compute_fingerprints(
            assignment, case_set, catalogue_for(assignment), workers
        )
        distinct = {
            t.name: distinct_fingerprints(
                fingerprints[t.name], references[t.name].outputs, t.compare, t.tolerance
            )
            for t in assignment.targets
        }
        _EXPECTED[key] = Expected(references, probes, distinct)
    return _EXPECTED[key]


def _same_outputs(
    a: Sequence[Value | Exception], b: Sequence[Value | Exception], mode: str, tol: Tolerance
) -> bool:
    """Whether two runs answered every case alike (a failed call is like no other)."""
    return all(
        not isinstance(x, Exception)
        and not isinstance(y, Exception)
        and compare(x, y, mode, tol).ok
        for x, y in zip(a, b, strict=True)
    )


def distinct_fingerprints(
    found: Sequence[Fingerprint],
    reference: Sequence[Value],
    mode: str,
    tol: Tolerance,
) -> list[Fingerprint]:
    """The catalogue's fingerprints as they are; a derived one (inherited, mutant) only when
    it differs from the reference and from every fingerprint kept before it."""
    kept: list[Fingerprint] = []
    for fingerprint in found:
        if fingerprint.origin != "catalogue" and (
            _same_outputs(fingerprint.outputs, reference, mode, tol)
            or any(
                k.via == fingerprint.via
                and _same_outputs(k.outputs, fingerprint.outputs, mode, tol)
                for k in kept
            )
        ):
            continue
        kept.append(fingerprint)
    return kept
