"""`grader serve` (the submission service) and `grader serve tokens` (its sign-in tokens)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from grader.cli.common import (
    CLUSTER_OPTION,
    CONFIG_OPTION,
    _database_option,
    _errors_to_exit_codes,
    _output_file,
    _whole_course,
    database_option,
    jobs_option,
    main,
)
from grader.course.config import MODES, Mode
from grader.errors import UsageError

if TYPE_CHECKING:
    pass


# The top-level modules of the `serve` extra (pyproject.toml): one of them missing is the
# install's doing, said in one line, not a traceback.
_SERVE_EXTRA = frozenset(
    (
        "starlette",
        "uvicorn",
        "multipart",
        "python_multipart",
        "pylti1p3",
        "jwt",
        "requests",
        "confusable_homoglyphs",
    )
)


@contextlib.contextmanager
def _needs_serve_extra() -> Iterator[None]:
    """Imports of the service: a module of its extra that is not installed is a UsageError
    (exit 2) saying what to install; any other import error is the grader's own."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in _SERVE_EXTRA:
            raise
        raise UsageError(
            f"grader serve needs its extra ({exc}): pip install 'attention-grader[serve]'"
        ) from None


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
@jobs_option("Workers [cores].")
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
@database_option(
    "Keep the service's tables and the gradebook in PostgreSQL, e.g. "
    "postgresql://grader@HOST/course (needs attention-grader[postgres]); several replicas "
    "may share it."
)
@CLUSTER_OPTION
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

    with _needs_serve_extra():
        from grader.serve.checks import Limits
        from grader.serve.server import hold, listen, serve, usable

    config = _whole_course(config_path, "serve")
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
    # After the course's check: a broken course leaves OUT untouched.
    with hold(out, database) or contextlib.nullcontext():  # OUT is this server's alone
        usable(out, database)
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


def _base_url(url: str) -> None:
    """Refuse, in one line, a --base-url that would make links no browser opens: one
    without http:// or https://, without a host, or with a query or fragment (a link is
    the address, then /t/TOKEN)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port that is no number, or out of range
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0
    except ValueError:  # also an unclosed [ of an IPv6 address
        usable = False
    if not usable or parts.query or parts.fragment:
        raise UsageError(
            f"--base-url {url!r}: give the address students open the service at, with "
            "http:// or https:// and a host, and no ? or # part (e.g. "
            "https://grader.example.edu or https://example.edu/grader)"
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
@database_option("The service's PostgreSQL database, when it runs with --db.")
@click.option(
    "--student",
    "only",
    metavar="ID",
    multiple=True,
    help="With --roster: issue for this roster student only (repeat); the others' tokens "
    "stay as they are, and the file's students are added to the class's roster, no one "
    "taken off it.",
)
@click.option(
    "--revoke",
    metavar="ID",
    multiple=True,
    help="Revoke this person's token (repeat): their link stops signing in and their "
    "sessions end; their uploads stay. Issues nothing.",
)
@_errors_to_exit_codes
def serve_tokens(
    roster: Path | None,
    instructors: tuple[str, ...],
    out: Path,
    base_url: str,
    export: Path | None,
    database: str | None,
    only: tuple[str, ...],
    revoke: tuple[str, ...],
) -> None:
    """Issue sign-in tokens and personal links (an earlier token of the same person stops
    working), or revoke them. Tokens are stored hashed: this is the only time they are shown.

    \b
    Examples:
      grader serve tokens --roster roster.csv > tokens.csv
      grader serve tokens --instructor ada --export staff.csv
      grader serve tokens --roster roster.csv --db postgresql://grader@dbhost/course
      grader serve tokens --revoke alice                  # a leaked link stops working
      grader serve tokens --roster roster.csv --student alice > alice.csv   # her new one
    A revoked person has no token until one is issued for them again (--roster issues one
    for every roster student, --student for those named). --roster without --student also
    makes the file the class's roster (the report and exports list it; those it leaves out
    are named). Exit codes: 2 an unknown id.
    """
    with _needs_serve_extra():
        from grader.serve.server import issue_tokens, revoke_tokens

    if revoke:
        if roster is not None or instructors or export is not None or only:
            raise UsageError("--revoke works alone: revoke first, then issue new tokens")
        _database_option(database, out)
        for person in revoke_tokens(out, revoke, database):
            click.echo(f"revoked {person.id} ({person.role}): the link signs nobody in any more")
        return
    if roster is None and not instructors:
        raise UsageError("name a --roster, an --instructor, or both")
    _base_url(base_url)  # before any token is issued: each replaces the person's last one
    _database_option(database, out)
    if only and roster is None:
        raise UsageError("--student needs --roster (the student's name is read from it)")
    if export is None:
        issue_tokens(out, roster, instructors, base_url, database=database, only=only)
        return
    from grader.render.whole_file import write_text

    # Checked before any token is issued (an issued token makes the old one stop working),
    # and written whole once they are: a refused roster leaves the last export as it was.
    _output_file(export, "--export")
    handle = io.StringIO(newline="")
    count = issue_tokens(out, roster, instructors, base_url, handle, database, only)
    try:
        write_text(export, handle.getvalue(), newline="")
    except OSError as exc:
        raise UsageError(
            f"--export {export}: cannot write it ({exc.strerror or exc}); the tokens just "
            "issued are lost: run the command again to issue new ones"
        ) from None
    click.echo(f"wrote {count} tokens to {export}", err=True)
