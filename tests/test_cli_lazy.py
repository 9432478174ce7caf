"""`grader check` imports only what it uses: each command's module is imported when the command
is looked up (grader/cli/common.py's LazyGroup), each output format's module when it renders
(grader/render/formats.py's Renderer); `--help` still lists every command."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import click
from click.testing import CliRunner

from grader.cli import common, main
from grader.render.formats import FORMATS, Renderer

from conftest import REPO

# What `grader check --format json` has no use for.
UNUSED_BY_CHECK = (
    "grader.cli.authoring",
    "grader.cli.semester",
    "grader.cli.serving",
    "grader.render.junit",
    "grader.render.class_report",
    "grader.render.charts",
    "grader.render.lms",
    "grader.render.table",
    "grader.course.deadline",  # the bundled course has no due dates
    # what makes the derived mistakes, which a cached course has made before
    "grader.judge.mutants",
    "grader.judge.mutant_operators",
    "grader.judge.mutant_helpers",
    "grader.judge.mutant_inputs",
    "grader.judge.mutant_pairs",
    "grader.judge.transplant",
    # a course's YAML read before (yaml_memo), versions from folder names (course.versions),
    # the sandbox's stage recalled (view.stage_lib)
    "yaml",
    "importlib.metadata",
    # a few milliseconds each: logging (through concurrent.futures), html's entities,
    # zipfile (a student bundle's reader needs it)
    "concurrent.futures",
    "logging",
    "html.entities",
    "zipfile",
    # hashlib loads OpenSSL (_hashlib) and is used only to name a class's feedback pages;
    # shutil (with bz2 and lzma) and tempfile (with random) only where a sandbox's stage is
    # built, not found: programs.py finds bwrap and the temporary folder without them
    "hashlib",
    "_hashlib",
    "shutil",
    "tempfile",
    # what only a student's process runs (the cache key hashes its folder's files, unimported)
    "grader.run.child",
)


def _registered() -> dict[str, str]:
    """Every command of the group, by name, and the module that defines it (all imported)."""
    for module in set(common.COMMAND_MODULES.values()):
        importlib.import_module(f"grader.cli.{module}")
    return {
        name: command.callback.__module__.rsplit(".", 1)[-1]
        for name, command in main.commands.items()
        if command.callback is not None
    }


def test_the_table_of_commands_names_each_command_and_its_module() -> None:
    assert _registered() == common.COMMAND_MODULES


def test_help_in_a_fresh_process_is_the_help_of_every_command_registered() -> None:
    fresh = subprocess.run(
        [sys.executable, "-m", "grader", "--help"],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    _registered()
    eager = click.Group(
        "grader",
        commands=main.commands,
        params=main.params,
        help=main.help,
        context_settings=main.context_settings,
    )
    assert (
        CliRunner()
        .invoke(eager, ["--help"], prog_name="python -m grader", terminal_width=78)
        .stdout
        == fresh
    )
    assert all(f"\n  {name} " in fresh for name in common.COMMAND_MODULES)


def test_a_command_looked_up_in_a_fresh_process_gets_its_help() -> None:
    script = (
        "import sys; from grader.cli import main\n"
        "try: main(['export', '--help'])\n"
        "except SystemExit as e: print('EXIT', e.code)\n"
        "loaded = [m in sys.modules for m in ('grader.cli.semester', 'grader.cli.authoring')]\n"
        "print('LOADED', *loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert "Usage: -c export [OPTIONS]" in out
    assert "--results" in out
    assert out.rstrip().endswith("EXIT 0\nLOADED True False")


def test_check_imports_neither_other_commands_nor_other_formats() -> None:
    script = (
        "import json, sys; from grader.cli import main\n"
        "args = ['check', 'demo/submissions/bruno.ipynb', '--course', '.', '--format', 'json']\n"
        "try: main(args)\n"
        "except SystemExit: pass\n"
        f"print(json.dumps(sorted(m for m in {UNUSED_BY_CHECK!r} if m in sys.modules)))"
    )
    for _ in range(2):  # the first may make the course's cache
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True
        )
    last = done.stdout.strip().splitlines()[-1]
    assert json.loads(last) == []
    assert '"assignment"' in done.stdout  # it did check


def test_every_format_renders_with_its_modules_own_renderer() -> None:
    for formats in FORMATS.values():
        for entry in formats.values():
            assert isinstance(entry.render, Renderer)
            module = importlib.import_module(f"grader.render.{entry.render.module}")
            assert entry.render.resolve() is getattr(module, entry.render.name)


def test_a_mistyped_command_in_a_fresh_process_is_told_the_command_meant() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader", "overide", "--results", "r"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "No such command 'overide'. Did you mean 'override'?" in done.stderr
