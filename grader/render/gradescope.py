"""`--format gradescope`: the results.json that Gradescope's autograder harness reads.

Each line of an `output` is one_line'd: student text gets no line (or control) of its own.
"""

from __future__ import annotations

import json
from typing import Any

from grader.render.escape import json_text, one_line
from grader.report import Report, TargetResult


def _test(target: TargetResult) -> dict[str, Any]:
    lines = [f"{target.status}: {target.score:g} / {target.max_score:g} points"]
    if target.location and target.status != "passed":
        lines.append(f"at {target.location.describe()}")
    if target.mistakes:
        lines.append(f"mistakes: {', '.join(target.mistakes)}")
    lines += target.messages
    return {
        "name": one_line(target.name),
        "score": target.score,
        "max_score": target.max_score,
        "status": "passed" if target.status == "passed" else "failed",
        "output": "\n".join(map(one_line, lines)),
        "visibility": "visible",
    }


def results(report: Report) -> dict[str, Any]:
    """The results.json object: a total, and one test per target."""
    output = [f"{report.assignment}: {report.score:g} / {report.max_score:g} points"]
    output += [f"problem: {e}" for e in report.errors] + [f"note: {n}" for n in report.notes]
    return {
        "score": report.score,
        "output": "\n".join(map(one_line, output)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [_test(t) for t in report.targets],
    }


def render(report: Report) -> str:
    """results.json as text."""
    return json_text(json.dumps(results(report), indent=2, ensure_ascii=False))
