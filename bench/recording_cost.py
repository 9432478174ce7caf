"""The batch parent's CPU per student for recording a graded notebook (the gradebook row, the
feedback page) and for the class's outputs (grades.csv, report.html), against the plain
route measured in the same run: each field through both regular expressions of `printable`,
each page written with `Path.write_text`, the report's standings reduced again.

Usage: python bench/recording_cost.py [--students 300] [--rounds 7]
Grades a small class once (children included, not measured), then records its reports over
and over as `--students` students into fresh output folders, new route and plain route in
turn, and prints the median thread CPU per student of each and their ratio (issue 19: the
parent's own cost per student).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from test_recording_outputs import plain_printable, plain_standings  # noqa: E402

from grader.batch import classreport, recorder  # noqa: E402
from grader.batch.entries import Batch, Entry  # noqa: E402
from grader.batch.gradebook import Gradebook  # noqa: E402
from grader.course.notebook import Submission, load_submission  # noqa: E402
from grader.render import escape, feedback, html  # noqa: E402
from grader.report import Report  # noqa: E402

from students import write_class  # noqa: E402

CLASS = 20  # notebooks graded for real: their reports are recorded again and again


def plain_write_feedback(
    out: Path,
    student: str,
    report: Report,
    submission: Submission | None,
    adjusted: feedback.Adjusted | None = None,
) -> Path:
    """`write_feedback` as it was: the page written through pathlib's text layer."""
    page = feedback.feedback_page(student, report, submission, adjusted)
    path = out / "feedback" / f"{escape.safe_name(student)}.html"
    try:
        path.write_text(page, encoding="utf-8")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    return path


@contextmanager
def plain_route() -> Iterator[None]:
    """The plain route in place of the new one for the duration."""
    saved = (html.printable, recorder.write_feedback, classreport.from_gradebook)
    html.printable, recorder.write_feedback = plain_printable, plain_write_feedback
    classreport.from_gradebook = plain_standings
    try:
        yield
    finally:
        html.printable, recorder.write_feedback, classreport.from_gradebook = saved


def graded_class(scratch: Path) -> list[tuple[Report, Submission | None]]:
    """The reports (and notebooks) of a small class graded by `grader grade`."""
    folder, out = scratch / "class", scratch / "graded"
    paths = write_class(folder, CLASS)
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out)]
    command += ["--assignment", "self_attention"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        reports = dict(book.latest())
    finally:
        book.close()
    return [(reports[p.stem], load_submission(p)) for p in paths]


def record(graded: list[tuple[Report, Submission | None]], students: int, out: Path) -> float:
    """Thread CPU per student of recording `students` graded notebooks into `out`, the
    gradebook closed and report.html written."""
    book = Gradebook(out / "gradebook.sqlite")
    keeper = recorder.Recorder(Batch(), book, out, "settings", None, keep_reports=False)
    entries = []
    for i in range(students):
        report, submission = graded[i % len(graded)]
        student = f"student{i:05d}"
        keeper.hashes[student] = f"{i:064x}"
        entries.append((Entry(student, Path(f"{student}.ipynb"), report), submission))
    started = time.thread_time()
    for entry, submission in entries:
        keeper.add(entry, submission)
    book.close()
    classreport.write_report(out, "self_attention")
    return (time.thread_time() - started) / students


def measure(
    graded: list[tuple[Report, Submission | None]], students: int, out: Path, plain: bool
) -> float:
    """`record` by the new route, or by the plain one."""
    if not plain:
        return record(graded, students, out)
    with plain_route():
        return record(graded, students, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    times: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as scratch:
        graded = graded_class(Path(scratch))
        for round_ in range(args.rounds):
            for plain in (False, True) if round_ % 2 else (True, False):
                out = Path(scratch) / f"out-{round_}-{plain}"
                times[plain].append(measure(graded, args.students, out, plain))
                shutil.rmtree(out)
    new, old = statistics.median(times[False]), statistics.median(times[True])
    print(f"{args.students} students, median of {args.rounds} rounds, thread CPU per student:")
    print(f"  plain route (write_text, regex printable): {old * 1000:.3f} ms")
    print(f"  new route:                                 {new * 1000:.3f} ms")
    print(f"  ratio new/plain: {new / old:.2f} ({(1 - new / old) * 100:.0f}% less)")


if __name__ == "__main__":
    main()
