"""What a sweep of every command with bad input found: an export written over the gradebook
(or the course's config) it came from, override and report on an assignment the gradebook
does not hold rewriting the class's files as an empty class, a damaged gradebook and Ctrl-C
answered with a traceback or click's "Aborted!" (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.cli import main

from students import fast_class


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def graded(tmp_path: Path) -> tuple[Path, Path]:
    """(the course, OUT) of a class of two graded as self_attention."""
    course, folder = fast_class(tmp_path, "ada", "bo")
    out = tmp_path / "out"
    done = run(
        "grade", str(folder), "--course", str(course), "-a", "self_attention", "--out", str(out)
    )
    assert done.exit_code == 0, done.output
    return course, out


def _one_line(done: Result, code: int, said: str) -> None:
    assert done.exit_code == code, done.output
    assert "Traceback" not in done.output and said in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]
    assert len(errors) == 1 and errors[0].startswith("Error: "), done.stderr


@pytest.mark.slow
def test_an_export_never_replaces_the_gradebook_or_the_courses_config(
    graded: tuple[Path, Path],
) -> None:
    course, out = graded
    book = (out / "gradebook.sqlite").read_bytes()
    config = (course / "config.yaml").read_bytes()
    where = ["--results", str(out), "--course", str(course), "--format", "canvas"]
    for dest, said in [
        (out / "gradebook.sqlite", "is a database (a gradebook"),
        (course / "config.yaml", "is a course's config"),
    ]:
        _one_line(run("export", *where, "--out", str(dest)), 2, said)
    assert (out / "gradebook.sqlite").read_bytes() == book
    assert (course / "config.yaml").read_bytes() == config
    _one_line(run("export", *where, "--out", "/dev/full"), 2, "--out /dev/full: cannot write it")
    empty = run("export", *where, "--out", "")  # the working folder
    assert empty.exit_code == 2 and "Traceback" not in empty.output


@pytest.mark.slow
def test_override_and_report_refuse_an_assignment_the_gradebook_does_not_hold(
    graded: tuple[Path, Path],
) -> None:
    course, out = graded
    grades, page = (out / "grades.csv").read_bytes(), (out / "report.html").read_bytes()
    where = ["--results", str(out), "--course", str(course), "-a", "masked_attention"]
    said = "the gradebook holds no submission of masked_attention (it holds: self_attention)"
    _one_line(run("override", "ada", "softmax", "--points", "1", *where), 2, said)
    _one_line(run("comment", "ada", "see me", *where), 2, said)
    _one_line(run("report", str(out), "-a", "masked_attention"), 2, said)
    assert (out / "grades.csv").read_bytes() == grades
    assert (out / "report.html").read_bytes() == page


@pytest.mark.slow
def test_a_damaged_gradebook_is_one_line_and_left_as_it_is(graded: tuple[Path, Path]) -> None:
    _, out = graded
    path = out / "gradebook.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) > 8192
    data[4096:] = b"\xa5" * (len(data) - 4096)  # the pages after the first: the tables' rows
    path.write_bytes(bytes(data))
    _one_line(run("report", str(out), "--format", "json"), 2, "the gradebook cannot be used")
    assert path.read_bytes() == bytes(data)


def test_ctrl_c_in_any_command_exits_130_not_aborted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.batch.classreport as classreport

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(classreport, "load_summary", interrupted)
    done = run("report", str(tmp_path), "--format", "json")
    assert done.exit_code == 130 and "Aborted" not in done.output
    assert done.stderr.strip() == "interrupted"


def test_an_export_to_a_named_pipe_is_written_into_it_not_waited_on(
    graded: tuple[Path, Path], tmp_path: Path
) -> None:
    import os
    import threading

    course, out = graded
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)
    reader.start()
    where = ["--results", str(out), "--course", str(course), "--format", "csv"]
    done = run("export", *where, "--out", str(pipe))
    reader.join(10)
    assert done.exit_code == 0, done.output
    assert got and got[0].startswith(b"student,")


@pytest.mark.slow
def test_tokens_for_a_roster_change_none_when_the_gradebook_cannot_be_written(
    tmp_path: Path,
) -> None:
    from grader.serve.store import Store

    out = tmp_path / "out"
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n")
    assert run("serve", "tokens", "--out", str(out), "--roster", str(roster)).exit_code == 0
    store = Store(out)
    before = store.db.execute("SELECT token_hash FROM people").fetchall()
    store.close()
    (out / "gradebook.sqlite").unlink()
    (out / "gradebook.sqlite").mkdir()  # no gradebook can be opened there
    done = run("serve", "tokens", "--out", str(out), "--roster", str(roster))
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    store = Store(out)
    assert store.db.execute("SELECT token_hash FROM people").fetchall() == before
    store.close()


@pytest.mark.slow
def test_an_override_in_a_gradebook_of_unreadable_notebooks_only_is_taken(
    tmp_path: Path,
) -> None:
    course, folder = fast_class(tmp_path)
    (folder / "ada.ipynb").write_text("{}")
    out = tmp_path / "out"
    grade = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    assert run(*grade, "--out", str(out)).exit_code == 1
    where = ["--results", str(out), "--course", str(course), "-a", "self_attention"]
    done = run("override", "ada", "--points", "5", *where)
    assert done.exit_code == 0, done.output
