"""Gather the evidence on each failing target and attach its diagnosis to the verdict."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from grader.course.cases import PROBE_OFFSET, Case, CaseSet, probe_base
from grader.course.config import AssignmentSpec
from grader.course.notebook import CodeCell, Submission
from grader.judge.diagnose import NO_ANSWER, Answer, Evidence, diagnose
from grader.judge.expected import Expected
from grader.judge.flows import rebound
from grader.judge.loop_bounds import early_stops
from grader.judge.own_sizes import unmasked
from grader.judge.score import Answers, describe_error, location_of
from grader.judge.shown import Shown
from grader.judge.static import (
    FunctionSource,
    called_names,
    find_function,
    fixed_indexes,
    function_hints,
    integer_globals,
    notebook_globals,
)
from grader.judge.stubs import (
    binds,
    crashed_cells,
    exercise_stubs,
    is_exercise_stub,
    read_where_set,
    unset_by_crash,
)
from grader.report import Finding, Location, TargetResult, messages_of
from grader.run.wire import clean_text

T = TypeVar("T")


def _digest(answers: Answers, target: str, index: int) -> str | None:
    found = answers.results.get((target, index))
    if found is None or found.status != "ok":
        return None
    return found.digest


def _answer(answers: Answers, target: str, index: int) -> Answer:
    found = answers.results.get((target, index))
    if found is None or found.status != "ok":
        return NO_ANSWER
    return found.values.get("value")


def _raised(answers: Answers, target: str, cases: Sequence[Case]) -> list[dict[str, Any]]:
    """The exceptions the target's calls raised, as the child reported them, case by case."""
    found = (answers.results.get((target, c.index)) for c in cases)
    return [
        r.error
        for r in found
        if r is not None and r.status == "error" and isinstance(r.error, dict)
    ]


def _in_target_code(
    submission: Submission,
    name: str,
    function: FunctionSource | None,
    variable: bool,
    find: Callable[[ast.AST, CodeCell], Sequence[T]],
) -> tuple[T, ...]:
    """What `find` finds in the target's code: the function's, or for a variable, the cells
    that set or fill it."""
    if function is not None:
        return tuple(find(function.node, function.cell))
    if not variable:
        return ()
    found: list[T] = []
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        if tree is not None and binds(tree, name):
            found += find(tree, cell)
    return tuple(found)


def _lines(_tree: ast.AST, cell: CodeCell) -> list[tuple[Location, str]]:
    """Each line of a cell, with its place."""
    return [(Location(cell.index, n), t) for n, t in enumerate(cell.original.split("\n"), 1)]


def _upstream(
    submission: Submission,
    name: str,
    function: FunctionSource | None,
    failing: set[str],
    variable: bool,
) -> list[str]:
    """The failing targets this one is computed from: the functions it calls, or, for a
    variable, the failing targets its cells read (`all_x_prime` from `all_keys`). Never the
    target itself: a recursion is its own fault, not a callee's."""
    others = failing - {name}
    if variable:
        return sorted(read_where_set(submission, name) & others)
    return sorted(called_names(function) & others) if function else []


def _crashes(submission: Submission, name: str, answers: Answers) -> tuple[str, ...]:
    """For a variable: each cell that sets it and crashed, told as the crash it was."""
    return tuple(
        f"`{name}` is set in cell {cell}, which stopped with an error, so its value is not "
        f"what that cell would compute: {describe_error(answers.cell_errors[cell])}"
        for cell in crashed_cells(submission, name, answers.cell_errors)
    )


_UNDEFINED = re.compile(r"^name '(\w+)' is not defined")


def _unset(
    submission: Submission,
    answers: Answers,
    raised: list[dict[str, Any]],
    callees: Sequence[str],
) -> tuple[str, ...]:
    """For a function that raised NameError: the crashed cell that would have set the name
    further down (`np`, when `import matplotlib` failed on the line before `import numpy`).
    A failing target it calls is left out: "fix it first" sends the student to that target,
    whose own entry tells its cell's crash."""
    names = {
        m[1]
        for e in raised
        if e.get("type") == "NameError" and (m := _UNDEFINED.match(str(e.get("message", ""))))
    } - set(callees)
    return tuple(
        f"`{name}` is not defined because cell {cell} stopped before line {line}, which sets "
        f"it: {describe_error(answers.cell_errors[cell], hints=False)}"
        for name in sorted(names)
        for cell, line in unset_by_crash(submission, name, answers.cell_errors)
    )


def _with_rebinding(result: TargetResult, submission: Submission) -> TargetResult:
    """A function target that is some other value after the notebook ran (`softmax` is a
    ndarray): where top-level code assigned its name after the `def`, if it did."""
    if result.status != "missing" or not any("not a function" in m for m in result.messages):
        return result
    found = rebound(submission, result.name)
    if found is None:
        return result
    text, where = found
    said = (
        f"{where.describe()}: `{clean_text(text, 80)}` assigns `{result.name}` after its "
        f"`def`, so from there on `{result.name}` is that value, not your function: give the "
        "value another name"
    )
    findings = (*result.findings, Finding("static", said, location=where))
    return replace(result, findings=findings, messages=messages_of(findings), location=where)


def _to_explain(result: TargetResult) -> bool:
    """Whether a target's verdict gets a diagnosis: it failed or erred, and not as a stub."""
    return result.status in ("failed", "error") and "not_implemented" not in result.mistakes


def explain(
    results: tuple[TargetResult, ...],
    assignment: AssignmentSpec,
    case_set: CaseSet,
    expected: Expected,
    answers: Answers,
    submission: Submission,
) -> tuple[TargetResult, ...]:
    """Each failing target with its diagnosis added: mistakes named and findings said after
    its summary line (a diagnosis never changes a status or a score)."""
    results = tuple(_with_rebinding(r, submission) for r in results)
    if not any(_to_explain(r) for r in results):
        return results  # nothing failed: nothing of the notebook's code need be read
    failing = {r.name for r in results if r.status != "passed"}
    global_names = notebook_globals(submission)
    stubs = exercise_stubs(assignment.exercise)
    graded = frozenset(spec.name for spec in assignment.targets)
    seen = Shown(submission, assignment.exercise, assignment.solution)  # read when needed
    explained = []
    for result in results:
        if not _to_explain(result):
            explained.append(result)
            continue
        name = result.name
        function = find_function(submission, name)
        cases = case_set.cases[name]
        probes = {
            p.index - PROBE_OFFSET: _digest(answers, name, p.index) for p in case_set.probes[name]
        }
        spec = assignment.target(name)
        raised = _raised(answers, name, cases)
        callees = _upstream(submission, name, function, failing, spec.variable)
        evidence = Evidence(
            spec=spec,
            cases=cases,
            reference=expected.references[name],
            answers=tuple(_answer(answers, name, c.index) for c in cases),
            passed=tuple(
                i < len(result.case_outcomes) and result.case_outcomes[i] == "passed"
                for i in range(len(cases))
            ),
            fingerprints=expected.fingerprints[name],
            function=function,
            hints=function_hints(function, global_names) if function else [],
            failing_callees=callees,
            known_mistakes=result.mistakes,
            probes=probes,
            base_digest=_digest(answers, name, probe_base(cases).index),
            reference_probes=dict(enumerate(expected.probe_references[name].outputs)),
            is_stub=is_exercise_stub(function, stubs),
            crashes=_crashes(submission, name, answers)
            if spec.variable
            else _unset(submission, answers, raised, callees),
            errors=tuple(clean_text(e.get("message", ""), 300) for e in raised),
            error_places=tuple(location_of(e) for e in raised),
            fixed=_in_target_code(submission, name, function, spec.variable, fixed_indexes),
            early_stops=_in_target_code(submission, name, function, spec.variable, early_stops),
            cell_lines=_in_target_code(submission, name, None, spec.variable, _lines)
            if function is None
            else (),
            shown=seen,
            functions=partial(_helper, submission, graded),
        )
        found = diagnose(evidence)
        # The notebook's own sizes matter only to a diagnosis that names a global.
        own_sizes = integer_globals(submission) if "uses_global" in found.mistakes else {}
        diagnosis = unmasked(evidence, found, own_sizes)
        summary, details = result.findings[:1], result.findings[1:]
        findings = (*summary, *diagnosis.findings, *details)
        explained.append(
            replace(
                result,
                mistakes=tuple(dict.fromkeys((*diagnosis.mistakes, *result.mistakes))),
                messages=messages_of(findings),
                findings=findings,
                location=diagnosis.location or result.location,
            )
        )
    return tuple(explained)


def _helper(submission: Submission, graded: frozenset[str], name: str) -> FunctionSource | None:
    """The student's function `name` when it is no graded target (a helper of theirs)."""
    return None if name in graded else find_function(submission, name)
