"""`grader cache`: where the grader's cache folder is, how big, and emptying it
(grader/course/cache_prune.py keeps it bounded on its own)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from grader.cli.common import _errors_to_exit_codes, main
from grader.course import cache_prune
from grader.course.cache_home import CACHE_ENV, last_pruned, named_folder, private
from grader.errors import UsageError


def _size(size: float) -> str:
    """Bytes as people read them: 3.4 GB, 120 MB, 8 KB."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit in ("B", "KB") else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _folder() -> Path:
    """The cache folder; UsageError when there is none the grader would use."""
    folder = named_folder()
    if folder is None and os.environ.get(CACHE_ENV):
        raise UsageError(f"${CACHE_ENV} is a relative path: the grader keeps no cache folder")
    if folder is None:
        raise UsageError(
            f"no home folder ($HOME) and no ${CACHE_ENV}: the grader keeps no cache folder"
        )
    if os.path.lexists(folder) and not private(folder):
        raise UsageError(
            f"{folder}: the cache folder is not private to this user (another may write to "
            "it): the grader does not use it, and nothing was done"
        )
    return folder


@main.command("cache")
@click.option(
    "--clean",
    is_flag=True,
    help="Remove every entry of the grader's from the folder (files of other names are left "
    "alone); everything in it is made again when needed.",
)
@_errors_to_exit_codes
def cache(clean: bool) -> None:
    """Show the grader's cache folder (where, how big, how many entries), or empty it.

    The folder is $GRADER_CACHE_DIR, else $XDG_CACHE_HOME/grader, else ~/.cache/grader. It
    is pruned on its own at most once a day: entries unused for 30 days go, and the least
    recently used while it is over its budget ($GRADER_CACHE_BUDGET, default 1G).

    \b
    Examples:
      grader cache
      grader cache --clean
      GRADER_CACHE_BUDGET=300M grader cache
    """
    folder = _folder()
    budget_text = os.environ.get(cache_prune.BUDGET_ENV, "")
    if budget_text and cache_prune.parse_size(budget_text) is None:
        click.echo(
            f"note: ${cache_prune.BUDGET_ENV}={budget_text!r} is not a size (e.g. 500M, 2G): "
            f"the budget is {_size(cache_prune.BUDGET_BYTES)}",
            err=True,
        )
    if clean:
        done = cache_prune.clean(folder)
        click.echo(f"removed {done.removed:,} entries ({_size(done.freed)}) from {folder}")
        return
    count, size = cache_prune.measure(folder)
    click.echo(f"cache folder: {folder}")
    click.echo(f"{_size(size)} in {count:,} entries (budget {_size(cache_prune.budget())})")
    last = last_pruned(folder)
    when = "never" if last is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(last))
    click.echo(
        f"last pruned: {when} (at most once a day, after a grader command or by a running "
        "grader serve)"
    )
