"""Grade one submission end to end: load, run it on a sandboxed worker, judge, score."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from grader.course.cases import Case, CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, Mode, TargetSpec
from grader.course.notebook import Submission, reread
from grader.course.per_student import course_secret, for_student
from grader.course.recognise import choose_assignment
from grader.errors import GraderError, UsageError
from grader.judge.evidence import explain
from grader.judge.expected import Expected, build_expected
from grader.judge.imports import unoffered_import_notes
from grader.judge.preflight import preflight
from grader.judge.reference import Reference
from grader.judge.released import released_data
from grader.judge.renamed import name_renamed
from grader.judge.score import (
    Answers,
    describe_error,
    judge_cases,
    location_of,
    not_called_after_timeout,
    scalar_findings,
    scalar_messages,
    summarise,
    target_score,
    target_status,
)
from grader.judge.timeouts import cell_loop_note, explain_timeouts
from grader.report import Finding, Location, Report, TargetResult, cases_line, messages_of
from grader.run import bwrap, prestart
from grader.run.background import in_background
from grader.run.compat import removed_name_notes
from grader.run.sandbox import GRADER_FAULTS, OVER_TIME, ChildRun
from grader.run.workers import Plan, Workers, shared_workers


def grade_path(
    path: Path | str,
    config: Config,
    assignment_id: str | None = None,
    public_only: bool = False,
    sandbox: Mode | None = None,
    student: str | None = None,
) -> Report:
    """Grade one notebook file: the assignment asked for, else the one it is recognised as.

    `public_only` grades on the public cases only (what a student's `check()` sees);
    `sandbox` (default: the config's `sandbox:`) 'required' makes a machine without the
    sandbox a UsageError (exit 2). The assignment's `files:` are in the notebook's folder.
    `student`: whose notebook it is, which an assignment with per-student inputs needs
    (UsageError without it, ConfigError without the course secret).
    """
    path = Path(path)
    submission = reread(path)  # parsed once in grader check (prestart read it already)
    assignment, chosen = choose_assignment(config, submission, assignment_id)
    mode = sandbox or config.sandbox
    if assignment.released is None:  # a student bundle has no course code to check
        workers = shared_workers(require(mode), assignment.files, assignment.preload)
        preflight(config, assignment, workers)
    if assignment.per_student_inputs:
        if not student:
            raise UsageError(
                f"assignment {assignment.id} has per-student inputs: say whose notebook it "
                "is (grader check --student ID)"
            )
        assignment = for_student(assignment, student, course_secret(config))
    if public_only:
        assignment = assignment.public()
    report = grade_submission(submission, assignment, mode)
    return with_choice(report, chosen)


def with_choice(report: Report, chosen: str) -> Report:
    """The report, with a note saying how its assignment was chosen (when it was guessed)."""
    return replace(report, notes=(f"graded as {chosen}", *report.notes)) if chosen else report


def grade_submission(
    submission: Submission, assignment: AssignmentSpec, sandbox: Mode = "auto"
) -> Report:
    """Run a loaded submission on a sandboxed worker, then judge it in this process. A run
    the grader could not make (no worker, no sandbox for it) is a GraderError, not a grade."""
    started = time.monotonic()
    released = assignment.released is not None  # a student bundle: its numbers, no code
    case_set = released_data(assignment)[0] if released else build_cases(assignment)
    prestart.finish()  # a worker started early (grader check) is the shared one
    workers = shared_workers(require(sandbox), assignment.files, assignment.preload)
    plan = case_set.plan(assignment)
    # What is expected is read (or made) while the student's child runs: this thread only
    # waits on the worker's pipe meanwhile. Course code, when it must run, queues for the
    # worker behind the student. A daemon thread: an interrupt (Ctrl-C) or an error here
    # is not held until the student's run ends.
    running = in_background(lambda: _run(submission, assignment, workers, case_set, plan))
    if released:
        expected = released_data(assignment)[1]
    else:
        expected = build_expected(assignment, case_set, workers)
    run = running.result()
    if run.ending in GRADER_FAULTS:  # no grade from a run the grader could not make (exit 3)
        raise GraderError(f"{submission.path}: {run.exit_description}; run it again")
    return finish(submission, assignment, case_set, expected, run, time.monotonic() - started)


def _run(
    submission: Submission,
    assignment: AssignmentSpec,
    workers: Workers,
    case_set: CaseSet,
    plan: Plan,
) -> ChildRun:
    """The student's run: the one `grader check` started early when it is this very run
    (run/prestart.py), else made now."""
    early = prestart.early_run(submission, assignment, workers, case_set)
    if early is not None:
        return early
    return workers.run(submission.cells, plan, assignment.time_limit, assignment.files)


def require(mode: Mode) -> bwrap.Support:
    """The sandbox support for `mode`; 'required' without one is a UsageError (exit 2)."""
    support = bwrap.choose(mode)
    if mode == "required" and not support.sandboxed:
        raise UsageError(
            "the sandbox is required (--sandbox required, or sandbox: required in the course "
            f"config), but none can be made here: {support.reason}"
        )
    return support


def finish(
    submission: Submission,
    assignment: AssignmentSpec,
    case_set: CaseSet,
    expected: Expected,
    run: ChildRun,
    seconds: float,
) -> Report:
    """Everything after the child: judge, diagnose and assemble the report (trusted side)."""
    started = time.monotonic()
    answers = Answers.from_run(run)
    definitions = submission.definitions()
    targets = tuple(
        judge_target(
            t, case_set.cases[t.name], expected.references[t.name], answers, run, definitions
        )
        for t in assignment.targets
    )
    targets = explain(targets, assignment, case_set, expected, answers, submission)
    targets = explain_timeouts(targets, submission)
    targets = name_renamed(targets, submission)
    targets = tuple(replace(t, location=submission.locate(t.location)) for t in targets)
    errors, did_not_run = _run_errors(run, answers, submission)
    imports = () if run.isolated else unoffered_import_notes(submission, assignment.preload)
    # What judging decoded and parsed is not kept on the inputs: a caller holding many
    # (a benchmark, a service) would otherwise make every full collection walk them all.
    run.forget_frames()
    submission.forget_trees()
    return Report(
        assignment=assignment.id,
        submission=str(submission.path),
        targets=targets,
        errors=tuple(errors),
        did_not_run=did_not_run,
        notes=(
            *((line,) if (line := cases_line(targets)) else ()),
            *((run.note,) if run.note else ()),
            *submission.notes,
            *removed_name_notes(submission),
            *imports,
            *scalar_messages(answers.scalar_fixes),
        ),
        seconds=seconds + time.monotonic() - started,
    )


STUB_ERROR = "NotImplementedError"
TIME_LIMIT_ERROR = "TimeLimit"  # the error type the child reports for a cell past its limit


def _run_errors(
    run: ChildRun, answers: Answers, submission: Submission | None = None
) -> tuple[list[str], str | None]:
    """The notebook's errors, and the first that says it did not run to its end (a cell past
    the time limit, junk on the wire, a process that died or ran out of time)."""
    stubs = [c for c, e in sorted(answers.cell_errors.items()) if e.get("type") == STUB_ERROR]
    errors: list[str] = []
    stopped: list[str] = []
    for cell, error in sorted(answers.cell_errors.items()):
        if cell not in stubs:
            errors.append(f"cell {cell}: {describe_error(error)}")
            if error.get("type") == TIME_LIMIT_ERROR:
                if submission is not None:
                    errors[-1] += cell_loop_note(submission, location_of(error))
                stopped.append(errors[-1])
    if stubs:
        cells = ", ".join(map(str, stubs))
        errors.insert(0, f"cell{'s' * (len(stubs) > 1)} {cells} stopped at an unfinished stub")
    if run.wire_error:
        errors.append(f"the notebook's process sent malformed data ({run.wire_error})")
        stopped.append(errors[-1])
    if run.exit_description:
        errors.append(run.exit_description)
        if run.ending not in GRADER_FAULTS:
            stopped.append(errors[-1])
    return errors, (stopped[0] if stopped else None)


def judge_target(
    spec: TargetSpec,
    cases: tuple[Case, ...],
    reference: Reference,
    answers: Answers,
    run: ChildRun,
    definitions: dict[str, Location],
) -> TargetResult:
    """Score one target from the child's answers; its findings say why (the diagnosis adds
    to them later, in `explain`)."""
    defined_at = definitions.get(spec.name)
    if spec.name in answers.missing:
        missing = Finding(
            "missing",
            _missing_message(spec.name, answers, defined_at, spec.variable),
            location=defined_at,
        )
        return TargetResult(
            spec.name,
            "missing",
            0.0,
            spec.points,
            (missing.message,),
            location=defined_at,
            cases_total=len(cases),
            findings=(missing,),
            public_cases=spec.public_cases,
            hidden_cases=spec.hidden_cases,
            all_or_nothing=not spec.partial_credit,
        )
    unanswered = run.wire_error or run.exit_description or "no answer from the notebook"
    over_time = not run.wire_error and run.ending in OVER_TIME
    outcomes = judge_cases(spec, cases, reference, answers.results, unanswered, over_time)
    outcomes = not_called_after_timeout(spec, cases, answers.results, outcomes)
    status = target_status(outcomes)
    mistakes: tuple[str, ...] = ()
    stub_owner = _owner(outcomes[0].location, definitions)
    findings: list[Finding]
    if all(o.kind == "not_implemented" for o in outcomes) and stub_owner not in (None, spec.name):
        text = f"calls `{stub_owner}`, which is not implemented yet: write it first"
        findings = [Finding("callee", text, location=outcomes[0].location)]
    elif all(o.kind == "not_implemented" for o in outcomes):
        where = outcomes[0].location or defined_at
        at = f" in {where.describe()}" if where else ""
        text = f"not implemented yet: the stub{at} still raises NotImplementedError"
        findings = [Finding("not_implemented", text, "not_implemented", where)]
        mistakes = ("not_implemented",)
    else:
        findings = summarise(cases, outcomes)
    findings += scalar_findings(answers.target_fixes(spec.name))
    if any(o.mutated and o.kind == "failed" for o in outcomes):
        mistakes = ("mutates_input",)
    error_at = next((o.location for o in outcomes if o.location), None)
    return TargetResult(
        spec.name,
        status,
        target_score(spec, outcomes),
        spec.points,
        messages_of(findings),
        mistakes,
        error_at or defined_at,
        sum(o.kind == "passed" for o in outcomes),
        len(cases),
        tuple(o.kind for o in outcomes),
        tuple(findings),
        spec.public_cases,
        spec.hidden_cases,
        not spec.partial_credit,
    )


def _owner(where: Location | None, definitions: dict[str, Location]) -> str | None:
    """The function whose definition starts the cell where an error happened."""
    if where is None:
        return None
    owners = [
        n for n, loc in definitions.items() if loc.cell == where.cell and loc.line <= where.line
    ]
    return max(owners, key=lambda n: definitions[n].line) if owners else None


def _missing_message(
    name: str, answers: Answers, defined_at: Location | None, variable: bool = False
) -> str:
    found = answers.missing[name]
    if variable:
        if defined_at and defined_at.cell in answers.cell_errors:
            error = describe_error(answers.cell_errors[defined_at.cell])
            return f"`{name}` is set in cell {defined_at.cell}, but that cell failed: {error}"
        return f"`{name}` is not defined after the notebook ran: no cell that ran sets it"
    if found != "absent":
        return f"`{name}` is a {found}, not a function"
    if defined_at and defined_at.cell in answers.cell_errors:
        error = describe_error(answers.cell_errors[defined_at.cell])
        return f"`{name}` is defined in cell {defined_at.cell}, but that cell failed: {error}"
    return f"`{name}` is not defined: no cell of the notebook defines a function of that name"
