"""Everything trusted that grading one assignment needs, computed once and reused.

The cases (inputs) are built by the grader (cases.py); the references and the catalogue's
fingerprints come from running the course's own code in a sandboxed child, like a student's
(reference.py, fingerprints.py), so this process holds only numbers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.course.cases import CaseSet
from grader.course.config import AssignmentSpec, Tolerance
from grader.judge.compare import compare
from grader.judge.fingerprints import Fingerprint, catalogue_for, compute_fingerprints
from grader.judge.reference import Reference, compute_references
from grader.run.wire import Seq, Value
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


def _key(outputs: Sequence[Value | Exception]) -> str:
    """Outputs rounded to 7 significant digits, as one digest: equal keys, equal outputs (up
    to a rounding boundary, where a duplicate is merely kept)."""
    hasher = hashlib.blake2b(digest_size=16)
    for value in outputs:
        _feed(hasher, value)
        hasher.update(b"|")
    return hasher.hexdigest()


def _feed(hasher: Any, value: Value | Exception) -> None:
    if isinstance(value, Seq):
        hasher.update(f"{value.kind}[".encode())
        for item in value.items:
            _feed(hasher, item)
        hasher.update(b"]")
    elif isinstance(value, np.ndarray):
        with np.errstate(all="ignore"):
            scale = 10.0 ** (np.floor(np.log10(np.abs(value) + 1e-300)) - 6)
            rounded = np.round(value / scale) * scale + 0.0
        hasher.update(repr(value.shape).encode() + rounded.tobytes())
    else:
        hasher.update(repr(value).encode())


def distinct_fingerprints(
    found: Sequence[Fingerprint],
    reference: Sequence[Value],
    mode: str,
    tol: Tolerance,
) -> list[Fingerprint]:
    """The catalogue's fingerprints as they are; a derived one (inherited, mutant) only when
    every case answered, and it differs from the reference and from every one kept before."""
    kept: list[Fingerprint] = []
    seen: set[tuple[str | None, str]] = set()
    for fingerprint in found:
        key = (fingerprint.via, _key(fingerprint.outputs))
        if fingerprint.origin != "catalogue" and (
            key in seen
            or any(isinstance(o, Exception) for o in fingerprint.outputs)
            or _same_outputs(fingerprint.outputs, reference, mode, tol)
        ):
            continue
        seen.add(key)
        kept.append(fingerprint)
    return kept
