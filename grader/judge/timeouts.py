"""Timeouts that teach: where the student's code was when its time ran out, and the loop.

The child samples its own stack when the time limit strikes (child.stuck_at) and sends only
two numbers, a cell and a line. Everything else is found here, in the grader, from the
notebook's own syntax tree (never run): the `for` or `while` statement around that line, and
the function it is in, so that a function that only timed out because it calls a looping one
says "fix that one first" instead of "timeout" with no why.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from grader.course.notebook import Submission
from grader.report import Finding, Location, TargetResult, messages_of

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def checked(submission: Submission, where: Location | None) -> Location | None:
    """The place, when it is a line of one of the notebook's code cells; else None (the
    numbers came from the student's process, and are only believed when they fit)."""
    if where is None:
        return None
    cell = submission.cell(where.cell)
    if cell is None or not 0 < where.line <= len(cell.source.split("\n")):
        return None
    return where


def enclosing_loop(submission: Submission, where: Location) -> tuple[str, Location] | None:
    """The innermost `for` or `while` statement whose body holds this line, as its keyword and
    the place of its first line; None when the line is in no loop (or the cell does not parse)."""
    tree = submission.tree(where.cell)
    if tree is None:
        return None
    found: ast.stmt | None = None
    for node in ast.walk(tree):
        if not isinstance(node, _LOOPS):
            continue
        inside = node.lineno <= where.line <= (node.end_lineno or 0)
        if inside and (found is None or node.lineno >= found.lineno):
            found = node
    if found is None:
        return None
    keyword = "while" if isinstance(found, ast.While) else "for"
    return keyword, Location(where.cell, found.lineno)


def _a_def_line(submission: Submission, where: Location) -> bool:
    """Whether the line is a `def` line (or a decorator's) of a top-level function."""
    tree = submission.tree(where.cell)
    return tree is not None and any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and min([node.lineno, *(d.lineno for d in node.decorator_list)])
        <= where.line
        <= (node.body[0].lineno - 1 if node.body else node.lineno)
        for node in tree.body
    )


def function_at(submission: Submission, where: Location) -> str | None:
    """The name of the top-level function whose body holds this line, if any."""
    tree = submission.tree(where.cell)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.lineno <= where.line <= (node.end_lineno or 0)
        ):
            return node.name
    return None


def stuck_words(submission: Submission, where: Location, ends: bool = False) -> str:
    """Where the code was when its time ran out: the line, and the loop it is in (`ends`:
    a loop known to end elsewhere, which is too slow rather than endless)."""
    loop = enclosing_loop(submission, where)
    text = f"when its time ran out it was at {where.describe()}"
    if loop is None:
        return text
    keyword, start = loop
    advice = "make this loop do less" if ends else "check that this loop ends"
    return f"{text}, inside the `{keyword}` loop at line {start.line}: {advice}"


def explain_timeouts(
    results: tuple[TargetResult, ...], submission: Submission
) -> tuple[TargetResult, ...]:
    """Each timed-out target with where it was stuck said after its summary line, and the
    place highlighted; a target stuck inside another function says to fix that one first."""
    passed = frozenset(r.name for r in results if r.status == "passed")
    return tuple(_explained(r, submission, passed) for r in results)


def _explained(
    result: TargetResult, submission: Submission, passed: frozenset[str] = frozenset()
) -> TargetResult:
    where = checked(submission, result.location) if result.status == "timeout" else None
    if where is None or _a_def_line(submission, where):
        # No code is ever stuck on a `def` line: the place is where the function is defined
        # (one never called before the notebook's time ran out), not where it was.
        return result
    owner = function_at(submission, where)
    # r52: "fix `softmax_cols` first ... never finished" beside softmax_cols's ✓: a callee
    # that passes its own cases ends, and is too slow for what this target asks of it
    slow = owner in passed
    stuck = stuck_words(submission, where, ends=slow)
    if owner is not None and owner != result.name:
        text = (
            f"`{result.name}` calls `{owner}`, which passes its own cases but did not finish "
            f"in the time of this call; {stuck}"
            if slow
            else f"fix `{owner}` first: `{result.name}` calls it, and `{owner}` never finished; "
            f"{stuck}"
        )
        finding = Finding("callee", text, location=where)
    else:
        finding = Finding("case", f"{stuck[0].upper()}{stuck[1:]}", location=where)
    findings = (*result.findings[:1], finding, *result.findings[1:])
    return replace(result, findings=findings, messages=messages_of(findings))


def cell_loop_note(submission: Submission, where: Location | None) -> str:
    """For a cell that ran out of time: the loop its line is in, as words ("" when none)."""
    where = checked(submission, where)
    loop = enclosing_loop(submission, where) if where else None
    if loop is None:
        return ""
    keyword, start = loop
    return f", inside the `{keyword}` loop at line {start.line}"
