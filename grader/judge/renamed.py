"""A target the notebook does not define, when it defines a function of a near name: say so.

A student who renames `softmax` to `my_softmax` (or `qkv_loop` to `qkv`) is told "not
defined" and, without this, nothing else: the function they wrote is right there. Said as a
question, since the near name may be a helper of their own.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from grader.course.notebook import Submission
from grader.report import Finding, Location, TargetResult

ABSENT = "no cell of the notebook defines a function of that name"


def _functions(submission: Submission) -> dict[str, Location]:
    """The notebook's top-level functions and where each is (last) defined."""
    found: dict[str, Location] = {}
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[node.name] = Location(cell.index, node.lineno)
    return found


def near_name(name: str, candidates: list[str]) -> str | None:
    """The candidate most like `name`: a close spelling, else one holding it or held by it."""
    import difflib  # only for a notebook that misses a target (1-2 ms of every start)

    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if close:
        return close[0]
    lowered = name.lower()
    held = [c for c in candidates if len(c) >= 3 and (lowered in c.lower() or c.lower() in lowered)]
    return held[0] if held else None


def name_renamed(
    results: tuple[TargetResult, ...], submission: Submission
) -> tuple[TargetResult, ...]:
    """Each target missing outright, told of a function of a near name the notebook defines
    (never another target's own name)."""
    missing = [r for r in results if r.status == "missing" and any(ABSENT in m for m in r.messages)]
    if not missing:
        return results
    targets = {r.name for r in results}
    functions = _functions(submission)
    candidates = sorted(n for n in functions if n not in targets)
    told: dict[str, TargetResult] = {}
    for result in missing:
        near = near_name(result.name, candidates)
        if near is None:
            continue
        where = functions[near]
        hint = (
            f"the notebook defines `{near}` ({where.describe()}): if that is your "
            f"`{result.name}`, name it `{result.name}`, as the exercise does (the grader calls "
            "each function by its name)"
        )
        told[result.name] = replace(
            result,
            messages=(*result.messages, hint),
            findings=(*result.findings, Finding("missing", hint, location=where)),
            location=result.location or where,
        )
    return tuple(told.get(r.name, r) for r in results)
