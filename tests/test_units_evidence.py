"""judge/evidence.py: the evidence on failing targets, gathered from hand-built answers (no
child process: the references are written here, not computed by the course's code)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from grader.course.cases import PROBE_OFFSET, Case, CaseSet
from grader.course.config import AssignmentSpec, TargetSpec, TimeLimit
from grader.course.notebook import CodeCell, Submission
from grader.judge.evidence import explain
from grader.judge.expected import Expected
from grader.judge.reference import Reference
from grader.judge.score import Answers
from grader.report import Finding, Location, TargetResult
from grader.run.frames import ResultFrame

INPUTS = (np.array([1.0, 2.0]), np.array([3.0, 5.0, 7.0]))
SOURCE = "def double(x):\n    return x * 4\n"


def setup() -> tuple[AssignmentSpec, CaseSet, Expected, Submission]:
    spec = TargetSpec("double", 2.0, "vector", ({"N": 2}, {"N": 3}))
    assignment = AssignmentSpec(
        "doubling", "Doubling", Path("solution.ipynb"), None, None, 1, TimeLimit(), (spec,)
    )
    cases = tuple(Case("double", i, {"N": len(x)}, (x,)) for i, x in enumerate(INPUTS))
    probe = Case("double", PROBE_OFFSET, {"N": 3}, (INPUTS[1] + 1,), probe=True)
    case_set = CaseSet({"double": cases}, {"double": (probe,)})
    # The solution doubles its input: the references are written here, by hand.
    reference = Reference(tuple(2 * x for x in INPUTS), tuple((x,) for x in INPUTS), ("x",))
    probed = Reference((2 * probe.args[0],), (probe.args,), ("x",))
    expected = Expected({"double": reference}, {"double": probed}, {"double": []})
    cells = (CodeCell(2, SOURCE, SOURCE),)
    submission = Submission(Path("s.ipynb"), "s", cells, None, ())
    return assignment, case_set, expected, submission


def answers(factor: float) -> Answers:
    found = Answers()
    for i, x in enumerate(INPUTS):
        found.results[("double", i)] = ResultFrame("double", i, "ok", values={"value": factor * x})
    return found


def failing(mistakes: tuple[str, ...] = ()) -> TargetResult:
    return TargetResult(
        "double",
        "failed",
        0.0,
        2.0,
        ("2 of 2 cases failed", "case 1 (N=2): wrong values"),
        mistakes,
        None,
        0,
        2,
        ("failed", "failed"),
        findings=(
            Finding("summary", "2 of 2 cases failed"),
            Finding("case", "case 1 (N=2): wrong values"),
        ),
    )


def test_a_failing_target_gets_its_diagnosis_between_summary_and_details() -> None:
    assignment, case_set, expected, submission = setup()
    (result,) = explain(
        (failing(("mutates_input",)),), assignment, case_set, expected, answers(4.0), submission
    )
    assert result.messages[0] == "2 of 2 cases failed"
    assert result.messages[-1] == "case 1 (N=2): wrong values"
    told = result.messages[1:-1]
    # The student's 4x is twice the reference's 2x on every case.
    assert "off by a constant factor: every entry is 2 × the expected value" in told
    assert result.mistakes == ("mutates_input",)  # what scoring found stays, told once
    assert any(m.startswith("mutates_input:") for m in told)
    assert (result.status, result.score, result.case_outcomes) == ("failed", 0.0, ("failed",) * 2)


def test_passed_and_unimplemented_targets_are_left_as_they_are() -> None:
    assignment, case_set, expected, submission = setup()
    passed = replace(failing(), status="passed", score=2.0, messages=("passed all 2 cases",))
    todo = replace(failing(("not_implemented",)), status="error", location=Location(2, 1))
    found = explain((passed, todo), assignment, case_set, expected, answers(4.0), submission)
    assert found == (passed, todo)


def test_a_target_without_answers_keeps_its_words() -> None:
    assignment, case_set, expected, submission = setup()
    said = Finding("case", "raised ValueError: no")
    result = replace(failing(), status="error", messages=(said.message,), findings=(said,))
    (explained,) = explain((result,), assignment, case_set, expected, Answers(), submission)
    # No value came back: no relation to the reference can be drawn, nothing is added.
    assert explained.messages == ("raised ValueError: no",)
    assert explained.mistakes == ()
