"""`--format gradescope`: the results.json that Gradescope's autograder harness reads.

Each line of an `output` is one_line'd: student text gets no line (or control) of its own.
"""

from __future__ import annotations

import json
from typing import Any

from grader.render.escape import json_text, one_line
from grader.render.verdict import verdict_lines
from grader.report import Report, TargetResult


def _lines(target: TargetResult) -> list[str]:
    """What a test's output says of a target: verdict, where, mistakes, messages."""
    return verdict_lines(target) + list(target.messages)


def _test(
    name: str, score: float, max_score: float, ok: bool, lines: list[str], visibility: str
) -> dict[str, Any]:
    return {
        "name": one_line(name),
        "score": round(score, 6),
        "max_score": round(max_score, 6),
        "status": "passed" if ok else "failed",
        "output": "\n".join(map(one_line, lines)),
        "visibility": visibility,
    }


def _tests(target: TargetResult) -> list[dict[str, Any]]:
    """One test per target; a target with hidden cases (`public_cases:`) is two: its public
    cases, visible now, and its hidden ones, shown `after_published`. Each case is worth an
    equal share of the points; the two tests add up to the target's score. The public test
    says nothing of hidden cases beyond the diagnosis, and that only when a public case
    failed."""
    public, total, ok = target.public_cases, target.cases_total, target.status == "passed"
    if public is None or public >= total:
        lines = _lines(target)
        return [_test(target.name, target.score, target.max_score, ok, lines, "visible")]
    share = target.max_score / total
    passed = sum(o == "passed" for o in target.case_outcomes[:public])
    # Never more than the target earned (all-or-nothing scoring gives 0 for any failure).
    shown = min(share * passed, target.score)
    said = [f"public cases: {passed} of {public} passed"]
    if passed < public:  # the diagnosis, not the per-case lines (they count hidden cases)
        said += verdict_lines(target)[1:]  # a public case failed: the target did not pass
        said += [f.message for f in target.findings if f.kind not in ("summary", "case")]
    hidden = total - public
    unseen = sum(o == "passed" for o in target.case_outcomes[public:])
    public_max = share * public
    if target.all_or_nothing:  # its points hang on the hidden cases too: all go with them
        shown = public_max = 0.0  # (a visible 0 of 1 beside "2 of 2 passed" told it: r50)
        said.append("the points are all or nothing: shown with the hidden cases")
    return [
        _test(
            f"{target.name} (public cases)",
            shown,
            public_max,
            passed == public,
            said,
            "visible",
        ),
        _test(
            f"{target.name} (hidden cases)",
            target.score - shown,
            target.max_score - public_max,
            unseen == hidden,
            [f"hidden cases: {unseen} of {hidden} passed", *_lines(target)],
            "after_published",
        ),
    ]


def results(report: Report) -> dict[str, Any]:
    """The results.json object: a total, and one test per target."""
    output = [f"{report.assignment}: {report.score:g} / {report.max_score:g} points"]
    output += [f"problem: {e}" for e in report.errors] + [f"note: {n}" for n in report.notes]
    return {
        "score": report.score,
        "output": "\n".join(map(one_line, output)),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [test for t in report.targets for test in _tests(t)],
    }


def render(report: Report) -> str:
    """results.json as text."""
    return json_text(json.dumps(results(report), indent=2, ensure_ascii=False))
