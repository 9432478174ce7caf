"""judge/score.py called directly, on hand-built frames and outcomes (no child process)."""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.course.cases import Case
from grader.course.config import TargetSpec
from grader.judge.reference import Reference
from grader.judge.score import (
    MAX_CASE_MESSAGES,
    Answers,
    CaseOutcome,
    changed_arguments,
    describe_error,
    identical,
    judge_case,
    location_of,
    summarise,
    target_score,
    target_status,
)
from grader.report import Location
from grader.run.frames import ResultFrame
from grader.run.sandbox import ChildRun
from grader.run.wire import Seq, Value, encode_frame


def spec(points: float = 4.0, partial: bool = True, mutation: str = "fail") -> TargetSpec:
    return TargetSpec(
        "double", points, "matrix", ({"N": 2},), partial_credit=partial, mutation=mutation
    )


def case(index: int, n: int = 2) -> Case:
    return Case("double", index, {"N": n}, (np.ones((n, n)),))


def reference(inputs: tuple[Value, ...] = (np.ones((2, 2)),)) -> Reference:
    return Reference(outputs=(np.full((2, 2), 2.0),), inputs=(inputs,), parameters=("x",))


def ok_answer(value: Value, args: tuple[Value, ...]) -> ResultFrame:
    return ResultFrame("t", 0, "ok", values={"value": value, "args": Seq("tuple", args)})


def test_a_right_value_with_untouched_arguments_passes() -> None:
    answer = ok_answer(np.full((2, 2), 2.0), (np.ones((2, 2)),))
    assert judge_case(spec(), case(0), reference(), answer, "") == CaseOutcome("passed", "")


def test_a_wrong_value_fails_and_says_what_differs() -> None:
    answer = ok_answer(np.full((2, 2), 3.0), (np.ones((2, 2)),))
    outcome = judge_case(spec(), case(0), reference(), answer, "")
    assert outcome.kind == "failed"
    assert outcome.message
    assert not outcome.mutated


def test_a_changed_argument_fails_unless_the_target_allows_it() -> None:
    changed = np.zeros((2, 2))
    answer = ok_answer(np.full((2, 2), 2.0), (changed,))
    strict = judge_case(spec(), case(0), reference(), answer, "")
    assert strict.kind == "failed" and strict.mutated
    assert "`x`" in strict.message and "in place" in strict.message
    allowed = judge_case(spec(mutation="allow"), case(0), reference(), answer, "")
    assert allowed.kind == "passed" and "(allowed here)" in allowed.message


def test_no_answer_is_a_timeout_only_when_the_run_ended_over_time() -> None:
    timeout = judge_case(spec(), case(0), reference(), None, "it stopped", over_time=True)
    assert timeout.kind == "timeout"
    crash = judge_case(spec(), case(0), reference(), None, "the child crashed")
    assert (crash.kind, crash.message) == ("error", "the child crashed")


def test_error_frames_become_errors_with_their_location() -> None:
    error = {"type": "NotImplementedError", "message": "", "where": {"cell": 3, "line": 2}}
    todo = judge_case(spec(), case(0), reference(), ResultFrame("t", 0, "error", error), "")
    assert (todo.kind, todo.location) == ("not_implemented", Location(3, 2))
    error = {"type": "ValueError", "message": "bad", "where": {"cell": 4, "line": 1}}
    raised = judge_case(spec(), case(0), reference(), ResultFrame("t", 0, "error", error), "")
    assert raised.kind == "error"
    assert raised.message == "raised ValueError: bad (cell 4, line 1)"
    late = judge_case(spec(), case(0), reference(), ResultFrame("t", 0, "timeout"), "")
    assert late.kind == "timeout"


def test_describe_error_words_each_kind() -> None:
    assert describe_error({"type": "TimeLimit"}) == "did not finish within the time limit"
    assert describe_error({"type": "SyntaxError", "message": "oops"}) == (
        "does not parse: SyntaxError: oops"
    )
    assert describe_error({"type": "KeyError"}) == "raised KeyError"
    assert location_of({"where": {"cell": 0, "line": 5}}) is None  # cell numbers start at 1
    assert location_of({"where": {"cell": 2, "line": -3}}) == Location(2, 0)
    # r45: a cell too deep to compile has no line (Python gives 0): none is said
    deep = {"type": "RecursionError", "where": {"cell": 9, "line": 0}}
    assert describe_error(deep) == "raised RecursionError (cell 9)"


def test_identical_tells_lists_from_tuples_and_bits_from_values() -> None:
    a = np.array([1.0, 2.0])
    assert identical(a, a.copy())
    assert not identical(a, a.astype(np.float32))
    assert not identical(a, np.array([[1.0, 2.0]]))
    assert not identical(Seq("list", (a,)), Seq("tuple", (a,)))
    assert identical(Seq("list", (a,)), Seq("list", (a.copy(),)))


def test_changed_arguments_lists_the_changed_positions() -> None:
    kept = (np.ones(2), np.zeros(2))
    same = {"args": Seq("tuple", (np.ones(2), np.zeros(2)))}
    assert changed_arguments(kept, same) == []
    second = {"args": Seq("tuple", (np.ones(2), np.ones(2)))}
    assert changed_arguments(kept, second) == [1]
    # Arguments that did not come back are not trusted: every position counts as changed.
    assert changed_arguments(kept, {}) == [0, 1]
    assert changed_arguments(kept, {"args": Seq("tuple", (np.ones(2),))}) == [0, 1]


def test_target_status_from_its_outcomes() -> None:
    def status(*kinds: str) -> str:
        return target_status([CaseOutcome(k) for k in kinds])

    assert status("passed", "passed") == "passed"
    assert status("passed", "timeout", "failed") == "timeout"
    assert status("error", "not_implemented", "passed") == "error"
    assert status("error", "failed") == "failed"


def test_target_score_gives_partial_credit_when_allowed() -> None:
    outcomes = [CaseOutcome("passed"), CaseOutcome("failed"), CaseOutcome("passed")]
    outcomes.append(CaseOutcome("error"))
    assert target_score(spec(points=4.0), outcomes) == 2.0  # 2 of 4 cases
    assert target_score(spec(points=4.0, partial=False), outcomes) == 0.0
    assert target_score(spec(points=4.0, partial=False), outcomes[:1]) == 4.0
    assert target_score(spec(points=1.0), outcomes[:3]) == 0.6667  # 1 × 2 / 3, rounded
    assert target_score(spec(points=3.0), []) == 3.0  # nothing to fail


def test_summarise_counts_and_groups_failures() -> None:
    cases = [case(i, n) for i, n in enumerate((2, 3, 4))]
    passed = [CaseOutcome("passed", "it changed x (allowed here)")] * 3
    assert said(cases, passed) == [
        "passed all 3 cases",
        "it changed x (allowed here)",
    ]
    mixed = [CaseOutcome("failed", "wrong"), CaseOutcome("passed"), CaseOutcome("failed", "wrong")]
    assert said(cases, mixed) == [
        "2 of 3 cases failed",
        "cases 1, 3: wrong",
    ]
    one = [CaseOutcome("passed"), CaseOutcome("error", "boom"), CaseOutcome("passed")]
    assert said(cases, one) == [
        "1 of 3 cases failed",
        "case 2 (N=3): boom",
    ]


def test_summarise_tells_at_most_a_few_different_failures() -> None:
    count = MAX_CASE_MESSAGES + 2
    cases = [case(i) for i in range(count)]
    outcomes = [CaseOutcome("failed", f"wrong in way {i}") for i in range(count)]
    lines = said(cases, outcomes)
    assert lines[0] == f"{count} of {count} cases failed"
    assert len(lines) == 1 + MAX_CASE_MESSAGES + 1
    assert lines[-1] == "… and 2 more failing cases"


def test_answers_sort_the_childs_frames() -> None:
    frames: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"kind": "cell", "cell": 2, "error": {"type": "NameError"}}, {}),
        ({"kind": "missing", "target": "softmax", "found": "nothing"}, {}),
        ({"kind": "result", "target": "double", "case": 1, "scalar_fixes": [[3, 4]]}, {}),
        ({"kind": "cells_done", "output": "hello"}, {}),
        ({"kind": "result", "target": "double", "case": True, "scalar_fixes": ["bad"]}, {}),
    ]
    run = ChildRun(raw=b"".join(encode_frame(h, v) for h, v in frames), finished=True)
    answers = Answers.from_run(run)
    assert run.wire_error == ""
    assert answers.cell_errors == {2: {"type": "NameError"}}
    assert answers.missing == {"softmax": "nothing"}
    assert set(answers.results) == {("double", 1), ("double", -1)}  # a bool is not a case
    assert answers.output == "hello"
    assert answers.scalar_fixes == {(3, 4)}
    assert answers.target_fixes("double") == {(3, 4)}
    assert answers.target_fixes("softmax") == set()


def said(cases: list[Case], outcomes: list[CaseOutcome]) -> list[str]:
    """What `summarise` tells, as the messages of its findings."""
    return [f.message for f in summarise(cases, outcomes)]
