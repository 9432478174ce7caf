"""Turn the child's answers into per-target verdicts and points."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from grader.course.cases import Case
from grader.course.config import TargetSpec
from grader.judge.child_error import exception_text
from grader.judge.compare import PASS, Verdict, all_pass, compare, stack
from grader.judge.identity import identical, tokens
from grader.judge.reference import Reference
from grader.report import Finding, Location, Status
from grader.run.frames import (
    MOST_FIXES,
    CellFrame,
    CellsDoneFrame,
    MissingFrame,
    ResultFrame,
    as_int,
    parse_frames,
)
from grader.run.sandbox import ChildRun
from grader.run.scalars import NUMPY_HINT, ZERO_DIM_MESSAGE, scalar_note
from grader.run.wire import Seq, Value, clean_text

MAX_CASE_MESSAGES = 3


# The cells whose errors are kept: each is a line of every output, and the child says which
# (a forged frame per made-up cell was a line each).
MOST_CELL_ERRORS = 200


@dataclass
class Answers:
    """The child's frames, sorted by what they are about."""

    cell_errors: dict[int, dict[str, Any]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    results: dict[tuple[str, int], ResultFrame] = field(default_factory=dict)
    scalar_fixes: set[tuple[int, int]] = field(default_factory=set)
    fixes_by_target: dict[str, set[tuple[int, int]]] = field(default_factory=dict)
    output: str = ""

    def target_fixes(self, target: str) -> set[tuple[int, int]]:
        """Where (cell, line) a 1×1 array was turned into a number while this target ran."""
        return self.fixes_by_target.get(target, set())

    @classmethod
    def from_run(cls, run: ChildRun) -> Answers:
        """Sort a child run's frames: cell errors, missing targets, results by (target, case), the
        captured output and the scalar fixes."""
        answers = cls()
        for frame in parse_frames(run.frames):
            if isinstance(frame, CellFrame) and isinstance(frame.error, dict):
                if len(answers.cell_errors) < MOST_CELL_ERRORS or frame.cell in answers.cell_errors:
                    answers.cell_errors[frame.cell] = frame.error
            elif isinstance(frame, MissingFrame):
                answers.missing[frame.target] = frame.found
            elif isinstance(frame, ResultFrame):
                answers.results[(frame.target, frame.case)] = frame
            elif isinstance(frame, CellsDoneFrame):
                answers.output = frame.output
            if frame.scalar_fixes:  # rare: the usual frame has none
                room = MOST_FIXES - len(answers.scalar_fixes)
                fresh = frame.scalar_fixes - answers.scalar_fixes
                answers.scalar_fixes |= set(sorted(fresh)[:room]) if len(fresh) > room else fresh
                if isinstance(frame, ResultFrame):
                    held = answers.fixes_by_target.setdefault(frame.target, set())
                    held.update(frame.scalar_fixes & answers.scalar_fixes)
        return answers


def location_of(error: Mapping[str, Any]) -> Location | None:
    """Where a child's error happened, or None when it gives no cell."""
    where = error.get("where")
    if isinstance(where, dict) and as_int(where.get("cell")) > 0:
        return Location(as_int(where.get("cell")), max(as_int(where.get("line")), 0))
    return None


def describe_error(error: Mapping[str, Any], hints: bool = True) -> str:
    """A child's error as one sentence: a time limit, a parse error or the exception raised, with
    its place and a NumPy hint where it helps (`hints=False`: without the hint, for a crash
    told again beside each target it stopped, after the notebook's problems told it whole)."""
    kind = clean_text(error.get("type"), 60)
    message = clean_text(error.get("message", ""), 300)
    where = location_of(error)
    at = f" ({where.describe()})" if where else ""
    if kind == "TimeLimit":  # a message: how it was stopped (the child's CAUGHT)
        return f"did not finish within the time limit{at}" + (f"; {message}" if message else "")
    if kind == "NotRun":  # the cells' time together was spent (grader/run/child.py)
        return f"not run: {message}" if message else "not run"
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        return f"does not parse: {kind}: {message}{at}"
    if kind == "Unencodable":  # the child could not read the value (grader/run/child.py)
        why = f" ({message})" if message else ""
        return (
            f"gave a value the grader cannot read{why}: return NumPy arrays, numbers, or "
            "lists and tuples of them"
        )
    text = f"raised {exception_text(error)}{at}"
    if not hints:
        return text
    if kind == "TypeError" and ZERO_DIM_MESSAGE in message:
        text += f". {NUMPY_HINT}"
    if kind == "EOFError" and message == INPUT_MESSAGE:
        text += f". {INPUT_HINT}"
    if kind == "ModuleNotFoundError" and message.startswith("No module named"):
        text += f". {MODULE_HINT}"
    return text


# What input() raises with nobody to type: the grader runs notebooks with no keyboard.
INPUT_MESSAGE = "EOF when reading a line"
INPUT_HINT = (
    "Nobody can type an answer to input() while the grader runs the notebook: write the "
    "value into the code instead"
)


# Where a notebook is graded it finds the standard library, NumPy and the course's `preload:`
# (grader/run/view.py): a module installed on the student's machine may not be there.
MODULE_HINT = (
    "Where the grader runs your notebook there are only Python's standard library, NumPy and "
    "the modules your course lists: remove the import and what uses it, or ask your "
    "instructor (a course lists modules under `preload:` in its config.yaml)"
)


OutcomeKind = Literal["passed", "failed", "error", "timeout", "not_implemented"]


@dataclass(frozen=True)
class CaseOutcome:
    """How one case went, and the words for it when it did not simply pass."""

    kind: OutcomeKind
    message: str = ""
    location: Location | None = None
    mutated: bool = False


def judge_case(
    spec: TargetSpec,
    case: Case,
    reference: Reference,
    answer: ResultFrame | None,
    unanswered: str,
    over_time: bool = False,
) -> CaseOutcome:
    """Judge one case's answer; `unanswered` says why there is none (`over_time`: because
    the notebook ran out of time, which makes it a timeout)."""
    if answer is None:
        return CaseOutcome("timeout" if over_time else "error", unanswered)
    values = answer.values
    if answer.status == "timeout":
        raw = answer.error
        stuck = location_of(raw) if isinstance(raw, dict) else None
        said = clean_text(raw.get("message", ""), 300) if isinstance(raw, dict) else ""
        text = "did not finish within the per-call time limit" + (f"; {said}" if said else "")
        return CaseOutcome("timeout", text, stuck)
    if answer.status != "ok":
        raw_error = answer.error
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        where = location_of(error)
        if error.get("type") == "NotImplementedError":
            return CaseOutcome("not_implemented", "not implemented yet", where)
        return CaseOutcome("error", describe_error(error), where)
    verdict = compare(
        reference.outputs[case.index], values.get("value"), spec.compare, spec.tolerance
    )
    return _judged(spec, case, reference, values, verdict)


def judge_cases(
    spec: TargetSpec,
    cases: Sequence[Case],
    reference: Reference,
    results: Mapping[tuple[str, int], ResultFrame],
    unanswered: str,
    over_time: bool = False,
) -> list[CaseOutcome]:
    """`judge_case` for each of a target's cases. When every case answered and every answer
    is within the tolerance (checked at once, for all the cases: the usual passing target),
    each case is left with only its check for changed arguments."""
    answers = [results.get((spec.name, case.index)) for case in cases]
    answered = [a for a in answers if a is not None and a.status == "ok"]
    if len(answered) == len(cases):
        flat = reference.flat_outputs(tuple(case.index for case in cases))
        got = [a.values.get("value") for a in answered]
        if flat is not None and all_pass(flat, got, spec.tolerance):
            done = zip(cases, answered, strict=True)
            return [_judged(spec, c, reference, a.values, PASS) for c, a in done]
    return [
        judge_case(spec, case, reference, answer, unanswered, over_time)
        for case, answer in zip(cases, answers, strict=True)
    ]


def not_called_after_timeout(
    spec: TargetSpec,
    cases: Sequence[Case],
    results: Mapping[tuple[str, int], ResultFrame],
    outcomes: list[CaseOutcome],
) -> list[CaseOutcome]:
    """`outcomes` with the cases the child did not call after one of the target's ran out
    of its time (each would take the whole limit again) said so, not as "no answer from
    the notebook"."""
    answers = [results.get((spec.name, case.index)) for case in cases]
    ran_out = next((i for i, a in enumerate(answers) if a and a.status == "timeout"), len(cases))
    if ran_out >= len(cases) - 1:
        return outcomes
    said = CaseOutcome("timeout", not_called(cases[ran_out].index + 1))
    return [
        said if answer is None and i > ran_out else outcome
        for i, (answer, outcome) in enumerate(zip(answers, outcomes, strict=True))
    ]


def not_called(case: int) -> str:
    """What a case says that the child did not call, case `case` (counted from 1) having
    run out of time."""
    return (
        f"not called: case {case} ran out of the per-call time limit, and each further call "
        "could take all of it again"
    )


def _judged(
    spec: TargetSpec,
    case: Case,
    reference: Reference,
    values: Mapping[str, Value],
    verdict: Verdict,
) -> CaseOutcome:
    """A case that answered, from its comparison's verdict and the arguments it changed."""
    kept = reference.input_tokens(case.index)
    mutation = _mutation(reference, changed_arguments(reference.inputs[case.index], values, kept))
    if not verdict.ok:
        extra = f"; it also {mutation}" if mutation else ""
        return CaseOutcome("failed", verdict.message + extra, mutated=bool(mutation))
    if mutation and spec.mutation == "fail":
        return CaseOutcome("failed", f"right result, but it {mutation}", mutated=True)
    notes = [f"it {mutation} (allowed here)"] if mutation else []
    notes += _listed(reference.outputs[case.index], values.get("value"))
    if spec.compare == "squeeze":
        notes += _squeezed(reference.outputs[case.index], values.get("value"))
    return CaseOutcome("passed", "; ".join(notes))


def _listed(expected: Value, got: Value | None) -> list[str]:
    """What a pass let through where an array is expected and a list (or tuple) of the same
    numbers came back (`.tolist()`): code that goes on with it (`.T`, `@`, `.shape`) fails."""
    if isinstance(expected, Seq) or not isinstance(got, Seq):
        return []
    want = stack(expected)
    if want is None or want.ndim == 0:  # a number is expected: not an array's note
        return []
    return [
        f"returns a {got.kind} where the reference returns an array: the same numbers, so it "
        "passes; return the array itself (no `.tolist()`, or `np.array(...)` around it), "
        "as code that uses it (`.T`, `@`, `.shape`) needs one"
    ]


def _squeezed(expected: Value, got: Value | None) -> list[str]:
    """What a pass under `compare: squeeze` let through: the shape, when it is not the
    expected one (the same numbers, with axes of length 1 added or left out)."""
    want, have = stack(expected), stack(got) if got is not None else None
    if want is None or have is None or want.shape == have.shape:
        return []
    return [
        f"shape {have.shape} where the reference has {want.shape}: the same numbers, so it passes; "
        "keep to one shape if later code needs that one"
    ]


def changed_arguments(
    inputs: Sequence[Value], values: Mapping[str, Value], kept: list[object] | None = None
) -> list[int]:
    """The positions of the arguments a call changed: each input as the grader built it,
    against the same argument as the child sent it back after the call. Judged here, in the
    grader: a child can lie about its own inputs only by forging the numbers themselves.
    `kept`: the inputs' `tokens`, when known, which tell at once that none changed."""
    after = values.get("args")
    if not isinstance(after, Seq) or len(after.items) != len(inputs):
        return list(range(len(inputs)))  # the arguments did not come back: not trusted
    if kept is not None and tokens(after.items) == kept:
        return []
    return [
        i
        for i, (kept, given) in enumerate(zip(inputs, after.items, strict=True))
        if not identical(kept, given)
    ]


def _mutation(reference: Reference, positions: Sequence[int]) -> str:
    """Words for the arguments a call changed in place (none: empty)."""
    changed = [
        reference.parameters[i] if i < len(reference.parameters) else f"#{i + 1}" for i in positions
    ]
    if not changed:
        return ""
    names = ", ".join(f"`{n}`" for n in changed)
    return f"changed its argument {names} in place; work on a copy instead"


def target_status(outcomes: Sequence[CaseOutcome]) -> Status:
    """A target's status from its cases: passed when all passed, else timeout, error (only errors or
    stubs) or failed."""
    return status_of({o.kind for o in outcomes})


def status_of(kinds: set[str]) -> Status:
    """The status cases of these kinds give (target_status; the service's public cases)."""
    if kinds == {"passed"}:
        return "passed"
    if "timeout" in kinds:
        return "timeout"
    if kinds - {"passed"} <= {"error", "not_implemented"}:
        return "error"
    return "failed"


def target_score(spec: TargetSpec, outcomes: Sequence[CaseOutcome]) -> float:
    """A target's points: all when every case passed, else the share of passed cases with partial
    credit, else 0."""
    passed = sum(o.kind == "passed" for o in outcomes)
    if passed == len(outcomes):
        return spec.points
    if not spec.partial_credit or not outcomes:
        return 0.0
    return round(spec.points * passed / len(outcomes), 4)


_SHAPE = re.compile(r"\((?:\d+, )*\d*,?\)")  # (3,), (3, 4), ()


def told_once(notes: Sequence[str]) -> list[str]:
    """The notes of passing cases, each told once: notes that differ only in the shapes
    they name (one per case size) by the first, with how many more cases are alike."""
    alike: dict[str, list[str]] = {}
    for note in notes:
        alike.setdefault(_SHAPE.sub("()", note), []).append(note)
    told = []
    for group in alike.values():
        others = len(group) - 1 if len(set(group)) > 1 else 0
        more = f" (the same in {others} more case{'s' * (others > 1)})" if others else ""
        told.append(group[0] + more)
    return sorted(told)


def summarise(cases: Sequence[Case], outcomes: Sequence[CaseOutcome]) -> list[Finding]:
    """How many cases passed, then each way they failed (told once for all its cases)."""
    failing = [(c, o) for c, o in zip(cases, outcomes, strict=True) if o.kind != "passed"]
    notes = [o.message for o in outcomes if o.kind == "passed" and o.message]
    if not failing:
        passed = Finding("summary", f"passed all {len(cases)} cases")
        return [passed, *(Finding("case", note) for note in told_once(notes))]
    lines = [Finding("summary", f"{len(failing)} of {len(cases)} cases failed")]
    # Cases that failed the same way are told once, not once per case.
    groups: dict[str, list[tuple[Case, CaseOutcome]]] = {}
    for case, outcome in failing:
        groups.setdefault(outcome.message, []).append((case, outcome))
    for message, group in list(groups.items())[:MAX_CASE_MESSAGES]:
        where = group[0][1].location
        if len(group) == 1:
            case = group[0][0]
            text = f"case {case.index + 1} ({case.describe()}): {message}"
        else:
            numbers = ", ".join(str(c.index + 1) for c, _ in group)
            text = f"cases {numbers}: {message}"
        lines.append(Finding("case", text, location=where))
    if len(groups) > MAX_CASE_MESSAGES:
        rest = sum(len(g) for g in list(groups.values())[MAX_CASE_MESSAGES:])
        lines.append(Finding("case", f"… and {rest} more failing case{'s' * (rest > 1)}"))
    return lines


def scalar_messages(fixes: set[tuple[int, int]]) -> list[str]:
    """A note for each place a 0-d array had to be turned into a number."""
    return [scalar_note(cell, line) for cell, line in sorted(fixes)]


def scalar_findings(fixes: set[tuple[int, int]]) -> list[Finding]:
    """`scalar_messages`, as findings with their places."""
    return [
        Finding("scalar", scalar_note(cell, line), location=Location(cell, line))
        for cell, line in sorted(fixes)
    ]
