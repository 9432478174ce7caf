"""`--format gradescope`: the results.json that Gradescope's autograder harness reads."""

from __future__ import annotations

import json
from typing import Any

from ..report import Report, TargetResult
from .escape import printable


def _test(target: TargetResult) -> dict[str, Any]:
    lines = [f"{target.status}: {target.score:g} / {target.max_score:g} points"]
    if target.location and target.status != "passed":
        lines.append(f"at {target.location.describe()}")
    if target.mistakes:
        lines.append(f"mistakes: {', '.join(target.mistakes)}")
    lines += target.messages
    return {
        "name": target.name,
        "score": target.score,
        "max_score": target.max_score,
        "status": "passed" if target.status == "passed" else "failed",
        "output": printable("\n".join(lines)),
        "visibility": "visible",
    }


def results(report: Report) -> dict[str, Any]:
    output = [f"{report.assignment}: {report.score:g} / {report.max_score:g} points"]
    output += [f"problem: {e}" for e in report.errors] + [f"note: {n}" for n in report.notes]
    return {
        "score": report.score,
        "output": printable("\n".join(output)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [_test(t) for t in report.targets],
    }


def render(report: Report) -> str:
    return json.dumps(results(report), indent=2, ensure_ascii=False)
