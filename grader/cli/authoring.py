"""The course author's commands: `init`, `new-assignment`, `assign`, `selftest`, `release`,
`export-gradescope` and the CI `template`s."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from grader.cli.common import (
    ASSIGNMENT_OPTION,
    CONFIG_OPTION,
    COURSE_OPTIONS,
    SANDBOX_OPTION,
    _course,
    _errors_to_exit_codes,
    _output_file,
    _whole_course,
    _writing,
    main,
    shown_path,
)
from grader.course.config import Mode
from grader.errors import UsageError

if TYPE_CHECKING:
    pass


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
    --out names the zip file (never `-`: a zip is no text for standard output).
    It grades only inside the sandbox (score 0 where none can be made) unless the
    course's config.yaml says `sandbox: auto` (docs/ci.md).
    Example:  grader export-gradescope --assignment masked_attention --out masked.zip
    """
    from grader.author.export import LATE_NOTE, UNSANDBOXED_NOTE, export_gradescope

    config = _whole_course(config_path, "export-gradescope")
    _output_file(out)
    click.echo(f"wrote {shown_path(export_gradescope(config, assignment, out))}")
    notes = []
    if not config.sandbox_named:  # export sets `sandbox: required` in the bundle
        notes.append(UNSANDBOXED_NOTE)
    if config.assignment(assignment).late is not None:
        notes.append(LATE_NOTE)
    _tell_notes(notes)


@main.command("template")
@click.argument("name", type=click.Choice(["github", "gitlab"]))
@_errors_to_exit_codes
def template_command(name: str) -> None:
    """Print a CI configuration that grades a student's notebook on every push.

    \b
    Examples:
      grader template github > .github/workflows/classroom.yml
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
    from grader.judge.preflight import checked_catalogue

    config = _whole_course(config_path, "selftest")
    ids = [assignment] if assignment else sorted(config.assignments)
    for spec in map(config.assignment, ids):
        checked_catalogue(config, spec)
    results = [run_selftest(spec) for spec in map(config.assignment, ids)]
    for result in results:
        click.echo(render_selftest(result))
    sys.exit(0 if all(r.ok for r in results) else 1)


@main.command()
@COURSE_OPTIONS
@click.option(
    "--out",
    type=click.Path(allow_dash=True, path_type=Path),
    default=None,
    help="File or folder to write to (-: one assignment's notebook on standard output).",
)
@_errors_to_exit_codes
def assign(assignment: str | None, config_path: Path | None, out: Path | None) -> None:
    """Write the student notebook(s) from the solution notebook(s).

    \b
    Without --assignment, every assignment in the config is written to its `exercise` path.
    Examples:
      grader assign --assignment self_attention --out /tmp/student.ipynb
      grader assign --assignment self_attention --out - | jq .metadata   # standard output
    """
    from grader.author.assign import (
        course_sources,
        exercise_target,
        exercise_text,
        refuse_exercise_paths,
        write_exercise,
    )

    config = _whole_course(config_path, "assign")
    if out is None:
        refuse_exercise_paths(config)
    if assignment:
        specs = [config.assignment(assignment)]
    else:  # assignments without an `exercise` (graded as students hand them in) are skipped
        specs = [a for _, a in sorted(config.assignments.items()) if a.exercise is not None]
    if out is not None and str(out) == "-":  # one notebook's bytes, and nothing else
        if len(specs) != 1:
            raise UsageError(
                f"--out -: standard output takes one notebook, not {len(specs)}: name one "
                "assignment with --assignment"
            )
        click.echo(exercise_text(specs[0]).encode("utf-8"), nl=False)
        return
    if out is not None and not out.is_dir():
        _output_file(out)
    if out is not None and not out.is_dir() and len(specs) > 1:
        raise UsageError(
            f"--out {out}: one file for {len(specs)} assignments, each written over the last: "
            "name a folder that exists, or one assignment with --assignment"
        )
    keep = course_sources(config)
    for spec in specs:  # every target and solution checked first: a refusal writes nothing
        exercise_target(spec, out, keep)
        exercise_text(spec)
    for spec in specs:
        click.echo(f"wrote {shown_path(write_exercise(spec, out, keep))}")


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
    from grader.render.escape import safe_name

    config = _course(config_path)
    notes: list[str] = []
    if roster is None:
        with _writing(out):
            written = release(config, out, assignment, sandbox, notes=notes)
        _tell_notes(notes)
        chosen = [config.assignment(assignment)] if assignment else config.assignments.values()
        beside = " and the exercise notebooks" if any(s.exercise for s in chosen) else ""
        click.echo(f"wrote {written}{beside} in {out}")
        return
    students = load_roster(roster)
    # Every id checked first; each folder named as the student's feedback page (an id no
    # disk takes as a name, `CON` on Windows or one with a `:`, gets a hash).
    folders = [out / safe_name(student_folder(out, s.id).name) for s in students]
    for student, folder in zip(students, folders, strict=True):
        with _writing(out):
            release(config, folder, assignment, sandbox, student.id, notes=notes)
        if folder.name != student.id:  # as their feedback page is named
            notes.append(
                f"{student.id!r} is no folder name on every disk: their bundle is {folder}"
            )
    _tell_notes(notes)
    noun = "bundle" if len(folders) == 1 else "bundles"
    click.echo(f"wrote {len(folders)} student {noun} in {out}/<student id>/")


def _tell_notes(notes: list[str]) -> None:
    """Each note once, on standard error (a roster's bundles repeat them)."""
    for note in dict.fromkeys(notes):
        click.echo(f"note: {note}", err=True)


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

    with _writing(folder, "FOLDER"):
        made = init_course(folder)
        config = load_config(folder / "config.yaml")
        made += [write_exercise(spec) for spec in config.assignments.values() if spec.exercise]
    for path in made:
        click.echo(f"wrote {shown_path(path)}")
    course = shlex.quote(str(folder))
    click.echo(f"next: grader new-assignment NAME --function 'f(x, y)' --course {course}")


@main.command("new-assignment")
@click.argument("name")
@click.option(
    "--function",
    "functions",
    multiple=True,
    metavar="'f(x, y)'",
    help="The function students write, with its parameters [default: NAME(x)]; one: add "
    "more functions to the solution and config.yaml after.",
)
@click.option(
    "--course",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The course folder (its config.yaml) [default: the working folder or the nearest "
    "one above it with a config.yaml, as the other authoring commands find it].",
)
@_errors_to_exit_codes
def new_assignment_command(name: str, functions: tuple[str, ...], course: Path | None) -> None:
    """Add an assignment skeleton to a course: a solution notebook with a stub to fill, an
    empty mistake catalogue, and its config entry (one declared argument per parameter).

    \b
    Examples:
      grader new-assignment layer_norm --function "layer_norm(x, gamma, beta, eps)"
      grader new-assignment softmax --function "softmax(scores)" --course my-course
    Then edit the three files it names, and run grader assign and grader selftest.
    """
    from grader.author.scaffold import new_assignment

    if len(functions) > 1:  # only the last was kept, without a word (r50 #8)
        raise UsageError(
            f"--function given {len(functions)} times: the skeleton has one function; make it "
            f"with one, then add {', '.join(repr(f) for f in functions[1:])} to the solution "
            "notebook and the assignment's targets in config.yaml (docs/course-author.md)"
        )
    function = functions[0] if functions else None
    if course is None:
        from grader.course.locate import CONFIG_NAME, find_upward

        found = find_upward()
        if found is None or found.name != CONFIG_NAME:
            raise UsageError(
                f"no {CONFIG_NAME} in {Path.cwd()} or a folder above it: make a course first "
                "(grader init DIR), or name it with --course DIR"
            )
        course = found.parent
    with _writing(course, "--course"):
        made = new_assignment(course, name, function)
    for path in made:
        click.echo(f"wrote {shown_path(path)}")
