"""`grader selftest` for the derived mistakes: how many were made, how many are distinct, and
whether each distinct one is named as itself when a student's outputs are exactly its own.

The check feeds each distinct derived fingerprint's outputs to the same diagnosis a student's
answers go through (no child is run: the outputs are already known).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec
from grader.course.notebook import CodeCell
from grader.engine import require
from grader.judge.derived import derived_mistakes
from grader.judge.diagnose import Evidence, diagnose
from grader.judge.expected import Expected, build_expected
from grader.judge.fingerprints import Fingerprint, catalogue_for
from grader.judge.loop_bounds import early_stops
from grader.judge.pair_store import pairs_of
from grader.report import Location
from grader.run.workers import shared_workers


@dataclass(frozen=True)
class DerivedCounts:
    """What selftest says about one assignment's derived mistakes."""

    generated: Counter[str]  # by origin: "mutant", "inherited"
    distinct: Counter[str]
    named: int  # distinct ones diagnosed with their own id
    misnamed: tuple[str, ...]  # "target: id (words) named as …", for each that is not
    pairs: int = 0  # distinct pairs of mutations (matched only when no single one matches)

    def line(self) -> str:
        """One line for the selftest report."""
        return (
            f"derived mistakes: {self.generated['mutant']} mutants and "
            f"{self.generated['inherited']} carried across targets generated; "
            f"{self.distinct['mutant']} + {self.distinct['inherited']} distinct; "
            f"{self.named} of {sum(self.distinct.values())} named as themselves; "
            f"{self.pairs} distinct pairs of mutations"
        )


def _named(
    assignment: AssignmentSpec, expected: Expected, fingerprint: Fingerprint
) -> tuple[str, ...]:
    """The mistake ids a student whose outputs are exactly this fingerprint's is told."""
    target = fingerprint.mistake.target
    spec = assignment.target(target)
    cases = build_cases(assignment).cases[target]
    evidence = Evidence(
        spec=spec,
        cases=cases,
        reference=expected.references[target],
        answers=tuple(o for o in fingerprint.outputs if not isinstance(o, Exception)),
        passed=tuple(False for _ in cases),
        fingerprints=expected.fingerprints[target],
        function=None,
        hints=(),
        failing_callees=(),
        early_stops=_loops_short(fingerprint.mistake.source),
    )
    return diagnose(evidence).mistakes


def _loops_short(source: str) -> tuple[tuple[str, Location], ...]:
    """The loops of a mutant's source that miss an item, as a student who wrote that code
    would have them (a mutant whose loop drops an item is named only then)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    return tuple(early_stops(tree, CodeCell(1, source, source)))


def derived_counts(assignment: AssignmentSpec) -> DerivedCounts:
    """Count the assignment's derived mistakes and check how each distinct one is named."""
    made = derived_mistakes(assignment, catalogue_for(assignment))
    generated: Counter[str] = Counter(str(origin) for _, origin in made)
    case_set = build_cases(assignment)
    expected = build_expected(
        assignment, case_set, shared_workers(require("auto"), assignment.files)
    )
    kept = [
        f
        for prints in expected.fingerprints.values()
        for f in prints
        if f.origin != "catalogue" and not f.also
    ]
    # Pairs are counted, not each diagnosed: one diagnosis scans every single first.
    pairs = sum(len(pairs_of(prints)) for prints in expected.fingerprints.values())
    named, misnamed = 0, []
    for fingerprint in kept:
        ids = _named(assignment, expected, fingerprint)
        if fingerprint.mistake.id in ids:
            named += 1
        else:
            mistake = fingerprint.mistake
            what = f"{mistake.target}: {mistake.id} ({mistake.message})"
            misnamed.append(f"{what} is named as {', '.join(ids) or 'nothing'}")
    distinct: Counter[str] = Counter(str(f.origin) for f in kept)
    return DerivedCounts(generated, distinct, named, tuple(misnamed), pairs)
