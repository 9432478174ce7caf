"""Red-team findings on the instructor's semester: what a hostile student's folder or a
careless instructor's files did to the trusted side, each pinned by a test that failed
before its fix."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from grader.author.assign import write_exercise
from grader.batch.lateness import handed_in, load_extensions
from grader.batch.roster import load_roster
from grader.course.bundle import BUNDLE_NAME
from grader.course.config import load_config
from grader.errors import ConfigError

from authoring import new_course, refused

DUE = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
GIT = ["git", "-c", "user.name=M", "-c", "user.email=m@x"]


def _clone(tmp_path: Path) -> tuple[Path, Path]:
    """A student's folder holding a git repository of their own making (its .git/config
    too), with one commit of hw.ipynb; (the class folder, the notebook)."""
    folder = tmp_path / "class" / "mallory"
    folder.mkdir(parents=True)
    notebook = folder / "hw.ipynb"
    notebook.write_text("{}", encoding="utf-8")
    subprocess.run([*GIT, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*GIT, "add", "hw.ipynb"], cwd=folder, check=True)
    subprocess.run([*GIT, "commit", "-qm", "hw"], cwd=folder, check=True)
    return tmp_path / "class", notebook


def _program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a mark when run: (the program, the mark)."""
    mark = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 1\n", encoding="utf-8")
    program.chmod(0o755)
    return program, mark


def _git(folder: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True, input=stdin
    )
    return done.stdout.strip()


def test_a_students_git_config_runs_no_signature_program(tmp_path: Path) -> None:
    # log.showSignature made `git log` hand a "signed" commit to the repository's own
    # gpg.program: the student's program, run by the instructor's grader.
    source, notebook = _clone(tmp_path)
    program, mark = _program(tmp_path)
    folder = notebook.parent
    tree = _git(folder, "rev-parse", "HEAD^{tree}")
    signed = (
        f"tree {tree}\nauthor m <m@x> 1577836800 +0000\ncommitter m <m@x> 1577836800 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAd\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    commit = _git(folder, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)
    _git(folder, "update-ref", "HEAD", commit)
    _git(folder, "config", "log.showSignature", "true")
    _git(folder, "config", "gpg.program", str(program))
    handed = handed_in(("mallory",), notebook, source, {}, DUE)
    assert not mark.exists()
    assert handed.at == datetime(2020, 1, 1, tzinfo=UTC)  # the time is still read


def test_a_students_git_config_fetches_nothing_through_its_ssh_command(tmp_path: Path) -> None:
    # A "partial clone" whose commit names a tree it lacks: `git log -- FILE` fetched it from
    # the promisor remote through the repository's core.sshCommand, the student's program.
    source, notebook = _clone(tmp_path)
    program, mark = _program(tmp_path)
    folder = notebook.parent
    missing = (
        f"tree {'1' * 40}\nauthor m <m@x> 1577836800 +0000\n"
        "committer m <m@x> 1577836800 +0000\n\nx\n"
    )
    commit = _git(
        folder, "hash-object", "-t", "commit", "--literally", "-w", "--stdin", stdin=missing
    )
    _git(folder, "update-ref", "HEAD", commit)
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://example.invalid/x"),
        ("remote.origin.promisor", "true"),
        ("core.sshCommand", str(program)),
    ):
        _git(folder, "config", key, value)
    os.utime(notebook, (0, 0))
    handed = handed_in(("mallory",), notebook, source, {}, DUE)
    assert not mark.exists()
    assert handed.at == datetime.fromtimestamp(0).astimezone()  # no commit: the file's time


def test_a_roster_saved_with_blank_spreadsheet_rows_loads(tmp_path: Path) -> None:
    # A spreadsheet saves rows it once formatted as `,,,,,`: each stopped `grader grade`
    # with "the id is empty". Empty cells only are a blank line; a row with any text is not.
    path = tmp_path / "roster.csv"
    path.write_text(
        "id,name,email\r\ns001,Ada Lovelace,ada@uni.edu\r\n,,\r\n , ,,,\r\ns002,Bo Chen,\r\n,,\r\n",
        encoding="utf-8",
    )
    assert [s.id for s in load_roster(path)] == ["s001", "s002"]
    path.write_text("id,name\ns001,Ada\n,Bo\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 3: the id is empty"):
        load_roster(path)


def test_a_blank_spreadsheet_row_in_extensions_is_no_bad_line(tmp_path: Path) -> None:
    (tmp_path / "roster.csv").write_text("id,name\ns001,Ada\n,\n", encoding="utf-8")
    (tmp_path / "extensions.csv").write_text("student,hours\ns001,48\n,\n", encoding="utf-8")
    assert load_extensions(tmp_path) == {"s001": 48.0}


def test_a_roster_separated_by_semicolons_says_so(tmp_path: Path) -> None:
    path = tmp_path / "roster.csv"
    path.write_text("id;name;email\ns001;Ada Lovelace;ada@uni.edu\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="separated by ';': save it as comma-separated CSV"):
        load_roster(path)


@pytest.mark.parametrize("out", ["..", "../.."])
def test_release_into_a_folder_holding_the_course_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    # `--out ..` (the repository the course lies in, say) wrote the bundle beside the
    # course's own folder: whoever got the handout got the solutions with it.
    course = new_course(tmp_path / "teaching")
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    monkeypatch.chdir(course)
    said = refused(["release", "--course", ".", "--out", out], course)
    assert said.startswith(f"Error: --out {out} holds ") and "students must never get" in said
    assert not list(tmp_path.rglob(BUNDLE_NAME))
