"""The options several commands take (`--db`, `--jobs`, `--cluster`) are built once in
grader/cli/common.py: every command's copy is the shared one, but for its help text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from grader.cli import main
from grader.cli.common import CLUSTER_OPTION, database_option, jobs_option


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        yield " ".join((*path, name)), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def shape(option: click.Parameter) -> dict[str, Any]:
    """What makes an option the same one, its help text aside."""
    assert isinstance(option, click.Option)
    return {
        "name": option.name,
        "opts": option.opts,
        "metavar": option.metavar,
        "default": option.default,
        "type": repr(option.type),
        "help": option.help if option.name == "cluster" else None,
    }


def built(decorator: Any) -> click.Option:
    param = decorator(click.command()(lambda **_: None)).params[0]
    assert isinstance(param, click.Option)
    return param


def test_db_jobs_and_cluster_are_the_shared_options_everywhere() -> None:
    shared = {
        "database": shape(built(database_option("h"))),
        "jobs": shape(built(jobs_option("h"))),
        "cluster": shape(built(CLUSTER_OPTION)),
    }
    seen = {name: 0 for name in shared}
    for where, command in commands(main):
        for param in command.params:
            if param.name in shared:
                assert shape(param) == shared[param.name], where
                seen[param.name] += 1
    assert all(count >= 2 for count in seen.values()), seen
