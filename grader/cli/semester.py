"""The instructor's semester on the command line: `grader override`, `grader comment` and
`grader export` (the gradebook as an LMS imports it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from grader.cli.common import (
    CHANGE_OPTIONS,
    GRADEBOOK_OPTIONS,
    _course,
    _database_option,
    _errors_to_exit_codes,
    _output_file,
    main,
)
from grader.errors import UsageError
from grader.render.formats import GRADES_FORMATS

if TYPE_CHECKING:
    pass


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
    Exit codes: 0 done · 2 unknown student, function or assignment, points that are not a
    finite number ≥ 0, a bad CSV line.
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
    not_there: list[Change] = []
    above: list[str] = []
    written = apply(out, _course(config_path), changes, who, assignment, database, not_there, above)
    for line in above:
        click.echo(f"note: {line} (kept: check it is meant)", err=True)
    made = sum(c.points is not None for c in changes)
    cleared = len(changes) - made - len(not_there)
    for change in not_there:
        what = change.target or "the total"
        click.echo(f"note: {change.student} had no override of {what} to clear", err=True)
    if made:
        click.echo(
            f"{made} override{'s' * (made != 1)} recorded" + f", {cleared} cleared" * (cleared > 0)
        )
    else:
        click.echo(f"{cleared} override{'s' * (cleared != 1)} cleared")
    _said_written(written, out)


def _said_written(written: list[Path], out: Path) -> None:
    """The files written again; in a `grader serve` folder, none: its pages show the change."""
    if written:
        click.echo(f"wrote {', '.join(map(str, written))}")
    else:
        click.echo(
            f"{out} is a grader serve folder: its pages show this now (no grades.csv, "
            "report.html or feedback page written there; `grader export` and `grader report` "
            "read its gradebook)"
        )


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
    Exit codes: 0 done · 2 unknown student or assignment, an empty comment.
    """
    from grader.batch.adjust import comment
    from grader.batch.records import author as current_author

    config = _course(config_path)
    _database_option(database, out)
    who = author or current_author()
    written = comment(out, config, student, text, who, assignment, database)
    _said_written(written, out)


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
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    required=True,
    help="The file to write (-: standard output).",
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
      grader export --format csv --results results/ --out - | head   # to standard output
    Columns and how each LMS reads them: docs/instructor.md.
    Exit codes: 0 written · 2 no gradebook in the --results folder, unknown assignment, an
    --out it cannot write.
    """
    from grader.batch.lms import exported
    from grader.render.whole_file import write_text

    _database_option(database, out)
    config = _course(config_path)
    notes: list[str] = []
    if str(dest) == "-":  # the file's bytes, as it would hold them, and nothing else
        text = exported(out, config, fmt, assignment, database, notes)
        click.echo(text.encode("utf-8"), nl=False)
    else:
        if dest.is_dir():  # `--out ""` is the working folder
            raise UsageError(f"--out {dest}: is a folder; name the file to write")
        _output_file(dest)
        text = exported(out, config, fmt, assignment, database, notes)
        try:
            write_text(dest, text, newline="")
        except OSError as exc:  # a full disk, a device that takes nothing
            raise UsageError(f"--out {dest}: cannot write it ({exc.strerror or exc})") from None
        click.echo(f"wrote {dest}")
    for note in notes:
        click.echo(f"note: {note}", err=True)
