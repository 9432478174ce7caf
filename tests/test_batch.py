"""Batch grading: the gradebook, reruns, --force, SIGKILL in the middle, and equality with
`grader check` on each notebook alone."""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from grader.batch import grade as batch_module
from grader.batch import pool as pool_module
from grader.batch import recorder as recorder_module
from grader.batch.entries import FAULT_LOG, Batch
from grader.batch.grade import available_cores, grade_batch, sweep_scratch
from grader.batch.gradebook import Gradebook
from grader.batch.pool import Job
from grader.batch.recorder import Recorder
from grader.cli import main
from grader.course.config import Config
from grader.engine import grade_path
from grader.run import bwrap
from grader.run import workers as workers_module

import students
from conftest import REPO, processes_with, write_fast_course, write_notebook

DEMO = REPO / "demo" / "submissions"


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    folder = tmp_path / "class"
    shutil.copytree(DEMO, folder)
    return folder


def honest_class(tmp_path: Path, *names: str) -> Path:
    """A class folder of correct notebooks, one per name."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in names:
        write_notebook(folder / f"{name}.ipynb", students.cells())
    return folder


def rows(out: Path) -> int:
    try:
        with sqlite3.connect(out / "gradebook.sqlite") as db:
            return int(db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])
    except sqlite3.OperationalError:  # the grader has not created its tables yet
        return 0


@pytest.mark.slow
def test_batch_grades_equal_check_grades(config: Config, klass: Path, tmp_path: Path) -> None:
    batch = grade_batch(klass, config, tmp_path / "out", "self_attention", jobs=2)
    graded = [e for e in batch.entries if e.report]
    assert len(graded) == 12 and batch.graded == 12
    for entry in graded:
        alone = grade_path(klass / f"{entry.student}.ipynb", config, "self_attention")
        assert entry.report is not None
        for a, b in zip(entry.report.targets, alone.targets, strict=True):
            assert (a.name, a.status, a.score, a.mistakes, a.messages, a.location) == (
                b.name,
                b.status,
                b.score,
                b.mistakes,
                b.messages,
                b.location,
            )
    zoe = next(e for e in batch.entries if e.student == "zoe")
    assert zoe.report is None and "invalid JSON" in zoe.problem


@pytest.mark.slow
def test_outputs_csv_feedback_and_gradebook(config: Config, klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["grade", str(klass), "--out", str(out), "-a", "self_attention"]
    )
    assert result.exit_code == 1, result.output  # zoe's notebook could not be graded
    with (out / "grades.csv").open() as handle:
        table = list(csv.DictReader(handle))
    names = [t.name for t in config.assignment("self_attention").targets]
    extra = ["autograded", "overrides", "comments", "late_penalty", "lateness"]
    assert list(table[0]) == ["student", *names, "total", "max_total", "problem", *extra]
    bruno = next(r for r in table if r["student"] == "bruno")
    assert float(bruno["total"]) == 5 and float(bruno["scaled_dot_product_self_attention"]) == 0
    zoe = next(r for r in table if r["student"] == "zoe")
    assert "invalid JSON" in zoe["problem"]
    pages = sorted(p.stem for p in (out / "feedback").glob("*.html"))
    assert pages == sorted(p.stem for p in DEMO.glob("*.ipynb"))
    # zoe's page says why hers has no grade, and the 0 every other output gives
    said = (out / "feedback" / "zoe.html").read_text()
    assert "invalid JSON" in said and "self_attention: 0 / 10 points" in said
    page = (out / "feedback" / "bruno.html").read_text()
    assert "scale_discarded" in page and 'class="here"' in page
    assert "return np.transpose(X_prime)" in page  # their own code, around the line
    assert rows(out) == 12
    # Plain progress lines when not on a terminal; zoe's unreadable notebook counted apart.
    assert "graded 13/13, 1 of them not graded (" in result.output


def problems(batch: Batch) -> list[str]:
    """What kept entries from a grade (and the faults), for a failing assertion to show."""
    return [f"{e.student}: {e.problem} {e.fault}" for e in batch.entries if e.problem]


@pytest.mark.slow
def test_rerun_skips_unchanged_and_force_regrades(
    config: Config, klass: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = grade_batch(klass, config, out, "self_attention")
    assert (first.graded, first.skipped) == (12, 0), problems(first)
    again = grade_batch(klass, config, out, "self_attention")
    assert (again.graded, again.skipped) == (0, 12), problems(again)
    assert [replace(e.report, seconds=0) for e in again.entries if e.report] == [
        replace(e.report, seconds=0) for e in first.entries if e.report
    ]
    write_notebook(
        klass / "ada.ipynb", students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    )
    changed = grade_batch(klass, config, out, "self_attention")
    assert (changed.graded, changed.skipped) == (1, 11), problems(changed)
    forced = grade_batch(klass, config, out, "self_attention", force=True)
    assert (forced.graded, forced.skipped) == (12, 0), problems(forced)
    assert rows(out) == 13  # ada twice (two contents), everyone else once


@pytest.mark.slow
def test_a_notebook_handed_in_again_after_another_is_the_latest_again(
    config: Config, tmp_path: Path
) -> None:
    # Kept as unchanged, the earlier notebook kept its old time: the gradebook's latest (the
    # exports and the report read it) and the feedback page stayed the notebook graded in
    # between.
    folder = tmp_path / "class"
    folder.mkdir()
    out = tmp_path / "out"
    cells = students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    wrong = write_notebook(tmp_path / "wrong.ipynb", cells).read_bytes()
    right = write_notebook(tmp_path / "right.ipynb", students.cells()).read_bytes()
    scores = []
    for data in (wrong, right, wrong):
        (folder / "ada.ipynb").write_bytes(data)  # the same bytes as before: unchanged
        batch = grade_batch(folder, config, out, "self_attention")
        scores.append(next(e.report.score for e in batch.entries if e.report))
    assert batch.skipped == 1 and scores[0] == scores[2] < scores[1]
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert dict(book.latest("self_attention"))["ada"].score == scores[2]
    finally:
        book.close()
    page = (out / "feedback" / "ada.html").read_text()
    assert f"self_attention: {scores[2]:g} / " in page


def test_a_place_no_notebook_holds_does_not_cost_the_class_its_grades(
    config: Config, tmp_path: Path
) -> None:
    # The student's own compile() named a cell 2**63: the number went to SQLite, which
    # refused it, and no grade of the class was written (exit 3, on every rerun).
    folder = honest_class(tmp_path, "ada")
    forged = (
        'exec(compile("def softmax(items_in):\\n    raise ValueError(1)\\n",'
        ' "<cell 9223372036854775808>", "exec"))'
    )
    write_notebook(folder / "mallory.ipynb", [*students.cells(), forged])
    batch = grade_batch(folder, config, tmp_path / "out", "self_attention")
    assert batch.graded == 2, problems(batch)
    assert rows(tmp_path / "out") == 2


def slow_class(folder: Path, count: int, seconds: float = 0.15, before: str = "") -> Path:
    """`count` correct notebooks that each sleep a little: a batch that takes a while."""
    folder.mkdir()
    for i in range(count):
        cells = students.cells()
        cells.insert(1, f"{before}import time\ntime.sleep({seconds})  # student {i}")
        write_notebook(folder / f"s{i:02d}.ipynb", cells)
    return folder


def start_halfway(command: list[str], out: Path, count: int) -> subprocess.Popen[bytes]:
    """Start a batch and return once its gradebook holds some, not all, of `count`."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "gradebook.sqlite").exists() and 2 <= rows(out) < count:
            break
        time.sleep(0.05)
    return process


@pytest.mark.slow
def test_killed_batch_resumes_with_every_submission_once(tmp_path: Path) -> None:
    count = 24
    folder = slow_class(tmp_path / "slow", count)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out), "-j", "2"]
    process = start_halfway(command, out, count)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    time.sleep(0.2)
    assert processes_with(str(folder)) == []  # its workers died with it
    halfway = rows(out)
    assert 2 <= halfway < count
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        students_graded = [r[0] for r in db.execute("SELECT student FROM submissions")]
        results = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert sorted(students_graded) == [f"s{i:02d}" for i in range(count)]
    assert results == count * 6


@pytest.mark.slow
def test_only_a_zip_gets_a_scratch_folder(
    config: Config, klass: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grader killed outright leaves its scratch folder behind: a folder of notebooks needs
    none, so none is made."""
    made: list[str] = []
    real = tempfile.TemporaryDirectory

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(str(kwargs.get("prefix")))
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_module.tempfile, "TemporaryDirectory", spy)
    grade_batch(klass, config, None, "self_attention")
    assert "grader-batch-" not in made
    archive = tmp_path / "class.zip"
    shutil.make_archive(str(archive.with_suffix("")), "zip", klass)
    batch = grade_batch(archive, config, None, "self_attention")
    assert made.count("grader-batch-") == 1 and batch.graded == 12


def test_zip_export(config: Config, tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(DEMO / "ada.ipynb", "adalovelace_101_9001_attention.ipynb")
        bundle.write(DEMO / "bruno.ipynb", "brunob_102_9002_attention.ipynb")
        bundle.write(DEMO / "chen.ipynb", "brunob_LATE_102_9010_attention-1.ipynb")
    batch = grade_batch(archive, config, tmp_path / "out", "self_attention")
    scores = {e.student: e.report.score for e in batch.entries if e.report}
    assert scores == {"adalovelace_101": 10, "brunob_102": 7.75}  # the later (LATE) one counts
    assert any("brunob_102: 2 submissions" in p for p in batch.problems)


def test_a_zips_notebooks_are_named_as_its_members(config: Config, tmp_path: Path) -> None:
    """The folder a .zip is unpacked into is gone once the batch ends: a problem, the
    gradebook and every output name each notebook as `archive.zip/member`, never by it."""
    import zipfile

    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(DEMO / "ada.ipynb", "export/adalovelace_101_9001_attention.ipynb")
        bundle.writestr("export/brunob_102_9002_attention.ipynb", "{ cut off")
    member = f"{archive}/export/brunob_102_9002_attention.ipynb"
    graded = f"{archive}/export/adalovelace_101_9001_attention.ipynb"
    batch = grade_batch(archive, config, None, "self_attention")
    assert [(e.student, e.problem.split(": ")[0]) for e in batch.entries if not e.report] == [
        ("brunob_102", member)
    ]
    assert [e.report.submission for e in batch.entries if e.report] == [graded]
    out = tmp_path / "out"
    command = ["grade", str(archive), "--out", str(out), "-a", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    assert f"{member}: not a Jupyter notebook" in result.output
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        stored = [*db.execute("SELECT path FROM submissions")]
        stored += db.execute("SELECT path FROM ungraded")
    assert sorted(path for (path,) in stored) == sorted([member, graded])
    written = [out / "grades.csv", out / "report.html", *out.glob("feedback/*.html")]
    assert member in (out / "grades.csv").read_text(encoding="utf-8")
    assert [p for p in written if "grader-batch-" in p.read_text(encoding="utf-8")] == []


@pytest.mark.slow
def test_without_kept_reports_entries_hold_scores_only(
    config: Config, klass: Path, tmp_path: Path
) -> None:
    whole = grade_batch(klass, config, tmp_path / "a", "self_attention")
    slim = grade_batch(klass, config, tmp_path / "b", "self_attention", keep_reports=False)
    for full, kept in zip(whole.entries, slim.entries, strict=True):
        assert (full.student, full.problem) == (kept.student, kept.problem)
        if full.report is None or kept.report is None:
            assert full.report is kept.report
            continue
        assert kept.report.score == full.report.score
        assert [(t.status, t.score) for t in full.report.targets] == [
            (t.status, t.score) for t in kept.report.targets
        ]
        assert all(k.messages == () for k in kept.report.targets)
    # The whole reports are still in the gradebook.
    book = Gradebook(tmp_path / "b" / "gradebook.sqlite")
    try:
        stored = dict(book.latest())
    finally:
        book.close()
    assert any(m for r in stored.values() for t in r.targets for m in t.messages)


@pytest.mark.slow
def test_at_most_a_few_submissions_per_worker_are_between_read_and_recorded(
    config: Config, klass: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_module, "IN_FLIGHT_PER_WORKER", 1)
    read, recorded, most = [0], [0], [0]
    real_read = batch_module._read

    def counting_read(job: Job, recorder: object) -> Job:
        read[0] += 1
        most[0] = max(most[0], read[0] - recorded[0])
        return real_read(job, recorder)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module, "_read", counting_read)
    batch = grade_batch(
        klass,
        config,
        tmp_path / "out",
        "self_attention",
        jobs=2,
        on_entry=lambda entry: recorded.__setitem__(0, recorded[0] + 1),
    )
    assert len(batch.entries) == read[0] > 2
    assert most[0] == 2  # one per worker: reading waited for judging


@pytest.mark.slow
def test_a_worker_killed_mid_batch_loses_nothing_and_hangs_nothing(
    config: Config, tmp_path: Path
) -> None:
    """A worker killed from outside (the system's OOM killer, an operator) is replaced by a
    fresh one and its student's run tried again: every student is graded as if nothing
    happened, and no process of the dead worker's survives."""
    count = 12
    spawn = "import subprocess\nsubprocess.Popen(['sleep', '27.1828'])\n"
    folder = slow_class(tmp_path / "slow", count, seconds=0.2, before=spawn)
    out = tmp_path / "out"
    killed: list[int] = []
    others = set(worker_pids())  # e.g. the one kept for single notebooks by earlier tests

    def kill_a_worker(entry: object) -> None:
        workers = [int(p) for p in set(worker_pids(started_here=True)) - others if not killed]
        if workers:
            killed.append(workers[0])
            os.kill(workers[0], signal.SIGKILL)

    started = time.monotonic()
    first = grade_batch(folder, config, out, "self_attention", jobs=2, on_entry=kill_a_worker)
    assert time.monotonic() - started < 30  # not stuck waiting for the dead worker
    assert killed and first.lost == [] and first.graded == count
    assert all(e.report and e.report.score == e.report.max_score for e in first.entries), [
        (e.student, e.problem, e.report and e.report.errors) for e in first.entries
    ]
    time.sleep(0.1)
    assert set(worker_pids()) - others == set()
    assert processes_with("27.1828") == []  # no student process outlived its worker
    assert rows(out) == count


def _parent(pid: str) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[1]  # the field after the state


def worker_pids(started_here: bool = False) -> list[str]:
    """This process's grader workers and what runs under them (other graders on the machine,
    another test run or an instructor's batch, are not counted); `started_here`: only the
    processes this one started (bubblewrap, or the worker itself without a sandbox)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError, IndexError):
            if b"grader.run.worker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            ancestor = _parent(pid)
            if started_here:
                found += [pid] if ancestor == str(os.getpid()) else []
                continue
            while ancestor not in ("0", "1", str(os.getpid())):
                ancestor = _parent(ancestor)
            found += [pid] if ancestor == str(os.getpid()) else []
    return found


@pytest.mark.slow
def test_ctrl_c_stops_the_batch_keeps_whole_submissions_and_says_how_to_go_on(
    tmp_path: Path,
) -> None:
    count = 24
    folder = slow_class(tmp_path / "slow", count)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out), "-j", "2"]
    process = start_halfway(command, out, count)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 130
    assert b"interrupted; what was graded is in" in stderr
    kept = rows(out)
    assert 2 <= kept < count
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        results = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert results == kept * 6  # whole submissions only
    assert processes_with(str(folder)) == []  # no worker left behind


def test_jobs_default_to_the_cores_this_process_may_use() -> None:
    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})  # as `taskset -c N` or a cpuset would
        assert available_cores() == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert available_cores() == len(allowed)


def test_day_old_scratch_folders_of_killed_graders_are_swept(tmp_path: Path) -> None:
    old = Path(tempfile.mkdtemp(prefix="grader-batch-"))
    fresh = Path(tempfile.mkdtemp(prefix="grader-child-"))
    other = Path(tempfile.mkdtemp(prefix="not-ours-"))
    try:
        (old / "extracted.ipynb").write_text("{}")
        two_days_ago = time.time() - 2 * 24 * 3600
        for folder in (old, other):
            os.utime(folder, (two_days_ago, two_days_ago))
        assert sweep_scratch() >= 1
        assert not old.exists()
        assert fresh.exists() and other.exists()  # a running grader's, and not a grader's
    finally:
        for folder in (old, fresh, other):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_workers_prepare_for_the_assignment_the_class_settles(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared_for: list[list[str]] = []
    real_pool = batch_module.Pool

    def spy(
        config: Config, requested: object, jobs: int, specs: list[Any], support: Any, *more: Any
    ) -> Any:
        prepared_for.append([s.id for s in specs])
        return real_pool(config, requested, jobs, specs, support, *more)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module, "Pool", spy)
    folder = tmp_path / "class"
    folder.mkdir()
    hint = {"grader": {"assignment": "masked_attention"}}
    write_notebook(folder / "a.ipynb", students.cells(), metadata=hint)
    write_notebook(folder / "b.ipynb", students.cells(), metadata=hint)
    grade_batch(folder, config, None)
    # c names no assignment: every assignment was prepared for it, though it is graded as
    # the class's like the rest (test_batch_settled.py)
    write_notebook(folder / "c.ipynb", students.cells())
    grade_batch(folder, config, None, force=True)
    grade_batch(folder, config, None, "self_attention", force=True)
    assert prepared_for == [["masked_attention"], ["masked_attention"], ["self_attention"]]


@pytest.mark.slow
def test_a_notebook_nested_too_deeply_is_one_problem_not_a_crash(
    config: Config, tmp_path: Path
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "honest.ipynb", students.cells())
    (folder / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    for assignment in ("self_attention", None):  # detection reads the notebooks too
        batch = grade_batch(folder, config, None, assignment)
        entries = {e.student: e for e in batch.entries}
        assert entries["deep"].report is None and "nested too deeply" in entries["deep"].problem
        honest = entries["honest"].report
        assert honest is not None and honest.score == honest.max_score


def test_a_grader_fault_on_one_file_is_reported_and_the_class_goes_on(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_load = pool_module.load_submission

    def fragile(path: Path, data: bytes | None = None) -> Any:
        if path.stem == "unlucky":
            raise ValueError("a bug in the loader")
        return real_load(path, data)

    monkeypatch.setattr(pool_module, "load_submission", fragile)
    folder = honest_class(tmp_path, "unlucky", "fine")
    out = tmp_path / "out"
    batch = grade_batch(folder, config, out, "self_attention")
    entries = {e.student: e for e in batch.entries}
    assert "grader fault" in entries["unlucky"].problem
    assert "a bug in the loader" in entries["unlucky"].problem
    assert entries["fine"].report is not None
    assert [e.student for e in batch.faults] == ["unlucky"]
    log = (out / FAULT_LOG).read_text()
    assert "unlucky" in log and "Traceback" in log and "in fragile" in log
    assert "fine" not in log


@pytest.mark.slow
def test_a_grader_fault_while_judging_one_notebook_is_logged_and_exits_3(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent's judging raising on one notebook (a grader bug a crafted notebook might
    find) costs that notebook its grade, not the class: logged whole, exit code 3."""
    real_finish = batch_module.finish

    def fragile(submission: Any, *args: Any) -> Any:
        if submission.path.stem == "unlucky":
            raise KeyError("a bug in the judge")
        return real_finish(submission, *args)

    monkeypatch.setattr(batch_module, "finish", fragile)
    folder = honest_class(tmp_path, "unlucky", "fine", "other")
    out = tmp_path / "out"
    command = ["grade", str(folder), "--out", str(out), "--assignment", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 3, result.output
    assert "1 submission hit a fault of the grader itself" in result.output
    assert f"{out / FAULT_LOG}" in result.output
    log = (out / FAULT_LOG).read_text()
    assert "--- " in log and "unlucky" in log and "KeyError: 'a bug in the judge'" in log
    with (out / "grades.csv").open() as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    assert "grader fault" in grades["unlucky"]["problem"]
    assert grades["fine"]["total"] == grades["fine"]["max_total"] == grades["other"]["total"]
    # Without --out the tracebacks go to the terminal.
    result = CliRunner().invoke(main, command[:2] + command[4:])
    assert result.exit_code == 3
    assert "--- unlucky" in result.output and "the tracebacks are above" in result.output


@pytest.mark.slow
def test_text_that_is_not_valid_unicode_costs_no_one_their_grade(tmp_path: Path) -> None:
    """A lone surrogate escaped in a notebook's JSON, and a file name that is not UTF-8,
    used to end the whole batch (a feedback page or the gradebook could not be written)."""
    folder = tmp_path / "class"
    folder.mkdir()
    odd = students.cells()
    odd[1] = "# pasted LONE from a broken PDF\n" + odd[1]
    path = write_notebook(folder / "odd.ipynb", odd)
    path.write_text(path.read_text().replace("LONE", "\\ud800"))  # a JSON escape, valid JSON
    write_notebook(folder / "honest.ipynb", students.cells())
    badly_named = Path(os.fsdecode(os.fsencode(folder) + b"/b\xffd.ipynb"))
    write_notebook(badly_named, students.cells())
    out = tmp_path / "out"
    command = ["grade", str(folder), "--out", str(out), "--assignment", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "b\ufffdd.ipynb: the file name is not valid UTF-8" in result.output
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(grades) == {"odd", "honest"}
    assert grades["odd"]["total"] == grades["odd"]["max_total"] == grades["honest"]["total"]
    page = (out / "feedback" / "odd.html").read_text(encoding="utf-8")
    assert "not valid Unicode" in page  # the note tells the student
    assert rows(out) == 2


@pytest.mark.slow
def test_a_feedback_page_that_cannot_be_written_keeps_the_grade_and_the_class_going(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = recorder_module.write_feedback

    def fragile(out: Path, student: str, *args: Any) -> Any:
        if student == "unlucky":
            raise RuntimeError("a bug in the page")
        return real_write(out, student, *args)

    monkeypatch.setattr(recorder_module, "write_feedback", fragile)
    folder = honest_class(tmp_path, "unlucky", "fine")
    out = tmp_path / "out"
    command = ["grade", str(folder), "--out", str(out), "--assignment", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 3
    assert "RuntimeError: a bug in the page" in (out / FAULT_LOG).read_text()
    assert sorted(p.stem for p in (out / "feedback").glob("*.html")) == ["fine"]
    assert rows(out) == 2  # both grades are in the gradebook
    monkeypatch.setattr(recorder_module, "write_feedback", real_write)
    assert CliRunner().invoke(main, command).exit_code == 0  # the rerun writes the page
    assert sorted(p.stem for p in (out / "feedback").glob("*.html")) == ["fine", "unlucky"]


@pytest.mark.slow
def test_every_student_gets_a_feedback_page_of_their_own(tmp_path: Path) -> None:
    """Names in other scripts, or differing only in punctuation, used to share one page (two
    Chinese names both became `student.html`): a student could read another's feedback."""
    names = ["王伟", "李娜", "Kim Park", "Kim_Park", "José"]
    folder = tmp_path / "class"
    folder.mkdir()
    for i, name in enumerate(names):
        broken = {"scaled_dot_product_self_attention": students.SCALE_HARDCODED} if i % 2 else {}
        write_notebook(folder / f"{name}.ipynb", students.cells(**broken))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["grade", str(folder), "--out", str(out), "-a", "self_attention"]
    )
    assert result.exit_code == 0, result.output
    pages = sorted((out / "feedback").glob("*.html"))
    assert len(pages) == len(names)
    for name in names:
        page = next(p for p in pages if f"<title>{name} — " in p.read_text(encoding="utf-8"))
        assert ("scale_hardcoded" in page.read_text()) == bool(names.index(name) % 2)
    report = (out / "report.html").read_text(encoding="utf-8")
    links = set(re.findall(r'href="(feedback/[^"]+)"', report))
    assert {unquote(link) for link in links} == {f"feedback/{p.name}" for p in pages}


def test_file_names_cannot_forge_lines_in_a_ci_log(tmp_path: Path) -> None:
    """Inside a student's folder the notebook's name is the student's to choose: a new line
    in it must not start a line of its own (GitHub reads `::error::` there), nor may an
    escape sequence reach the terminal."""
    folder = tmp_path / "class" / "eve"
    folder.mkdir(parents=True)
    write_notebook(folder / "a.ipynb", students.cells())
    write_notebook(folder / "b\n::error file=grades.csv::forged\x1b[2J.ipynb", students.cells())
    (tmp_path / "class" / "mallory\n::warning::x").mkdir()  # a folder without a notebook
    result = CliRunner().invoke(main, ["grade", str(tmp_path / "class"), "-a", "self_attention"])
    assert result.exit_code == 0, result.output
    assert "eve: 2 submissions" in result.output and "mallory?::warning::x/" in result.output
    assert not any(line.startswith("::") for line in result.output.splitlines())
    assert "\x1b" not in result.output


def test_a_link_to_the_solution_earns_nothing(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "repos"
    (folder / "bob").mkdir(parents=True)
    (folder / "bob" / "hw.ipynb").symlink_to(REPO / "solutions" / "self_attention.ipynb")
    write_notebook(folder / "ada.ipynb", students.cells())
    elsewhere = write_notebook(tmp_path / "carl.ipynb", students.cells())
    (folder / "carl.ipynb").symlink_to(elsewhere)  # the instructor's own link: followed
    monkeypatch.chdir(tmp_path)
    batch = grade_batch(Path("repos"), config, None, "self_attention")
    graded = {e.student: e for e in batch.entries if e.report and e.report.score == 10}
    assert sorted(graded) == ["ada", "carl"] and len(batch.entries) == 2
    assert graded["ada"].path == Path("repos/ada.ipynb")  # named as given, not resolved
    assert any(p.startswith("bob/hw.ipynb: a symbolic link") for p in batch.problems)
    # A link put in place after the folder was listed is not read through either.
    swapped = folder / "ada.ipynb"
    swapped.unlink()
    swapped.symlink_to(REPO / "solutions" / "self_attention.ipynb")
    job = batch_module._read(Job("ada", swapped), Recorder(Batch(), None, None, "", None))
    assert job.data == b"" and "cannot be read" in job.problem


@pytest.mark.slow
def test_one_notebook_cannot_choose_the_assignment_it_is_marked_on(tmp_path: Path) -> None:
    """Without --assignment the batch is graded as the one assignment most of its notebooks
    look like. A student who hands in the textbook's notebook (udl_12_1, solved online) used
    to earn its full marks, and, named first, to turn grades.csv and the report into that
    assignment's for the whole class; later its full marks stayed in the gradebook and on
    the feedback page. It is graded as self_attention: what its functions earn there."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bruno", "chen"):
        shutil.copy(DEMO / f"{name}.ipynb", folder)
    shutil.copy(REPO / "solutions" / "udl_12_1.ipynb", folder / "aaron.ipynb")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0])[1:3] == ["qkv_loop", "softmax"]  # self_attention's columns
    aaron = next(row for row in table if row["student"] == "aaron")
    assert aaron["problem"] == "" and float(aaron["total"]) < float(aaron["max_total"]) == 10
    page = (out / "feedback" / "aaron.html").read_text()
    assert "the class&#39;s (most of its notebooks are), though this notebook looks like" in page
    ada = next(row for row in table if row["student"] == "ada")
    assert float(ada["total"]) == float(ada["max_total"]) == 10
    assert "<title>self_attention — class report</title>" in (out / "report.html").read_text()


def test_an_untouched_copy_of_the_exercise_is_not_preferred_to_the_students_work(
    config: Config, tmp_path: Path
) -> None:
    """A cloned repository often holds the exercise as handed out beside the student's own
    notebook; the later name (self_attention.ipynb after answers.ipynb) used to be graded."""
    exercise = REPO / "exercises" / "self_attention.ipynb"
    repos = tmp_path / "repos"
    for student in ("ann", "ben"):
        (repos / student).mkdir(parents=True)
        shutil.copy(exercise, repos / student / "self_attention.ipynb")
    write_notebook(repos / "ann" / "answers.ipynb", students.cells())
    batch = grade_batch(repos, config, None, "self_attention")
    scores = {e.student: e.report.score for e in batch.entries if e.report}
    assert scores == {"ann": 10, "ben": 0}  # ben handed in nothing else: the copy is graded
    said = [p for p in batch.problems if p.startswith("ann:")]
    assert said == [
        "ann: 2 submissions (ann/answers.ipynb, ann/self_attention.ipynb); graded the last "
        "that is not the exercise as given, answers.ipynb"
    ]


def test_the_next_notebook_is_parsed_while_its_worker_runs_the_one_before(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one worker, the second notebook is read and parsed while the first still runs,
    so the worker does not wait for the parse between two notebooks."""
    first_running, parsed_second, release = (threading.Event() for _ in range(3))
    real_load = pool_module.load_submission

    def load(path: Path, data: bytes | None = None) -> Any:
        submission = real_load(path, data)
        if path.stem == "b":
            parsed_second.set()
        return submission

    def execute(self: Any, job: Job, *rest: Any) -> Any:
        if job.student == "a":
            first_running.set()
            assert release.wait(30)
        return workers_module.unstarted_run("not run in this test")

    monkeypatch.setattr(pool_module, "load_submission", load)
    monkeypatch.setattr(pool_module, "Workers", lambda *args, **kwargs: Stopped())
    monkeypatch.setattr(pool_module.Pool, "execute", execute)
    folder = honest_class(tmp_path, "a", "b")
    spec = config.assignment("self_attention")
    pool = pool_module.Pool(config, spec.id, 1, [spec], bwrap.Support(False, "test"))
    try:
        paths = {name: folder / f"{name}.ipynb" for name in ("a", "b")}
        done = [pool.submit(Job(name, path, path.read_bytes())) for name, path in paths.items()]
        assert first_running.wait(30)
        assert parsed_second.wait(10), "the second notebook waited for the first to finish"
        release.set()
        assert [d.result(30).job.student for d in done] == ["a", "b"]
    finally:
        release.set()
        pool.close()


def test_a_pool_hands_the_interpreter_lock_round_often_while_it_is_open(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job thread woken to hand a worker its next notebook gets the lock within
    SWITCH_SECONDS, not Python's 5 ms, while the main thread judges; as before once closed."""
    monkeypatch.setattr(pool_module, "Workers", lambda *args, **kwargs: Stopped())
    before = sys.getswitchinterval()
    spec = config.assignment("self_attention")
    pool = pool_module.Pool(config, spec.id, 1, [spec], bwrap.Support(False, "test"))
    try:
        assert sys.getswitchinterval() == min(before, pool_module.SWITCH_SECONDS) < 0.005
    finally:
        pool.close()
    assert sys.getswitchinterval() == before


class Stopped:
    """Workers that are never started (for a pool whose jobs are not run)."""

    def close(self) -> None:
        """Nothing to stop."""


def test_a_notebook_killed_by_nothing_the_grader_can_name_is_graded_again_next_run(
    tmp_path: Path,
) -> None:
    """A SIGKILL the grader cannot name (not its time limit, not the memory cgroup) may be
    an administrator's or the host's: the zero was kept run after run as the notebook's
    own. Here the notebook kills itself (outside the sandbox a process may; inside it, the
    first process of its PID namespace cannot): each run grades it again, while a notebook
    that merely failed is kept from the gradebook."""
    course = tmp_path / "course"
    write_fast_course(course)
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    kill = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
    write_notebook(folder / "ada.ipynb", [*students.cells(), kill])
    write_notebook(folder / "bo.ipynb", [*students.cells(), "raise SystemExit(4)"])
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    command += ["--out", str(out), "--sandbox", "none"]
    first = CliRunner().invoke(main, command)
    assert "2 graded, 0 unchanged" in first.output, first.output
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        assert float(next(csv.DictReader(handle))["total"]) == 0
    page = (out / "feedback" / "ada.html").read_text(encoding="utf-8")
    assert "killed by a signal the grader did not send" in page
    second = CliRunner().invoke(main, command)
    assert "1 graded, 1 unchanged" in second.output, second.output
