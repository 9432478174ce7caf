"""Findings as data: reports, the class summary and the JSON read fields, never prose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from grader.course.config import Config
from grader.engine import _run_errors, grade_path
from grader.judge import diagnose
from grader.judge.aggregate import summarise
from grader.judge.score import Answers, judge_case
from grader.render.formats import REPORT_FORMATS
from grader.report import Finding, Location, Report, TargetResult
from grader.run.sandbox import ChildRun
from grader.run.workers import WorkerLost, _as_run

REPO = Path(__file__).resolve().parent.parent


def _report(findings: tuple[Finding, ...], **kwargs: Any) -> Report:
    target = TargetResult(
        "softmax",
        "failed",
        0.0,
        1.0,
        messages=tuple(f.message for f in findings),
        mistakes=tuple(f.mistake for f in findings if f.mistake),
        findings=findings,
    )
    return Report("self_attention", "a.ipynb", (target,), **kwargs)


def test_the_class_summary_reads_the_general_sentence_not_the_message() -> None:
    reworded = Finding(
        "mistake",
        "Mistake scale_missing here: your code forgot the scaling; remedy: divide",
        "scale_missing",
        Location(3, 4),
        "divide by sqrt(D_q)",
        "does not scale the scores at all.",
    )
    summary = summarise("self_attention", [("ada", _report((reworded,)))], [])
    assert [(m.id, m.message) for m in summary.mistakes] == [
        ("scale_missing", "does not scale the scores at all.")
    ]


def test_did_not_run_is_a_field_not_the_wording_of_an_error() -> None:
    died = _report((), errors=("cell 2: raised ValueError", "it died"), did_not_run="it died")
    fine = _report((), errors=("the notebook ran; cell 2 mentions a time limit",))
    summary = summarise("self_attention", [("ada", died), ("bo", fine)], [])
    assert summary.failing_to_run == (("ada", "it died"),)


def test_grading_with_reworded_fixes_keeps_the_class_sentence(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Change how a fix is worded: the old summary split messages at " Fix:".
    monkeypatch.setattr(diagnose, "_fix", lambda fix: f" Remedy: {fix}." if fix else "")
    report = grade_path(REPO / "demo" / "submissions" / "bruno.ipynb", config, "self_attention")
    said = [m for t in report.targets for m in t.messages if m.startswith("scale_hardcoded: ")]
    assert said and "Remedy:" in said[0] and " Fix:" not in said[0]
    summary = summarise("self_attention", [("bruno", report)], [])
    rows = {m.id: m.message for m in summary.mistakes}
    assert (
        rows["scale_hardcoded"] == "divides by the literal `2`, which is right only when D_q = 4."
    )
    for target in report.targets:
        assert target.messages == tuple(f.message for f in target.findings)
    named = [f for t in report.targets for f in t.findings if f.kind == "mistake"]
    assert {f.mistake for f in named} >= {"scale_hardcoded", "scale_discarded"}
    assert all(f.location is not None for f in named if f.mistake == "scale_hardcoded")


def test_the_json_carries_the_findings_and_reads_back() -> None:
    finding = Finding(
        "mistake", "scale_missing: x (cell 3, line 4).", "scale_missing", Location(3, 4), "y", "x."
    )
    report = _report((Finding("summary", "1 of 2 cases failed"), finding), did_not_run=None)
    data = json.loads(REPORT_FORMATS["json"].render(report))
    found = data["targets"][0]["findings"]
    assert found[0] == {
        "kind": "summary",
        "mistake": None,
        "message": "1 of 2 cases failed",
        "location": None,
        "fix": None,
        "general": None,
    }
    assert found[1]["mistake"] == "scale_missing" and found[1]["location"] == {"cell": 3, "line": 4}
    assert data["targets"][0]["messages"] == ["1 of 2 cases failed", finding.message]
    assert data["did_not_run"] is None
    assert Report.from_dict(data).targets[0].findings == report.targets[0].findings


def test_a_finding_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown finding kind"):
        Finding.from_dict({"kind": "gossip", "message": "x"})


def test_a_case_never_answered_is_a_timeout_by_the_runs_ending_not_its_words() -> None:
    nothing = cast(Any, None)
    words = "the notebook did not finish within the 5 s time limit"
    assert judge_case(nothing, nothing, nothing, None, words, over_time=False).kind == "error"
    assert judge_case(nothing, nothing, nothing, None, "gone", over_time=True).kind == "timeout"


@pytest.mark.parametrize(
    ("ending", "stopped"),
    [("killed", True), ("lost", True), ("exited", True), ("sandbox_fault", False)],
)
def test_did_not_run_comes_from_the_runs_ending(ending: Any, stopped: bool) -> None:
    run = ChildRun(exit_description="words", ending=ending, finished=False)
    errors, did_not_run = _run_errors(run, Answers())
    assert errors == ["words"]
    assert did_not_run == ("words" if stopped else None)


def test_a_cell_past_its_time_limit_did_not_run() -> None:
    answers = Answers()
    answers.cell_errors[2] = {"type": "ValueError", "message": "time limit"}
    answers.cell_errors[3] = {"type": "TimeLimit", "message": "", "where": {"cell": 3}}
    errors, did_not_run = _run_errors(ChildRun(), answers)
    assert did_not_run == errors[1] and errors[1].startswith("cell 3: did not finish")


def test_a_worker_answer_with_an_unknown_ending_is_refused() -> None:
    header = {
        "kind": "done",
        "finished": True,
        "timed_out": False,
        "went_silent": False,
        "isolated": False,
        "exit_description": "",
        "wire_error": "",
        "seconds": 1.0,
        "ending": "vanished",
    }
    with pytest.raises(WorkerLost, match="ending"):
        _as_run(header, b"")
    assert _as_run({**header, "ending": "killed"}, b"").ending == "killed"
