"""Everything trusted that grading one assignment needs, computed once and reused.

Split in two because of the fork: the cases (inputs) are built before the child exists;
references and fingerprints only after, so they are never in the child's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cases import Case, assignment_cases, probe_cases
from .config import AssignmentSpec
from .fingerprints import Fingerprint, catalogue_for, compute_fingerprints
from .reference import Reference, compute_references


@dataclass(frozen=True)
class CaseSet:
    cases: dict[str, tuple[Case, ...]]
    probes: dict[str, tuple[Case, ...]]

    def plan(self, assignment: AssignmentSpec) -> list[tuple[str, tuple[Case, ...]]]:
        """What the child calls: every case of every target, then that target's probes."""
        return [(t.name, self.cases[t.name] + self.probes[t.name]) for t in assignment.targets]


@dataclass(frozen=True)
class Expected:
    references: dict[str, Reference]
    probe_references: dict[str, Reference]
    fingerprints: dict[str, list[Fingerprint]]


_CASES: dict[str, CaseSet] = {}


def build_cases(assignment: AssignmentSpec) -> CaseSet:
    """The seeded inputs (and probes) of every target; deterministic, so built once."""
    key = repr(assignment)
    if key not in _CASES:
        cases = assignment_cases(assignment)
        probes = {name: probe_cases(assignment.seed, c) for name, c in cases.items()}
        _CASES[key] = CaseSet(cases, probes)
    return _CASES[key]


_EXPECTED: dict[tuple[str, str], Expected] = {}


def build_expected(assignment: AssignmentSpec, case_set: CaseSet) -> Expected:
    """References, probe references and fingerprints; cached per assignment and file state."""
    stamps = [
        p.stat().st_mtime_ns if p and p.exists() else 0
        for p in (assignment.solution, assignment.mistakes)
    ]
    key = (assignment.id, repr((assignment, stamps)))
    if key not in _EXPECTED:
        _EXPECTED[key] = Expected(
            compute_references(assignment, case_set.cases),
            compute_references(assignment, case_set.probes),
            compute_fingerprints(assignment, case_set.cases, catalogue_for(assignment)),
        )
    return _EXPECTED[key]
