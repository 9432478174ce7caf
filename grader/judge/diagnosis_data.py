"""What the diagnosis of one failing target reads (`Evidence`, gathered by the engine) and
what it says (`Diagnosis`: the mistakes named, the findings, the place).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from grader.course.cases import Case
from grader.course.config import TargetSpec
from grader.judge.fingerprints import Fingerprint
from grader.judge.normalisers import Answer
from grader.judge.reference import Reference
from grader.judge.shown import Shown
from grader.judge.static import FunctionSource, Hint
from grader.report import Finding, Location, messages_of
from grader.run.wire import Value


@dataclass(frozen=True)
class Evidence:
    """Everything known about one failing target, gathered by the engine."""

    spec: TargetSpec
    cases: tuple[Case, ...]
    reference: Reference
    answers: tuple[Answer, ...]
    passed: tuple[bool, ...]
    fingerprints: Sequence[Fingerprint]
    function: FunctionSource | None
    hints: Sequence[Hint]
    failing_callees: Sequence[str]
    known_mistakes: tuple[str, ...] = ()  # already found while scoring (mutates_input)
    probes: dict[int, str | None] = field(default_factory=dict)  # digests, by argument
    base_digest: str | None = None
    reference_probes: dict[int, Value] = field(default_factory=dict)
    is_stub: bool = False  # the body is the exercise's stub, or computes nothing (stubs.py)
    crashes: tuple[str, ...] = ()  # for a variable: the crashes of the cells that set it
    errors: tuple[str, ...] = ()  # the messages of the exceptions its failing calls raised
    error_places: tuple[Location | None, ...] = ()  # where each of those was raised
    early_stops: tuple[tuple[str, Location], ...] = ()  # loops that miss one item (loop_bounds)
    fixed: tuple[Hint, ...] = ()  # `name[0]` read inside a loop of its code (static.py)
    # for a variable: each line of the cells that set it (where its mistakes are placed)
    cell_lines: tuple[tuple[Location, str], ...] = ()
    # what the student has seen: a derived mistake quotes no code beyond it (None: no check)
    shown: Shown | None = None
    # the notebook's functions, by name (a helper's mistake is placed in the helper's body)
    functions: Callable[[str], FunctionSource | None] = field(default=lambda _name: None)


@dataclass(frozen=True)
class Diagnosis:
    """The mistakes named for one target, what is said about them, and where."""

    mistakes: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    location: Location | None = None

    @property
    def messages(self) -> tuple[str, ...]:
        """The findings' messages, in order."""
        return messages_of(self.findings)
