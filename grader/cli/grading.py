"""`grader check`, `grader grade` and `grader report`: one notebook, a class, a class's report."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from grader.cli.common import (
    ASSIGNMENT_OPTION,
    CLUSTER_OPTION,
    CONFIG_OPTION,
    COURSE_OPTIONS,
    DATABASE_OPTION,
    SANDBOX_OPTION,
    _course,
    _database_option,
    _errors_to_exit_codes,
    _first_names,
    _output_folder,
    database_option,
    jobs_option,
    main,
)
from grader.course.config import Mode
from grader.errors import GraderError, NothingGraded
from grader.render.escape import one_line, safe_lines
from grader.render.formats import CLASS_FORMATS, REPORT_FORMATS, TABLE_FORMATS
from grader.run import prestart

if TYPE_CHECKING:
    from grader.batch.entries import Entry


def __getattr__(name: str) -> Any:
    """`grade_path`, imported on first use: `grader check` imports the judging side while its
    worker starts (grader/run/prestart.py)."""
    if name == "grade_path":
        from grader.engine import grade_path

        return grade_path
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@main.command()
@click.argument("notebook", type=click.Path(path_type=Path))
@COURSE_OPTIONS
@click.option(
    "--format", "fmt", type=click.Choice(sorted(REPORT_FORMATS)), default="text", show_default=True
)
@SANDBOX_OPTION
@click.option(
    "--student",
    default=None,
    help="Whose notebook it is (roster id): an assignment with per-student inputs "
    "grades each student on their own public cases.",
)
@_errors_to_exit_codes
def check(
    notebook: Path,
    assignment: str | None,
    config_path: Path | None,
    fmt: str,
    sandbox: Mode | None,
    student: str | None,
) -> None:
    """Grade one NOTEBOOK (.ipynb or .py) and say what to fix.

    \b
    Formats: text (terminal), json, junit (JUnit XML), github (workflow annotations, and a
    summary table in $GITHUB_STEP_SUMMARY), gradescope (results.json; written to
    /autograder/results/ when that folder exists), markdown (pull-request comment),
    classroom (the result GitHub Classroom's autograding reporter reads).
    Exit code: 0 all passed, 1 something failed, 2 bad input or config, 3 internal error.
    Example:  grader check self_attention.ipynb --format json
    Per-student inputs:  GRADER_COURSE_SECRET=… grader check nb.ipynb --student s123
    """
    config = _course(config_path, notebook)
    # the worker starts, and runs the notebook, while we import the judging side
    prestart.begin_for(config, notebook, assignment, sandbox, student)
    try:
        report = sys.modules[__name__].grade_path(
            notebook, config, assignment, sandbox=sandbox, student=student
        )
    finally:  # an early run the grade did not take is never taken by a later one
        prestart.drop_early()
    chosen = REPORT_FORMATS[fmt]
    text = chosen.render(report)
    results_dir = Path(os.environ.get("GRADER_GRADESCOPE_ROOT", "/autograder")) / "results"
    if fmt == "gradescope" and chosen.file and results_dir.is_dir():
        from grader.render.whole_file import write_text

        write_text(results_dir / chosen.file, text + "\n")  # never cut off, if we are killed
        click.echo(f"wrote {results_dir / chosen.file}: {report.score:g} / {report.max_score:g}")
    else:
        click.echo(text)
    sys.exit(0 if report.all_passed else 1)


@main.command()
@click.argument("submissions", type=click.Path(path_type=Path))
@ASSIGNMENT_OPTION
@CONFIG_OPTION
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write OUT/grades.csv, OUT/gradebook.sqlite, OUT/report.html and "
    "OUT/feedback/<student>.html.",
)
@jobs_option("Workers [the cores this process may use].")
@click.option("--force", is_flag=True, help="Regrade submissions the gradebook already has.")
@click.option(
    "--allow-ungraded",
    is_flag=True,
    help="Exit 0 even when some submissions could not be graded (the old meaning of 0).",
)
@click.option(
    "--submitted-at",
    "submitted_at",
    type=click.Path(path_type=Path, dir_okay=False),
    help="CSV student,timestamp (ISO 8601 with a zone): when each student handed in.",
)
@SANDBOX_OPTION
@CLUSTER_OPTION
@database_option(
    "Keep the gradebook in PostgreSQL, e.g. postgresql://grader@HOST/course (needs "
    "attention-grader[postgres]), instead of OUT/gradebook.sqlite; needs --out."
)
@_errors_to_exit_codes
def grade(
    submissions: Path,
    assignment: str | None,
    config_path: Path | None,
    out: Path | None,
    jobs: int | None,
    force: bool,
    allow_ungraded: bool,
    submitted_at: Path | None,
    sandbox: Mode | None,
    cluster: str | None,
    database: str | None,
) -> None:
    """Grade a class and print the gradebook.

    \b
    SUBMISSIONS is a folder of <student>.ipynb files or <student>/ folders, or a .zip as
    Canvas, Moodle or Blackboard export it (student names are read from their file names).
    With a roster.csv in the course folder, submissions are matched to its students and
    the outputs cover exactly the roster (see docs/instructor.md).
    With --out, a rerun skips the submissions whose content and config did not change.
    Examples:
      grader grade submissions/ --out results/
      grader grade canvas_export.zip --assignment masked_attention --out results/ --jobs 8
      grader grade submissions/ --out results/ --submitted-at times.csv
      grader grade submissions/ --out results/ --cluster tcp://scheduler:8786
      grader grade submissions/ --out results/ --db postgresql://grader@dbhost/course
    With `due:` and `late:` in the config, each submission's lateness and penalty are
    in every output; the time comes from --submitted-at, the LMS's file names, the last git
    commit, else the file's modification time (said so).
    Exit codes: 0 every submission was graded · 1 some (or all) could not be graded, or matched
    no roster student (they are listed; --allow-ungraded exits 0 for them, unless none could
    be graded) · 2 bad input,
    or --sandbox required where none can be made · 3 a notebook hit a bug of the grader's
    (tracebacks in OUT/grader-faults.log, the rest is graded), a --cluster scheduler
    lost (what was graded is kept), or internal error ·
    130 interrupted (143, 129: stopped by SIGTERM, SIGHUP, as cleanly).
    """
    from grader.batch.database import shown
    from grader.batch.grade import grade_batch
    from grader.batch.lateness import read_submitted_at
    from grader.batch.outcome import (
        also_held,
        class_outcome,
        class_rows,
        class_table,
        exit_status,
        write_outputs,
    )
    from grader.batch.progress import Progress

    config = _course(config_path, submissions)
    given = read_submitted_at(submitted_at) if submitted_at is not None else None
    _database_option(database, out)
    if out is not None:
        _output_folder(out)
    progress: list[Progress] = []
    try:
        with _stop_on_signals():
            batch = grade_batch(
                submissions,
                config,
                out,
                assignment,
                jobs,
                force,
                on_total=lambda total: progress.append(Progress(total)),
                on_entry=lambda entry: progress[0].step(
                    entry.student, entry.report is not None or entry.skipped or entry.absent
                ),
                keep_reports=out is None,  # with --out, whole reports are in the gradebook
                sandbox=sandbox,
                submitted_at=given,
                cluster=cluster,
                database=database,
            )
    except GraderError:  # e.g. a cluster's scheduler lost: the error's one line, not a bar
        if progress:
            progress[0].close()
        raise
    except KeyboardInterrupt as stop:
        if progress:
            progress[0].close()
        kept = (
            f"; what was graded is in {shown(database or out / 'gradebook.sqlite')}, and the "
            "same command "
            "grades the rest"
            if out is not None
            else ""
        )
        signum = stop.signum if isinstance(stop, Stopped) else None
        said = f"stopped by {signal.Signals(signum).name}" if signum else "interrupted"
        click.echo(f"\n{said}{kept}", err=True)
        sys.exit(128 + signum if signum else 130)
    if progress:
        progress[0].close()
    for problem in batch.problems:
        click.echo(f"  {one_line(problem)}", err=True)
    if batch.lost:
        names = _first_names(batch.lost)
        click.echo(
            f"{len(batch.lost)} submission{'s' * (len(batch.lost) > 1)} not graded for a fault "
            "on the grader's side (a worker that died or could not start, perhaps for memory, "
            f"or a sandbox that could not be set up) ({names}); run the same command again "
            "to grade them",
            err=True,
        )
    try:
        outcome = class_outcome(batch, config, assignment, submissions)
    except NothingGraded:  # no assignment, so no table: each problem is said here
        for entry in batch.ungraded:
            click.echo(f"  {one_line(entry.student)}: {one_line(entry.problem)}", err=True)
        for line in batch.unmatched:
            click.echo(f"  {one_line(line)}", err=True)
        raise
    # The points that count (late penalties, overrides), and with --out every student the
    # gradebook holds, as grades.csv has them: not this batch's autograded points alone.
    rows = class_rows(outcome, out, batch, database)
    click.echo(TABLE_FORMATS["text"].render(class_table(rows, outcome.spec)))
    for line in batch.unmatched:
        click.echo(f"  {one_line(line)}", err=True)
    for line in batch.warnings:
        click.echo(f"warning: {one_line(line)}", err=True)
    for student, note in batch.graded_as_class:  # its feedback page and the gradebook say it too
        click.echo(f"note: {one_line(student)}: {one_line(note)}", err=True)
    if batch.file_times:
        click.echo(
            f"note: {len(batch.file_times)} submission time(s) taken from the file's "
            f"modification time, the last resort ({_first_names(batch.file_times)}); give "
            "--submitted-at FILE (student,timestamp) for the real ones",
            err=True,
        )
    others = outcome.others
    if others:
        click.echo(
            f"{len(others)} notebook{'s' * (len(others) > 1)} looked like another assignment "
            f"than {outcome.spec.id} ({_first_names(others)}) and "
            f"{'earns' if len(others) == 1 else 'earn'} nothing for it; pass --assignment to "
            "grade every notebook as one assignment",
            err=True,
        )
    aside = len(batch.unmatched)
    click.echo(
        f"{outcome.graded} graded, {batch.skipped} unchanged (kept from the gradebook), "
        f"{len(batch.ungraded)} could not be graded, {len(batch.problems)} skipped"
        + f", {aside} set aside by the roster (listed above)" * bool(aside)
        + f"; {batch.seconds:.2f} s"
    )
    if out is not None:
        written = write_outputs(outcome, out, batch, database, rows)
        click.echo(f"wrote {', '.join(map(str, written))}, {out / 'feedback'}/")
        if held := also_held(out, outcome.spec.id, database):
            aid, named, db = outcome.spec.id, ", ".join(held), " --db URL" * bool(database)
            click.echo(
                f"note: the gradebook in {out} holds {named} too: grades.csv, report.html and "
                f"the feedback pages written now are {aid}'s; the gradebook keeps both "
                f"(`grader export --format csv --results {out}{db} -a {held[0]} --out "
                f"{held[0]}.csv` still exports {held[0]}); grade each assignment into an "
                "--out of its own to keep each one's files",
                err=True,
            )
    if batch.faults:
        _tell_faults(batch.faults, out)
    sys.exit(exit_status(batch, allow_ungraded))


def _tell_faults(faults: Sequence[Entry], out: Path | None) -> None:
    """A bug of the grader's own stopped some notebooks: say so loudly, with the evidence."""
    from grader.batch.entries import FAULT_LOG

    names = _first_names([e.student for e in faults])
    if out is None:
        for entry in faults:
            fault = safe_lines(entry.fault.rstrip())  # an exception's message may be the student's
            click.echo(f"--- {one_line(entry.student)}\n{fault}", err=True)
    where = "above" if out is None else f"in {out / FAULT_LOG}"
    click.echo(
        f"{len(faults)} submission{'s' * (len(faults) > 1)} hit a fault of the grader itself, "
        f"not of the students' doing ({names}); the tracebacks are {where}: please report "
        "them. The rest of the class is graded; the same command retries these.",
        err=True,
    )


@main.command()
@click.argument("out", type=click.Path(path_type=Path))
@ASSIGNMENT_OPTION
@DATABASE_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(CLASS_FORMATS)),
    default="html",
    show_default=True,
    help="html writes OUT/report.html; csv and json print the aggregates.",
)
@_errors_to_exit_codes
def report(out: Path, assignment: str | None, database: str | None, fmt: str) -> None:
    """Summarise a graded class from OUT/gradebook.sqlite: scores, pass rates, mistakes.

    \b
    Examples:
      grader report results/                 # writes results/report.html
      grader report results/ --format json   # the same numbers, for your own tools
      grader report results/ --db postgresql://grader@dbhost/course
    """
    from grader.batch.classreport import load_summary, write_report

    _database_option(database, out)
    if fmt == "html":  # the page is the file grader grade writes, report.html
        click.echo(f"wrote {write_report(out, assignment, database, held=True)}")
        return
    text = CLASS_FORMATS[fmt].render(load_summary(out, assignment, database, held=True))
    click.echo(text, nl=not text.endswith("\n"))  # CSV ends its own last row


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a service manager, an ssh session that dropped), taken as Ctrl-C
    is: the batch stops the same clean way (a cluster's workers lose this run's plugin,
    the gradebook keeps what was graded), then exits 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__()
        self.signum = signum


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """While grading, SIGTERM and SIGHUP raise Stopped, once: a second one while the batch
    stops is ignored (SIGKILL still ends it). The handlers before are put back after; off
    the main thread (a test's runner), nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        for each in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(each, signal.SIG_IGN)
        raise Stopped(signum)

    before = {each: signal.signal(each, stop) for each in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for each, handler in before.items():
            signal.signal(each, handler)
