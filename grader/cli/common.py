"""What every `grader` command shares: the `main` group, the course and gradebook options, the
mapping of errors to exit codes (0 all passed · 1 some checks failed · 2 usage, config or
unreadable submission · 3 internal error) and the small checks of options."""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from grader.course.config import MODES, Config, load_course
from grader.course.locate import course_file, is_bundle
from grader.errors import ConfigError, GraderError, UsageError
from grader.render.escape import one_line, safe_lines

if TYPE_CHECKING:
    pass

F = TypeVar("F", bound=Callable[..., Any])


# How a course is named, in the grader's notes and errors.
COURSE_HINT = "--course DIR, --config FILE or $GRADER_COURSE"


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
        "found in the working folder or above it; a course found there that holds the graded "
        "notebooks, or lies inside the folder graded, stops the command: name it).",
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


def _whole_course(config_path: Path | None, command: str) -> Config:
    """The course as `_course` finds it, refused (exit 2) when it is a student bundle: the
    instructor's and the author's commands need the course itself, not its public numbers."""
    config = _course(config_path)
    if is_bundle(config.path):
        raise ConfigError(
            f"{config.path} is a student bundle (public cases only): run `grader {command}` "
            f"in the course itself, or name it with {COURSE_HINT}"
        )
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
    "--assignment", "-a", default=None, help="Assignment id (a key of config.yaml's assignments)."
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


SQLITE_INPUT = ("DatabaseError", "OperationalError")


def _errors_to_exit_codes(command: F) -> F:
    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraderError as exc:
            click.echo(f"Error: {safe_lines(str(exc))}", err=True)  # may name a student's file
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt:  # Ctrl-C: 130, as the shell's own (never click's "Aborted!", 1)
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # `grader … | head`: the reader went away, as SIGPIPE would
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing at exit
            sys.exit(141)
        except Exception as exc:
            # a damaged, full or unopenable gradebook (the grader's own misuse of the
            # database, ProgrammingError and the like, stays an internal error)
            if type(exc).__module__ == "sqlite3" and type(exc).__name__ in SQLITE_INPUT:
                click.echo(f"Error: the gradebook cannot be used: {one_line(str(exc))}", err=True)
                sys.exit(2)
            message = safe_lines(f"{type(exc).__name__}: {exc}")
            click.echo(f"Error: internal error: {message}", err=True)
            import traceback  # only for a fault of the grader's

            click.echo(safe_lines(traceback.format_exc()), err=True)
            sys.exit(3)

    return wrapper  # type: ignore[return-value]


# Each command's module, imported when the command is looked up: `grader check` imports the
# grading commands only (tests/test_cli_lazy.py checks this table against the commands).
COMMAND_MODULES = {
    "assign": "authoring",
    "cache": "cache",
    "check": "grading",
    "comment": "semester",
    "export": "semester",
    "export-gradescope": "authoring",
    "grade": "grading",
    "init": "authoring",
    "new-assignment": "authoring",
    "override": "semester",
    "release": "authoring",
    "report": "grading",
    "selftest": "authoring",
    "serve": "serving",
    "template": "authoring",
}


class LazyGroup(click.Group):
    """A group whose commands are registered by their modules, each imported on the first
    lookup of one of its commands (listing them all, as `--help` does, imports them all)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, whether its module is imported yet or not."""
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, its module imported first (which registers it on this group)."""
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(f"grader.cli.{COMMAND_MODULES[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click resolves it; a name that is no command imports them all first, so that
        click's "Did you mean" sees every command."""
        if args and args[0] not in self.commands and args[0] not in COMMAND_MODULES:
            for module in sorted(set(COMMAND_MODULES.values())):
                importlib.import_module(f"grader.cli.{module}")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="attention-grader")
def main() -> None:
    """Grade students' Jupyter notebooks against a course's reference solutions: fast,
    isolated, and specific about what went wrong (the bundled course: self-attention).

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


def shown_path(path: Path) -> str:
    """A path as the commands print what they wrote: relative to the working folder when it
    lies inside it, else absolute (one way for every file, however it was named)."""
    absolute, here = Path(os.path.abspath(path)), Path(os.getcwd())
    return str(absolute.relative_to(here)) if absolute.is_relative_to(here) else str(absolute)


def _output_folder(out: Path) -> None:
    """Create OUT, or say in one line why it cannot be written to (before grading anything)."""
    _writable_folder(out, f"--out {out}", "the folder", "it", "exists and is not a folder")


def _output_file(out: Path, option: str = "--out") -> None:
    """Create the folder of the file `option` (--out) names, or say in one line why it
    cannot be (an export, a zip or a notebook the grader would otherwise fail to write with
    a traceback)."""
    kept = _kept_file(out)
    if kept:
        raise UsageError(f"{option} {out} is {kept}, which this would replace; name another")
    folder = out.parent
    said = f"{folder} is not a folder"
    _writable_folder(folder, f"{option} {out}", "its folder", str(folder), said)


def _kept_file(path: Path) -> str:
    """What the grader keeps at `path` and no output may replace ("" when nothing): a
    gradebook or the service's data (an SQLite file), or a course's config."""
    if not path.is_file():  # a pipe is never opened here: that would wait for a writer
        return ""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return ""
    if head.startswith(b"SQLite format 3\x00"):
        return "a database (a gradebook, or grader serve's data)"
    if path.name == "config.yaml" and re.search(rb"\bassignments[\"']?\s*:", head):
        return "a course's config"
    return ""


def _writable_folder(folder: Path, option: str, named: str, within: str, not_one: str) -> None:
    """`folder` made (with its parents) and writable by this user, or a UsageError that
    starts with `option` and calls the folder `named` (made) or `within` (written in)."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option}: {not_one}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option}: cannot create {named} ({exc.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: this user may not write in {within}")


@contextmanager
def _writing(out: Path, option: str = "--out") -> Iterator[None]:
    """An OSError on --out (or the folder `option` names) or on a path inside it (a folder
    that cannot be made, a full disk) is one line (exit 2); any other stays the grader's
    fault, with its traceback."""
    try:
        yield
    except OSError as exc:
        name = exc.filename
        if not isinstance(name, str) or not Path(name).absolute().is_relative_to(out.absolute()):
            raise
        raise UsageError(f"{option} {out}: cannot write {name} ({exc.strerror})") from None


def database_option(text: str) -> Callable[[F], F]:
    """`--db URL` (the parameter `database`); `text`: its help, what the database holds for
    this command."""
    return click.option("--db", "database", metavar="URL", default=None, help=text)


# --db URL for the commands that read a graded class's gradebook.
DATABASE_OPTION = database_option(
    "The gradebook is in this PostgreSQL database (the class was graded with `grader "
    "grade --db URL`), not in the --results folder's gradebook.sqlite."
)


def jobs_option(text: str) -> Callable[[F], F]:
    """`--jobs N` / `-j N`, how many workers (None: as many as the cores); `text`: its help."""
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help=text)


# --cluster ADDRESS for the commands that run notebooks (grade, serve).
CLUSTER_OPTION = click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Run the notebooks on a Dask cluster's workers, e.g. tcp://HOST:8786 (needs "
    "attention-grader[cluster]); --jobs is then ignored.",
)


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
