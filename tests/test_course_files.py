"""An assignment's `files:`: the course data a notebook may read, read-only in its working
folder under the path it is listed by, with and without the sandbox; nothing else of the
course, and no solution, is visible."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from grader.batch.grade import grade_batch
from grader.cli import main
from grader.course.config import Config, Mode, load_config
from grader.engine import grade_path
from grader.report import Report

import students
from conftest import write_notebook

pytestmark = pytest.mark.sandbox

LISTED = ["data/x.npy", "notes.txt"]
# Lists the working folder, reads the listed files and tries what it must not: the course's
# other files, a solution, and writing over a listed file. It reports all of it as an error.
PROBE = """\
import os
seen = sorted(os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk('.') for f in fs)
data = np.load('data/x.npy').tolist() + [open('notes.txt').read()]
def attempt(action):
    try:
        action()
        return 'done'
    except OSError as exc:
        return type(exc).__name__
tries = [attempt(lambda: open(p).read()) for p in FORBIDDEN]
tries.append(attempt(lambda: open('data/x.npy', 'wb').write(b'overwritten')))
raise ValueError(f"SEEN {seen} DATA {data} TRIES {tries}")"""


@pytest.fixture(scope="module")
def course() -> Iterator[Path]:
    """A course any user can read (bubblewrap runs as nobody for root): its solution and
    catalogue in solutions/, listed data, and files it does not list."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-test-"))
    try:
        folder.chmod(0o755)
        source = Path(__file__).resolve().parent.parent
        shutil.copytree(source / "solutions", folder / "solutions")
        shutil.copy(source / "cases.py", folder / "cases.py")  # the course's case builders
        (folder / "data").mkdir()
        np.save(folder / "data" / "x.npy", np.arange(3.0))
        np.save(folder / "data" / "unlisted.npy", np.arange(3.0))
        (folder / "notes.txt").write_text("hello")
        (folder / "secret.txt").write_text("not for students")
        raw = yaml.safe_load((source / "config.yaml").read_text())
        spec = raw["assignments"]["self_attention"]
        spec.pop("exercise")
        spec["files"] = LISTED
        raw["assignments"] = {"self_attention": spec}
        (folder / "config.yaml").write_text(json.dumps(raw))
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


def probe_notebook(folder: Path, course: Path) -> Path:
    forbidden = [
        str(course / "solutions" / "self_attention.ipynb"),
        str(course / "secret.txt"),
        "/sandbox/course/data/unlisted.npy",
        "../secret.txt",
    ]
    cells = [*students.cells(), f"FORBIDDEN = {forbidden!r}", PROBE]
    return write_notebook(folder / "probe.ipynb", cells)


def unsandboxed(notes: tuple[str, ...]) -> bool:
    return any(note.startswith("no sandbox:") for note in notes)


def seen(report: Report) -> str:
    said = [e for e in report.errors if "SEEN" in e]
    assert len(said) == 1, report.errors
    return said[0]


def expected(sandboxed: bool) -> str:
    """The working folder holds the listed files, read; the rest cannot be read (without a
    sandbox a solution can: only the process limits hold); the listed file is not written."""
    solution = "FileNotFoundError" if sandboxed else "done"
    secret = "FileNotFoundError" if sandboxed else "done"
    # Without a sandbox, into its own read-only copy: refused (a root grader's notebook runs
    # as nobody, grader/run/unprivileged.py).
    written = "OSError" if sandboxed else "PermissionError"
    tries = [solution, secret, "FileNotFoundError", "FileNotFoundError", written]
    return f"SEEN {LISTED} DATA [0.0, 1.0, 2.0, 'hello'] TRIES {tries}"


def check_course_untouched(course: Path) -> None:
    assert np.load(course / "data" / "x.npy").tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_notebook_reads_the_listed_files_and_nothing_else(
    course: Path, tmp_path: Path, mode: Mode
) -> None:
    config = load_config(course / "config.yaml")
    report = grade_path(probe_notebook(tmp_path, course), config, sandbox=mode)
    sandboxed = mode == "auto"
    assert unsandboxed(report.notes) is not sandboxed
    assert expected(sandboxed) in seen(report)
    assert report.score == report.max_score  # the listed files change no grade
    check_course_untouched(course)


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_grader_check_and_grade_place_the_files(
    course: Path, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    path = probe_notebook(folder, course)
    runner = CliRunner()
    done = runner.invoke(main, ["check", str(path), "--course", str(course), "--sandbox", mode])
    assert done.exit_code == 0, done.output
    assert expected(mode == "auto") in done.stdout
    out = tmp_path / "out"
    args = ["grade", str(folder), "--course", str(course), "--sandbox", mode, "--out", str(out)]
    done = runner.invoke(main, args)
    assert done.exit_code == 0, done.output
    check_course_untouched(course)


def test_a_batch_gives_each_notebook_the_files(course: Path, tmp_path: Path) -> None:
    config: Config = load_config(course / "config.yaml")
    probe_notebook(tmp_path, course)
    write_notebook(tmp_path / "plain.ipynb", students.cells())
    batch = grade_batch(tmp_path, config, None, "self_attention", jobs=1, sandbox="required")
    reports = {e.student: e.report for e in batch.entries}
    probe, plain = reports["probe"], reports["plain"]
    assert probe is not None and plain is not None
    assert expected(True) in seen(probe)
    assert plain.errors == () and plain.score == plain.max_score
    check_course_untouched(course)


def test_a_private_course_gives_the_listed_files_all_the_same(course: Path, tmp_path: Path) -> None:
    """A course private to its owner (a home folder, mode 0700, files 0600): its listed files
    are staged for the sandbox (whose user, for root, is nobody) and read as from any course;
    the sandbox's mount table names neither the course nor its folder."""
    private = Path(tempfile.mkdtemp(prefix="grader-private-"))
    try:
        shutil.copytree(course, private / "course")
        for path in [private, *private.rglob("*")]:
            path.chmod(0o700 if path.is_dir() else 0o600)
        config = load_config(private / "course" / "config.yaml")
        notebook = probe_notebook(tmp_path, private / "course")
        report = grade_path(notebook, config, sandbox="required")
        assert expected(True) in seen(report)
        roots = "' '.join(f'{l.split()[3]}>{l.split()[4]}' for l in open('/proc/self/mountinfo'))"
        cells = [*students.cells(), f"raise ValueError({roots})"]
        notebook = write_notebook(tmp_path / "mounts.ipynb", cells)
        table = grade_path(notebook, config, "self_attention", sandbox="required")
        said = next(e for e in table.errors if ">/sandbox/course" in e)
        assert str(private) not in said and "grader-private" not in said, said
    finally:
        shutil.rmtree(private)
