"""`--format classroom`: the result GitHub Classroom's autograding reporter reads.

Classroom's reporter (classroom-resources/autograding-grading-reporter) takes, for each runner
named in its `runners` input, the environment variable `<RUNNER>_RESULTS`: this object,
base64-encoded. It adds up the `score` of every test and the runner's `max_score`, and writes
"Points total/max" on the "Autograding Tests" check run, which is what Classroom records.
So `max_score` is the sum of the tests' maxima, and each test's score is its points.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from grader.render.escape import json_text, one_line
from grader.render.verdict import verdict_lines
from grader.report import Report, TargetResult

Verdict = Literal["pass", "fail", "error"]
_VERDICT: dict[str, Verdict] = {"passed": "pass", "error": "error", "timeout": "error"}


def _test(report: Report, target: TargetResult) -> dict[str, Any]:
    lines = verdict_lines(target, mistakes=False) + list(target.messages)
    where = target.location
    return {
        "name": one_line(target.name),
        "status": _VERDICT.get(target.status, "fail"),
        "score": target.score,
        "max_score": target.max_score,
        "message": "\n".join(map(one_line, lines)),
        "test_code": "",
        "filename": one_line(report.submission),
        "line_no": (where.file_line or where.line) if where else 0,
        "duration": 0,
    }


def results(report: Report) -> dict[str, Any]:
    """The runner's result object: version 1, a status, the maximum and one test per target."""
    tests = [_test(report, t) for t in report.targets]
    status: Verdict = "pass"
    if any(t["status"] == "error" for t in tests) or not tests:
        status = "error"
    elif any(t["status"] == "fail" for t in tests):
        status = "fail"
    return {"version": 1, "status": status, "max_score": report.max_score, "tests": tests}


def render(report: Report) -> str:
    """The result as one line of JSON (the workflow base64-encodes it into a step output)."""
    return json_text(json.dumps(results(report), ensure_ascii=False))
