"""A batch's files (feedback pages, grades.csv, report.html, the gradebook's rows) are the same,
name for name, byte for byte and mode for mode, whether written by the batch's own route or by
the plain one it replaced (pathlib's text files, both regular expressions over every field,
standings reduced twice); and the pieces that route is made of."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.batch import classreport, recorder
from grader.batch.entries import Batch, Entry
from grader.batch.grade import grade_batch
from grader.batch.gradebook import Gradebook
from grader.batch.outcome import class_outcome, write_outputs
from grader.batch.standing import Standing, from_gradebook
from grader.course.config import load_config
from grader.course.notebook import Submission
from grader.render import escape, feedback, html
from grader.render.feedback import Adjusted, feedback_page, write_bytes
from grader.report import Report

from conftest import REPO

ODD = "tab\there\nline\x1b[31m red\x07 \u202eexe.txt\u2066 \ud800 \ufffe end"
# Each kind of character `printable` changes or keeps, alone in a field of its own.
EACH = (
    "bell\x07",
    "escape \x1b[31m",
    "DEL\x7f C1\x85",
    "bidi \u202eexe.txt",
    "isolate \u2066",
    "surrogate \ud800",
    "non-character \uffff",
    "tab\tand\nbreak\r\n",
    "plain ✓ ünï",
    ODD,
)


def plain_printable(text: str) -> str:
    """`printable` by its two regular expressions alone, whatever the text."""
    return re.sub(escape._BIDI, "", re.sub(escape._CONTROL, "?", text))


def plain_write_feedback(
    out: Path,
    student: str,
    report: Report,
    submission: Submission | None,
    adjusted: Adjusted | None = None,
) -> Path:
    """A feedback page written through pathlib's text layer."""
    path = out / "feedback" / f"{escape.safe_name(student)}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(feedback_page(student, report, submission, adjusted), encoding="utf-8")
    return path


def plain_standings(
    book: Gradebook, assignment: str, whole: bool = True, latest: Any = None
) -> list[Standing]:
    """The report's standings with every report reduced to its points once more."""
    return from_gradebook(book, assignment, False, latest)


Added = tuple[Entry, Submission | None, bool]


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory) -> list[Added]:
    """What a real batch of the demo class handed its recorder, plus one report whose text
    holds controls, bidi overrides, a lone surrogate and line breaks."""
    loaded = load_config(REPO / "config.yaml")
    scratch = tmp_path_factory.mktemp("graded")
    calls: list[Added] = []
    original = recorder.Recorder.add

    def spy(
        self: recorder.Recorder, entry: Entry, sub: Submission | None = None, new: bool = True
    ) -> None:
        calls.append((entry, sub, new))
        original(self, entry, sub, new)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recorder.Recorder, "add", spy)
        grade_batch(
            REPO / "demo" / "submissions", loaded, scratch / "out", "self_attention", jobs=2
        )
    entry, sub, new = next(call for call in calls if call[0].report is not None)
    assert entry.report is not None
    report = replace(entry.report, notes=(*EACH, *entry.report.notes), errors=EACH)
    calls.append((replace(entry, student="odd \x1b[31m \u202eKim\tPark", report=report), sub, new))
    return calls


def replay(calls: list[Added], out: Path) -> None:
    """The calls again into a fresh recorder writing to `out`, then the class's outputs."""
    config = load_config(REPO / "config.yaml")
    book = Gradebook(out / "gradebook.sqlite")
    keeper = recorder.Recorder(Batch(), book, out, "settings", None, keep_reports=False)
    for entry, sub, new in calls:
        keeper.hashes[entry.student] = f"hash of {entry.student}"
        keeper.add(entry, sub, new)
    book.close()
    outcome = class_outcome(keeper.batch, config, "self_attention", out)
    write_outputs(outcome, out, keeper.batch)


def files(out: Path) -> dict[str, tuple[bytes, int]]:
    """Each file under `out` but the gradebook: its bytes and mode, by relative name."""
    return {
        str(path.relative_to(out)): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.name != "gradebook.sqlite"
    }


def rows(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the gradebook, its rows without the moments they were written."""
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        found = {}
        for table in tables:
            cursor = db.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            keep = [i for i, n in enumerate(names) if n not in ("graded_at", "seen_at")]
            found[table] = sorted((tuple(row[i] for i in keep) for row in cursor), key=repr)
    return found


@pytest.mark.slow
def test_batch_files_are_those_of_the_plain_route(
    added: list[Added], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay(added, tmp_path / "new")
    with monkeypatch.context() as plain:
        plain.setattr(html, "printable", plain_printable)
        plain.setattr(recorder, "write_feedback", plain_write_feedback)
        plain.setattr(classreport, "from_gradebook", plain_standings)
        replay(added, tmp_path / "plain")
    new, old = files(tmp_path / "new"), files(tmp_path / "plain")
    assert sorted(new) == sorted(old)
    assert len([name for name in new if name.startswith("feedback")]) == len(
        {e.student for e, _, _ in added if e.report is not None}
    )
    for name in old:
        assert new[name] == old[name], name
    assert rows(tmp_path / "new") == rows(tmp_path / "plain")
    odd = next(data for name, (data, _) in new.items() if name.startswith("feedback/odd"))
    assert "\u202e".encode() not in odd and b"\x1b" not in odd  # the slow path was taken


def test_printable_keeps_exactly_what_its_expressions_keep() -> None:
    every = "".join(map(chr, range(0x110000)))
    kept = "".join(char for char in every if char.isprintable())
    # What the fast path returns untouched, the expressions leave untouched too.
    assert plain_printable(kept) == kept
    assert escape.printable(every) == plain_printable(every)
    for text in EACH:
        assert escape.printable(text) == plain_printable(text)
    assert escape.printable("plain words, `code` and ünïcode ✓") == (
        "plain words, `code` and ünïcode ✓"
    )


def test_printable_text_runs_no_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("a regular expression ran over printable text")

    monkeypatch.setattr(re, "sub", refuse)
    assert escape.printable("Kim Park — softmax over rows ✓") == "Kim Park — softmax over rows ✓"


def test_write_bytes_creates_truncates_and_finishes_short_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_mask = os.umask(0o002)  # group-writable: 0o666 shows, where 0o644 would not
    try:
        (tmp_path / "by_pathlib").write_bytes(b"x")
        write_bytes(tmp_path / "ours", b"x")
    finally:
        os.umask(old_mask)
    assert (tmp_path / "ours").stat().st_mode == (tmp_path / "by_pathlib").stat().st_mode

    page = tmp_path / "page.html"
    page.write_bytes(b"a much longer page than the next one")
    real_write = os.write
    monkeypatch.setattr(feedback.os, "write", lambda fd, data: real_write(fd, bytes(data[:3])))
    write_bytes(page, "short é ✓".encode())
    assert page.read_text(encoding="utf-8") == "short é ✓"


def test_pages_make_their_folder_and_replace_older_pages(tmp_path: Path) -> None:
    report = Report("self_attention", "ada.ipynb", ())
    written = feedback.write_feedback(tmp_path / "out", "ada", report, None)
    assert written == tmp_path / "out" / "feedback" / "ada.html"
    assert written.read_text(encoding="utf-8") == feedback_page("ada", report, None)
    longer = replace(report, notes=("a note " * 500,))
    feedback.write_feedback(tmp_path / "out", "ada", longer, None)
    feedback.write_feedback(tmp_path / "out", "ada", report, None)
    assert written.read_text(encoding="utf-8") == feedback_page("ada", report, None)
