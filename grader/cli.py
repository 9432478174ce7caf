"""The `grader` command. The only module that knows about click, exit codes and `Error:` lines.

Exit codes: 0 all passed · 1 some checks failed · 2 usage, config or unreadable submission ·
3 internal error.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from grader.course.config import MODES, Config, Mode, load_course
from grader.course.locate import course_file
from grader.errors import GraderError, UsageError
from grader.render.escape import one_line, safe_lines
from grader.render.formats import CLASS_FORMATS, GRADES_FORMATS, REPORT_FORMATS, TABLE_FORMATS
from grader.render.table import Table
from grader.run import prestart

if TYPE_CHECKING:
    from grader.batch.entries import Entry

F = TypeVar("F", bound=Callable[..., Any])

# How a course is named, in the grader's notes and errors.
COURSE_HINT = "--course DIR, --config FILE or $GRADER_COURSE"


def __getattr__(name: str) -> Any:
    """`grade_path`, imported on first use: `grader check` imports the judging side while its
    worker starts (grader/run/prestart.py)."""
    if name == "grade_path":
        from grader.engine import grade_path

        return grade_path
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def CONFIG_OPTION(command: F) -> F:  # upper case as the other options: used the same way
    """--config FILE and --course DIR (its config.yaml), passed on as `config_path`."""

    @wraps(command)
    def merged(*args: Any, course: Path | None, config_path: Path | None, **kwargs: Any) -> Any:
        if course is not None and config_path is not None:
            raise click.UsageError("give --course or --config, not both")
        named = course_file(course) if course is not None else config_path
        return command(*args, config_path=named, **kwargs)

    config = click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path),
        default=None,
        help="config.yaml to use (default: $GRADER_COURSE's or $GRADER_CONFIG, else the one "
        "found in the working folder or above it, unless the graded notebooks lie inside its "
        "folder).",
    )
    folder = click.option(
        "--course",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Course folder: grade against its config.yaml, e.g. --course . in your course.",
    )
    return folder(config(merged))  # type: ignore[return-value]


def _course(config_path: Path | None, graded: Path | None = None) -> Config:
    """The named course, else the one found from the working folder, refused when it could
    be the graded notebooks' own; a config.yaml left out gets a note on stderr."""
    config, notes = load_course(config_path, graded, COURSE_HINT)
    for note in notes:
        click.echo(f"note: {one_line(note)}", err=True)
    return config


SANDBOX_OPTION = click.option(
    "--sandbox",
    type=click.Choice(MODES),
    default=None,
    help="auto: bubblewrap where it can be made, else process limits and a note saying so; "
    "required: no sandbox is an error (exit 2); none: never try. "
    "[default: the course config's `sandbox:`, else auto]",
)
ASSIGNMENT_OPTION = click.option(
    "--assignment", "-a", default=None, help="Assignment id, e.g. self_attention."
)


def _stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Options that go together, as one decorator (listed in `--help` in this order)."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


# --assignment ID within the course named by --course/--config.
COURSE_OPTIONS = _stacked(ASSIGNMENT_OPTION, CONFIG_OPTION)


def _errors_to_exit_codes(command: F) -> F:
    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraderError as exc:
            click.echo(f"Error: {safe_lines(str(exc))}", err=True)  # may name a student's file
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            message = safe_lines(f"{type(exc).__name__}: {exc}")
            click.echo(f"Error: internal error: {message}", err=True)
            click.echo(safe_lines(traceback.format_exc()), err=True)
            sys.exit(3)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="attention-grader")
def main() -> None:
    """Grade self-attention notebooks: fast, isolated, and specific about what went wrong.

    \b
    Examples:
      grader check my_notebook.ipynb
      grader check my_notebook.ipynb --format json
      grader grade submissions/ --out results/
      grader grade submissions/ --course ~/my_course --out results/
      grader assign --course . --assignment self_attention

    The course is the folder named by --course DIR (or --config FILE, $GRADER_COURSE,
    $GRADER_CONFIG), else the one found as git finds .git: the working folder or the nearest
    folder above it holding a config.yaml. A course found that way never grades notebooks
    inside its own folder (a student's clone has its own config.yaml): name it there, e.g.
    --course . ; a config beside the graded notebook is always refused.
    """


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
    prestart.begin_for(config, notebook, assignment, sandbox)  # the worker starts while we import
    report = sys.modules[__name__].grade_path(
        notebook, config, assignment, sandbox=sandbox, student=student
    )
    chosen = REPORT_FORMATS[fmt]
    text = chosen.render(report)
    results_dir = Path(os.environ.get("GRADER_GRADESCOPE_ROOT", "/autograder")) / "results"
    if fmt == "gradescope" and chosen.file and results_dir.is_dir():
        (results_dir / chosen.file).write_text(text + "\n", encoding="utf-8")
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
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Workers [the cores this process may use].",
)
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
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Run the notebooks on a Dask cluster's workers, e.g. tcp://HOST:8786 (needs "
    "attention-grader[cluster]); --jobs is then ignored.",
)
@click.option(
    "--db",
    "database",
    metavar="URL",
    default=None,
    help="Keep the gradebook in PostgreSQL, e.g. postgresql://grader@HOST/course (needs "
    "attention-grader[postgres]), instead of OUT/gradebook.sqlite; needs --out.",
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
    no roster student (they are listed; --allow-ungraded exits 0 for them) · 2 bad input,
    or --sandbox required where none can be made · 3 a notebook hit a bug of the grader's
    (tracebacks in OUT/grader-faults.log, the rest is graded), a --cluster scheduler
    lost (what was graded is kept), or internal error ·
    130 interrupted.
    """
    from grader.batch.database import shown
    from grader.batch.grade import grade_batch
    from grader.batch.lateness import read_submitted_at
    from grader.batch.outcome import class_outcome, exit_status, write_outputs
    from grader.batch.progress import Progress

    config = _course(config_path, submissions)
    given = read_submitted_at(submitted_at) if submitted_at is not None else None
    _database_option(database, out)
    if out is not None:
        _output_folder(out)
    progress: list[Progress] = []
    try:
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
    except KeyboardInterrupt:
        if progress:
            progress[0].close()
        kept = (
            f"; what was graded is in {shown(database or out / 'gradebook.sqlite')}, and the "
            "same command "
            "grades the rest"
            if out is not None
            else ""
        )
        click.echo(f"\ninterrupted{kept}", err=True)
        sys.exit(130)
    if progress:
        progress[0].close()
    for problem in batch.problems:
        click.echo(f"  {one_line(problem)}", err=True)
    if batch.lost:
        names = _first_names(batch.lost)
        click.echo(
            f"{len(batch.lost)} submissions were not graded: a worker process of the grader died "
            f"(killed by the system, perhaps for memory?) ({names}); run the same command "
            "again to grade them",
            err=True,
        )
    outcome = class_outcome(batch, config, assignment, submissions)
    rows = [(e.student, e.report, e.problem) for e in outcome.entries]
    click.echo(TABLE_FORMATS["text"].render(Table(rows, [t.name for t in outcome.spec.targets])))
    for line in batch.unmatched:
        click.echo(f"  {one_line(line)}", err=True)
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
    click.echo(
        f"{outcome.graded} graded, {batch.skipped} unchanged (kept from the gradebook), "
        f"{len(batch.ungraded)} could not be graded, {len(batch.problems)} skipped; "
        f"{batch.seconds:.2f} s"
    )
    if out is not None:
        written = write_outputs(outcome, out, batch, database)
        click.echo(f"wrote {', '.join(map(str, written))}, {out / 'feedback'}/")
    if batch.faults:
        _tell_faults(batch.faults, out)
    sys.exit(exit_status(batch, allow_ungraded))


def _first_names(students: Sequence[str], shown: int = 10) -> str:
    """Up to `shown` names, on one printable line (they come from file names)."""
    more = " …" if len(students) > shown else ""
    return one_line(", ".join(students[:shown])) + more


def _database_option(database: str | None, out: Path | None) -> None:
    """--db: a PostgreSQL URL, and only with --out (the feedback pages go there)."""
    from grader.batch.database import is_url

    if database is None:
        return
    if not is_url(database):
        raise UsageError(f"--db {database}: not a PostgreSQL URL (postgresql://USER@HOST/DB)")
    if out is None:
        raise UsageError("--db needs --out (the feedback pages and report.html go there)")


def _output_folder(out: Path) -> None:
    """Create OUT, or say in one line why it cannot be written to (before grading anything)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: this user may not write in it")


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


# --db URL for the commands that read a graded class's gradebook.
DATABASE_OPTION = click.option(
    "--db",
    "database",
    metavar="URL",
    default=None,
    help="The gradebook is in this PostgreSQL database (the class was graded with `grader "
    "grade --db URL`), not in OUT/gradebook.sqlite; the files are still written in OUT.",
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
        click.echo(f"wrote {write_report(out, assignment, database)}")
        return
    text = CLASS_FORMATS[fmt].render(load_summary(out, assignment, database))
    click.echo(text, nl=not text.endswith("\n"))  # CSV ends its own last row


@main.command("export-gradescope")
@click.option("--assignment", "-a", required=True, help="Assignment id, e.g. self_attention.")
@CONFIG_OPTION
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("autograder.zip"), show_default=True
)
@_errors_to_exit_codes
def export_gradescope_command(assignment: str, config_path: Path | None, out: Path) -> None:
    """Build a Gradescope autograder bundle (setup.sh, run_autograder, the grader's source).

    \b
    Upload the zip as a "Zip file upload" autograder; students submit their .ipynb.
    Example:  grader export-gradescope --assignment masked_attention --out masked.zip
    """
    from grader.author.export import export_gradescope

    click.echo(f"wrote {export_gradescope(_course(config_path), assignment, out)}")


@main.command("template")
@click.argument("name", type=click.Choice(["github", "gitlab"]))
@_errors_to_exit_codes
def template_command(name: str) -> None:
    """Print a CI configuration that grades a student's notebook on every push.

    \b
    Examples:
      grader template github > .github/workflows/grade.yml
      grader template gitlab >> .gitlab-ci.yml
    """
    from grader.author.export import template

    click.echo(template(name), nl=False)


@main.command()
@COURSE_OPTIONS
@_errors_to_exit_codes
def selftest(assignment: str | None, config_path: Path | None) -> None:
    """Prove the checks: the solution passes, every catalogued mistake is caught and named.

    \b
    Exit code: 0 all good, 1 a variant slips through or is misdiagnosed, 2 bad config.
    Example:  grader selftest --assignment self_attention
    """
    from grader.author.selftest import render_selftest, run_selftest

    config = _course(config_path)
    ids = [assignment] if assignment else sorted(config.assignments)
    results = [run_selftest(spec) for spec in map(config.assignment, ids)]
    for result in results:
        click.echo(render_selftest(result))
    sys.exit(0 if all(r.ok for r in results) else 1)


@main.command()
@COURSE_OPTIONS
@click.option(
    "--out", type=click.Path(path_type=Path), default=None, help="File or folder to write to."
)
@_errors_to_exit_codes
def assign(assignment: str | None, config_path: Path | None, out: Path | None) -> None:
    """Write the student notebook(s) from the solution notebook(s).

    \b
    Without --assignment, every assignment in the config is written to its `exercise` path.
    Example:  grader assign --assignment self_attention --out /tmp/student.ipynb
    """
    from grader.author.assign import write_exercise

    config = _course(config_path)
    if assignment:
        specs = [config.assignment(assignment)]
    else:  # assignments without an `exercise` (graded as students hand them in) are skipped
        specs = [a for _, a in sorted(config.assignments.items()) if a.exercise is not None]
    for spec in specs:
        click.echo(f"wrote {write_exercise(spec, out)}")


RESULTS_OPTION = click.option(
    "--results",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The folder `grader grade --out` wrote (its gradebook.sqlite).",
)
AUTHOR_OPTION = click.option(
    "--author", default=None, help="Who makes the change [default: the user running this]."
)
# A graded class's gradebook (--results) and what to change in it.
GRADEBOOK_OPTIONS = _stacked(RESULTS_OPTION, DATABASE_OPTION, ASSIGNMENT_OPTION, CONFIG_OPTION)
CHANGE_OPTIONS = _stacked(
    RESULTS_OPTION, DATABASE_OPTION, ASSIGNMENT_OPTION, AUTHOR_OPTION, CONFIG_OPTION
)


@main.command()
@click.argument("student", required=False)
@click.argument("target", required=False, default="")
@click.option("--points", type=float, default=None, help="The points to give.")
@click.option("--comment", default="", help="Why (shown to the student and in the report).")
@click.option("--clear", is_flag=True, help="Remove the override: the autograded points count.")
@click.option(
    "--from-csv",
    "from_csv",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Many overrides from a CSV: student,target,points,comment (empty target: the total; "
    "empty points: clear).",
)
@CHANGE_OPTIONS
@_errors_to_exit_codes
def override(
    student: str | None,
    target: str,
    points: float | None,
    comment: str,
    clear: bool,
    from_csv: Path | None,
    out: Path,
    database: str | None,
    assignment: str | None,
    author: str | None,
    config_path: Path | None,
) -> None:
    """Set a student's points by hand, for one function (TARGET) or the whole assignment.

    \b
    Kept in OUT/gradebook.sqlite with time and author, kept across regrades, and shown
    beside the autograded points in grades.csv, the feedback page and report.html (all
    written again now).
    Examples:
      grader override s042 softmax --points 3 --comment "regrade: right idea" --results results/
      grader override s042 --points 9 --comment "late, excused" --results results/
      grader override s042 softmax --clear --results results/
      grader override --from-csv regrades.csv --results results/
      grader override s042 --points 9 --results results/ --db postgresql://grader@dbhost/course
    Exit codes: 0 done · 2 unknown student, function or assignment, a bad CSV line.
    """
    from grader.batch.adjust import Change, apply, read_changes
    from grader.batch.records import author as current_author

    if from_csv is not None:
        if student or points is not None or clear:
            raise UsageError("--from-csv takes no STUDENT, --points or --clear")
        changes = read_changes(from_csv)
    elif student is None:
        raise UsageError("name a STUDENT (or give --from-csv FILE)")
    elif clear == (points is not None):
        raise UsageError("give --points P, or --clear")
    else:
        changes = [Change(student, target, None if clear else points, comment)]
    _database_option(database, out)
    who = author or current_author()
    written = apply(out, _course(config_path), changes, who, assignment, database)
    click.echo(f"{len(changes)} override{'s' * (len(changes) != 1)} recorded")
    click.echo(f"wrote {', '.join(map(str, written))}")


@main.command("comment")
@click.argument("student")
@click.argument("text")
@CHANGE_OPTIONS
@_errors_to_exit_codes
def comment_command(
    student: str,
    text: str,
    out: Path,
    database: str | None,
    assignment: str | None,
    author: str | None,
    config_path: Path | None,
) -> None:
    """Leave a remark for a student: on their feedback page, in grades.csv and the report.

    \b
    Examples:
      grader comment s042 "see me about question 3" --results results/
      grader comment s042 "see me" --results results/ --db postgresql://grader@dbhost/course
    Exit codes: 0 done · 2 unknown student or assignment.
    """
    from grader.batch.adjust import comment
    from grader.batch.records import author as current_author

    config = _course(config_path)
    _database_option(database, out)
    who = author or current_author()
    written = comment(out, config, student, text, who, assignment, database)
    click.echo(f"wrote {', '.join(map(str, written))}")


@main.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(GRADES_FORMATS)),
    required=True,
    help="The LMS whose grade import reads the file (csv: grades.csv's columns).",
)
@click.option(
    "--out",
    "dest",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The file to write.",
)
@GRADEBOOK_OPTIONS
@_errors_to_exit_codes
def export_command(
    fmt: str,
    dest: Path,
    out: Path,
    database: str | None,
    assignment: str | None,
    config_path: Path | None,
) -> None:
    """Write the gradebook as a file an LMS imports as it is: one row per student (per
    roster student), totals with overrides applied, no cell a spreadsheet would run.

    \b
    Examples:
      grader export --format canvas --results results/ --out canvas-import.csv
      grader export --format moodle --results results/ --out moodle.csv
      grader export --format blackboard --results results/ --out blackboard.csv
      grader export --format canvas --results results/ --out canvas.csv --db postgresql://…
    Columns and how each LMS reads them: docs/instructor.md.
    Exit codes: 0 written · 2 no gradebook in OUT, unknown assignment.
    """
    from grader.batch.lms import export

    _database_option(database, out)
    config = _course(config_path)
    click.echo(f"wrote {export(out, config, fmt, dest, assignment, database)}")


@main.group("serve", invoke_without_command=True)
@CONFIG_OPTION
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results/serve"),
    show_default=True,
    help="The service's data: serve.sqlite, uploads/, gradebook.sqlite, grader-faults.log.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Workers [cores].")
@click.option(
    "--sandbox",
    type=click.Choice(MODES),
    default="required",
    show_default=True,
    help="required: refuse to start without the sandbox (exit 2); auto: relax to process "
    "limits where none can be made.",
)
@click.option(
    "--max-kb",
    type=click.IntRange(min=1),
    default=None,
    help="Largest upload in KB [config serve.max_kb, else 2048].",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=None,
    help="Uploads per student [config serve.max_attempts, else 100].",
)
@click.option(
    "--min-interval",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds between two uploads of one student [config serve.min_interval, else 10].",
)
@click.option("--secure-cookies", is_flag=True, help="Cookies only over HTTPS (behind TLS).")
@click.option(
    "--db",
    "database",
    metavar="URL",
    default=None,
    help="Keep the service's tables and the gradebook in PostgreSQL, e.g. "
    "postgresql://grader@HOST/course (needs attention-grader[postgres]); several replicas "
    "may share it.",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Run the notebooks on a Dask cluster's workers, e.g. tcp://HOST:8786 (needs "
    "attention-grader[cluster]); --jobs is then ignored.",
)
@click.pass_context
@_errors_to_exit_codes
def serve_command(
    ctx: click.Context,
    config_path: Path | None,
    out: Path,
    host: str,
    port: int,
    jobs: int | None,
    sandbox: Mode,
    max_kb: int | None,
    max_attempts: int | None,
    min_interval: float | None,
    secure_cookies: bool,
    database: str | None,
    cluster: str | None,
) -> None:
    """Serve the course: students upload notebooks in a browser and read their feedback.

    \b
    Examples:
      grader serve tokens --roster roster.csv --instructor ada > tokens.csv
      grader serve --course . --port 8000
      grader serve --course . --host 0.0.0.0 --secure-cookies   # behind a TLS proxy
      grader serve --course . --db postgresql://grader@dbhost/course --cluster tcp://s:8786
    Limits come from the config's `serve:` section; the options override them.
    Every accepted upload is on disk before the student's answer; a restart grades what a
    stopped server left. Exit codes: 2 bad options, or no sandbox with --sandbox required.
    """
    if ctx.invoked_subcommand is not None:
        return
    from grader.batch.grade import available_cores
    from grader.course.per_student import course_secret, needs_secret
    from grader.engine import require
    from grader.judge.preflight import preflight_all
    from grader.run.workers import shared_workers
    from grader.serve.checks import Limits
    from grader.serve.server import listen, serve

    config = _course(config_path)
    # The cheap checks first (options, secret, port), then the course's own check: a typo in
    # --db or a port in use is said at once, not after the course has been run.
    specs = config.assignments.values()
    if needs_secret(config, list(specs)):
        course_secret(config)  # per-student inputs without a secret: exit 2 before serving
    limits = Limits.from_settings(config.serve, max_kb, max_attempts, min_interval)
    workers = jobs or max(1, available_cores() - 1)
    _database_option(database, out)
    listening = listen(host, port)
    support = require(sandbox)
    # A broken course: one line and exit 2 at start-up, not a fault per upload.
    preflight_all(config, specs, lambda a: shared_workers(support, a.files, a.preload))
    serve(
        config,
        out,
        host,
        port,
        workers,
        support,
        limits,
        secure_cookies,
        database=database,
        cluster=cluster,
        mode=sandbox,
        listening=listening,
    )


@serve_command.command("tokens")
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="CSV with the columns id and name, a row per student.",
)
@click.option("--instructor", "instructors", multiple=True, help="An instructor's id (repeat).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results/serve"),
    show_default=True,
    help="The service's data folder.",
)
@click.option(
    "--base-url",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="Where students reach the service, for their personal links.",
)
@click.option(
    "--export",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the CSV to this file instead of printing it.",
)
@click.option(
    "--db",
    "database",
    metavar="URL",
    default=None,
    help="The service's PostgreSQL database, when it runs with --db.",
)
@_errors_to_exit_codes
def serve_tokens(
    roster: Path | None,
    instructors: tuple[str, ...],
    out: Path,
    base_url: str,
    export: Path | None,
    database: str | None,
) -> None:
    """Issue sign-in tokens and personal links (an earlier token of the same person stops
    working). Tokens are stored hashed: this is the only time they are shown.

    \b
    Examples:
      grader serve tokens --roster roster.csv > tokens.csv
      grader serve tokens --instructor ada --export staff.csv
      grader serve tokens --roster roster.csv --db postgresql://grader@dbhost/course
    """
    from grader.serve.server import issue_tokens

    if roster is None and not instructors:
        raise UsageError("name a --roster, an --instructor, or both")
    _database_option(database, out)
    if export is None:
        issue_tokens(out, roster, instructors, base_url, database=database)
        return
    with export.open("w", newline="", encoding="utf-8") as handle:
        count = issue_tokens(out, roster, instructors, base_url, handle, database)
    click.echo(f"wrote {count} tokens to {export}", err=True)


@main.command("release")
@ASSIGNMENT_OPTION
@CONFIG_OPTION
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The folder to write the student bundle into.",
)
@click.option(
    "--roster",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="CSV with the columns id and name: one bundle per student, OUT/<id>/, whose public "
    "cases are the student's own (for assignments with per_student_inputs).",
)
@SANDBOX_OPTION
@_errors_to_exit_codes
def release_command(
    assignment: str | None,
    config_path: Path | None,
    out: Path,
    roster: Path | None,
    sandbox: Mode | None,
) -> None:
    """Write the student bundle: what students (and their CI) need to check their work on
    the public cases, without the solutions.

    \b
    OUT gets the exercise notebooks, the course's data files and grader-bundle.npz: the
    public cases' inputs, their expected outputs and what the diagnosis needs on them, as
    numbers (no solution source, no hidden case's expected value). In OUT or below it, and
    with --course OUT or $GRADER_COURSE=OUT, check(), `grader check` and
    `pytest --notebook` grade against the bundle and name the hidden cases left for
    `grader grade`. The course is checked first (exit 2 when it is broken).
    Examples:
      grader release --course . --out handout/
      grader release --assignment self_attention --out handout/
      GRADER_COURSE_SECRET=… grader release --roster roster.csv --out handouts/
    """
    from grader.author.release import release, student_folder
    from grader.batch.roster import load_roster

    config = _course(config_path)
    if roster is None:
        written = release(config, out, assignment, sandbox)
        click.echo(f"wrote {written} and the exercise notebooks in {out}")
        return
    students = load_roster(roster)
    folders = [student_folder(out, s.id) for s in students]  # every id checked first
    for student, folder in zip(students, folders, strict=True):
        release(config, folder, assignment, sandbox, student.id)
    noun = "bundle" if len(folders) == 1 else "bundles"
    click.echo(f"wrote {len(folders)} student {noun} in {out}/<student id>/")


@main.command("init")
@click.argument("folder", type=click.Path(path_type=Path))
@_errors_to_exit_codes
def init_command(folder: Path) -> None:
    """Make a new course folder: config.yaml, solutions/, exercises/, a mistake catalogue,
    cases.py and a README, with a small working example assignment to copy from.

    \b
    FOLDER must not exist yet (or be empty).
    Examples:
      grader init my-course
      cd my-course && grader selftest --course .
    """
    from grader.author.assign import write_exercise
    from grader.author.scaffold import init_course
    from grader.course.config import load_config

    made = init_course(folder)
    config = load_config(folder / "config.yaml")
    made += [write_exercise(spec) for spec in config.assignments.values() if spec.exercise]
    for path in made:
        click.echo(f"wrote {path}")
    click.echo(f"next: grader new-assignment NAME --function 'f(x, y)' --course {folder}")


@main.command("new-assignment")
@click.argument("name")
@click.option(
    "--function",
    "function",
    default=None,
    metavar="'f(x, y)'",
    help="The function students write, with its parameters [default: NAME(x)].",
)
@click.option(
    "--course",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The course folder (its config.yaml).",
)
@_errors_to_exit_codes
def new_assignment_command(name: str, function: str | None, course: Path) -> None:
    """Add an assignment skeleton to a course: a solution notebook with a stub to fill, an
    empty mistake catalogue, and its config entry (one declared argument per parameter).

    \b
    Examples:
      grader new-assignment layer_norm --function "layer_norm(x, gamma, beta, eps)"
      grader new-assignment softmax --function "softmax(scores)" --course my-course
    Then edit the three files it names, and run grader assign and grader selftest.
    """
    from grader.author.scaffold import new_assignment

    for path in new_assignment(course, name, function):
        click.echo(f"wrote {path}")
