"""`--format classroom`: the runner result GitHub Classroom's reporter adds up."""

from __future__ import annotations

import json

from grader.render.classroom import results
from grader.render.formats import REPORT_FORMATS
from grader.report import Location, Report, TargetResult


def report(*targets: TargetResult) -> Report:
    return Report(assignment="a", submission="hw.ipynb", targets=targets)


def test_points_are_the_tests_scores_over_their_maxima() -> None:
    shown = results(
        report(
            TargetResult("f", "passed", 2.0, 2.0),
            TargetResult("g", "failed", 0.5, 1.5, ("wrong",), location=Location(3, 4, 40)),
            TargetResult("h", "timeout", 0.0, 1.0),
        )
    )
    assert shown["version"] == 1 and shown["status"] == "error"
    assert shown["max_score"] == 4.5
    assert sum(t["score"] for t in shown["tests"]) == 2.5
    assert [t["status"] for t in shown["tests"]] == ["pass", "fail", "error"]
    assert shown["tests"][1]["line_no"] == 40 and "wrong" in shown["tests"][1]["message"]


def test_status_is_fail_with_a_failed_target_and_pass_when_all_pass() -> None:
    assert results(report(TargetResult("f", "missing", 0.0, 1.0)))["status"] == "fail"
    assert results(report(TargetResult("f", "passed", 1.0, 1.0)))["status"] == "pass"


def test_student_text_stays_on_one_line_in_valid_json() -> None:
    evil = TargetResult("f", "failed", 0.0, 1.0, ("line\n::error::forged\u202e",))
    text = REPORT_FORMATS["classroom"].render(report(evil))
    assert "\n" not in text and "\u202e" not in text
    message = json.loads(text)["tests"][0]["message"]
    assert all(not line.startswith("::") for line in message.splitlines())
