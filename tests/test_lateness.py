"""Deadlines and the late policy: the penalty rule, the config keys, extensions, where a
submission's time comes from, and lateness in every output of a graded class."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from grader.batch.lateness import (
    CANVAS_FLAG,
    MAX_EXTENSION_HOURS,
    MTIME,
    Handed,
    copied_files,
    copied_time,
    handed_in,
    late_of,
    load_extensions,
    read_submitted_at,
)
from grader.cli import main
from grader.course.config import load_config
from grader.course.deadline import LatePolicy, lateness
from grader.errors import ConfigError, UsageError

import students
from conftest import canvas_students, repo_config_raw, write_notebook

ZONE = timezone(timedelta(hours=1))
DUE = datetime(2026, 3, 1, 23, 59, tzinfo=ZONE)
POLICY = LatePolicy(
    DUE, grace_minutes=15, percent=10, per="hour", cap=50, cutoff=DUE + timedelta(days=3)
)


def test_the_penalty_counts_started_periods_after_the_grace_up_to_the_cap() -> None:
    assert lateness(POLICY, DUE - timedelta(hours=2)).percent == 0
    within = lateness(POLICY, DUE + timedelta(minutes=10))
    assert (within.percent, within.minutes) == (0, 10) and "grace" in within.note
    # 1 h 20 min late: two started hours at 10% each.
    two = lateness(POLICY, DUE + timedelta(minutes=80))
    assert two.percent == 2 * POLICY.percent and two.minutes == 80
    assert "2 hours × 10% per hour" in two.note
    capped = lateness(POLICY, DUE + timedelta(hours=30))
    assert capped.percent == POLICY.cap and "capped at 50%" in capped.note
    cut = lateness(POLICY, DUE + timedelta(days=3, minutes=1))
    assert cut.percent == 100 and cut.apply(7.0) == 0 and "cut-off" in cut.note
    daily = LatePolicy(DUE, percent=5, per="day")
    assert lateness(daily, DUE + timedelta(hours=25)).percent == 2 * daily.percent


UNIT_SECONDS = {"day": 86400, "days": 86400, "h": 3600, "min": 60, "s": 1}


@pytest.mark.parametrize("per", ["hour", "day"])
def test_the_time_said_late_never_reads_as_fewer_periods_than_are_charged(per: str) -> None:
    """A note said "3.0 h after the due date" beside "4 hours × 10%" (it was 3 h 1 min):
    the time said, read back, now starts as many periods as the penalty charges."""
    policy = LatePolicy(DUE, percent=1, per=per, cap=100)  # type: ignore[arg-type]
    period = 3600 if per == "hour" else 86400
    for whole in (1, 2, 3, 47, 49, 71):
        for seconds in (-1, -0.4, 0, 0.3, 1, 59, 61, 3599):
            at = DUE + timedelta(seconds=whole * 3600 + seconds)
            late = lateness(policy, at)
            said = re.search(r", (.+?) after the due date", late.note)
            assert said, late.note
            parts = said.group(1).split()
            shown = sum(
                int(n) * UNIT_SECONDS[u] for n, u in zip(parts[::2], parts[1::2], strict=True)
            )
            assert math.ceil(shown / period) == late.percent, late.note
    assert ", 3 h 1 min after" in lateness(policy, DUE + timedelta(hours=3, minutes=1)).note


def test_an_extension_moves_the_due_date_and_the_cut_off() -> None:
    at = DUE + timedelta(days=3, hours=1)
    assert lateness(POLICY, at).percent == 100
    moved = lateness(POLICY, at, extension_hours=72)
    assert moved.minutes == 60 and moved.percent == POLICY.percent
    assert "extension of 72 h" in moved.note
    assert lateness(POLICY, DUE + timedelta(hours=47), extension_hours=48).percent == 0


def course_with(tmp_path: Path, **keys: Any) -> Path:
    """A course folder whose self_attention assignment has the given extra keys."""
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(keys)
    folder = tmp_path / "course"
    folder.mkdir(exist_ok=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder / "config.yaml"


def test_the_config_reads_a_due_date_quoted_or_not_and_the_policy(tmp_path: Path) -> None:
    late = {
        "grace": 15,
        "percent": 10,
        "per": "hour",
        "cap": 50,
        "cutoff": "2026-03-04T23:59+01:00",
    }
    quoted = load_config(course_with(tmp_path, due="2026-03-01T23:59:00+01:00", late=late))
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(due=DUE, late=late, keep="best")
    bare = tmp_path / "bare" / "config.yaml"
    bare.parent.mkdir()
    bare.write_text(yaml.safe_dump(raw))
    assert "due: 2026-03-01 23:59:00+01:00" in bare.read_text()  # unquoted: YAML's own time
    for config in (quoted, load_config(bare)):
        assert config.assignments["self_attention"].late == POLICY
    assert load_config(bare).assignments["self_attention"].keep == "best"
    assert quoted.assignments["self_attention"].keep == "latest"
    assert quoted.assignments["masked_attention"].late is None


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"due": "2026-03-01T23:59:00"}, "assignments.self_attention.due: not an ISO 8601 time"),
        (
            {"due": "next monday"},
            "assignments.self_attention.due: not an ISO 8601 time with a zone: 'next monday' "
            "is not a date and time (write it as 2026-03-01T23:59:00+01:00)",
        ),
        ({"late": {"percent": 10}}, "assignments.self_attention.late: a late policy needs `due`"),
        (
            {"due": "2026-03-01T23:59:00+01:00", "late": {"cutoff": "2026-02-01T00:00:00Z"}},
            "assignments.self_attention.late.cutoff: before `due`",
        ),
        (
            {"due": "2026-03-01T23:59:00+01:00", "late": {"percent": 120}},
            "assignments.self_attention.late.percent: must be ≤ 100, not 120",
        ),
        (
            {"due": "2026-03-01T23:59:00+01:00", "late": {"per": "week"}},
            "assignments.self_attention.late.per: must be one of 'hour', 'day', not 'week'",
        ),
        ({"keep": "first"}, "assignments.self_attention.keep: must be one of"),
    ],
)
def test_a_bad_deadline_names_its_key_path_and_exits_2(
    tmp_path: Path, keys: dict[str, Any], said: str
) -> None:
    path = course_with(tmp_path, **keys)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert said in str(caught.value) and caught.value.exit_code == 2


def test_extensions_come_from_the_roster_column_and_extensions_csv(tmp_path: Path) -> None:
    (tmp_path / "roster.csv").write_text("id,name,extension_hours\ns1,Ada,24\ns2,Bo,\ns3,Cy,6\n")
    assert load_extensions(tmp_path) == {"s1": 24.0, "s3": 6.0}
    (tmp_path / "extensions.csv").write_text("student,hours\ns3,48\ns2,2.5\n")
    assert load_extensions(tmp_path) == {"s1": 24.0, "s3": 48.0, "s2": 2.5}  # the file wins
    (tmp_path / "extensions.csv").write_text("student,hours\ns3,two days\n")
    with pytest.raises(ConfigError, match=r"extensions.csv line 2: 'two days' is not a number"):
        load_extensions(tmp_path)


def test_an_extension_is_matched_to_the_roster_as_submissions_are(tmp_path: Path) -> None:
    # `S1` for the roster's `s1` was silently nobody's extension, as was a typo's.
    (tmp_path / "roster.csv").write_text("id,name\ns1,Ada\ns2,Bo\n")
    (tmp_path / "extensions.csv").write_text("student,hours\nS1,48\n")
    assert load_extensions(tmp_path) == {"s1": 48.0}
    (tmp_path / "extensions.csv").write_text("student,hours\ns1,48\nsl,24\n")
    with pytest.raises(ConfigError) as caught:
        load_extensions(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'extensions.csv'} line 3: 'sl' is not on the roster"
    (tmp_path / "roster.csv").unlink()  # without a roster, the names are the submissions'
    assert load_extensions(tmp_path) == {"s1": 48.0, "sl": 24.0}


@pytest.mark.parametrize("hours", ["nan", "inf", "1e12", "-48"])
def test_an_extension_that_is_no_hours_from_0_to_a_century_is_one_line(
    tmp_path: Path, hours: str
) -> None:
    # NaN, an infinity or 1e12 h once cost that student a grader fault (an overflow, exit 3);
    # a negative one made them late without a word.
    (tmp_path / "extensions.csv").write_text(f"student,hours\ns1,12\ns3,{hours}\n")
    with pytest.raises(ConfigError) as caught:
        load_extensions(tmp_path)
    path = tmp_path / "extensions.csv"
    assert str(caught.value) == (
        f"{path} line 3: {hours!r} is not a number of hours from 0 to {MAX_EXTENSION_HOURS}"
    )
    (tmp_path / "extensions.csv").write_text(f"student,hours\ns3,{MAX_EXTENSION_HOURS}\n")
    longest = load_extensions(tmp_path)["s3"]
    assert lateness(POLICY, DUE + timedelta(hours=longest), extension_hours=longest).percent == 0


def test_submitted_at_reads_student_timestamp_and_names_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text("student,timestamp\ns1,2026-03-02T01:00:00+01:00\n")
    assert read_submitted_at(path) == {"s1": DUE + timedelta(minutes=61)}
    path.write_text("student,timestamp\ns1,2026-03-02T01:00:00+01:00\ns2,2026-03-02 01:00\n")
    with pytest.raises(UsageError, match=r"times.csv line 3: .* has no time zone"):
        read_submitted_at(path)


def test_the_time_comes_from_the_best_source_there_is(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    given = {"s1": DUE + timedelta(hours=5)}
    plain = write_notebook(folder / "ada.ipynb", students.cells())
    assert handed_in(("s1", "ada"), plain, folder, given, DUE) == Handed(
        given["s1"], "--submitted-at"
    )
    board = write_notebook(folder / "hw1_bo_attempt_2026-03-02-02-00-00_hw.ipynb", [])
    assert handed_in(("s2",), board, folder, {}, DUE).at == DUE + timedelta(hours=2, minutes=1)
    on_time = write_notebook(folder / "lovelaceada_4242_77_hw.ipynb", [])
    canvas = handed_in(("s1",), on_time, folder, {}, DUE)
    assert canvas.at is None and late_of(POLICY, canvas, 0).percent == 0
    # Canvas says late, the file's time (the last resort) says on time: charged as late.
    flagged = write_notebook(folder / "chenbo_LATE_5151_78_hw.ipynb", [])
    os.utime(flagged, (DUE.timestamp() - 60, DUE.timestamp() - 60))
    late = handed_in(("s2",), flagged, folder, {}, DUE)
    assert late.source.startswith(MTIME) and "_LATE_" in late.source
    charged = late_of(POLICY, late, 0)
    assert charged.percent == POLICY.percent and "modification time" in charged.note
    # the time charged is Canvas's flag's, not one the student handed in at (r55)
    assert charged.note.startswith("flagged _LATE_ by Canvas, so charged as handed in ")
    os.utime(flagged, (DUE.timestamp() + 7200, DUE.timestamp() + 7200))
    later = late_of(POLICY, handed_in(("s2",), flagged, folder, {}, DUE), 0)
    assert later.note.startswith("handed in ") and later.percent == 2 * POLICY.percent


def test_a_cloned_repository_gives_its_last_commit_touching_the_notebook(tmp_path: Path) -> None:
    clone = tmp_path / "class" / "adal"
    clone.mkdir(parents=True)
    notebook = write_notebook(clone / "hw.ipynb", students.cells())
    when = "2026-03-02T03:30:00+01:00"
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@b"]
    subprocess.run([*git, "init", "-q"], cwd=clone, check=True)
    subprocess.run([*git, "add", "hw.ipynb"], cwd=clone, check=True)
    subprocess.run([*git, "commit", "-qm", "hw"], cwd=clone, check=True, env=env)
    os.utime(notebook, (0, 0))  # a clone's file times say nothing
    handed = handed_in(("s1",), notebook, tmp_path / "class", {}, DUE)
    assert handed == Handed(DUE + timedelta(hours=3, minutes=31), handed.source)
    assert "git commit" in handed.source


LATE_KEYS = {
    "due": "2026-03-01T23:59:00+01:00",
    "late": {"grace": 15, "percent": 10, "per": "hour", "cap": 50},
}


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_lateness_is_in_grades_csv_feedback_report_and_exports(tmp_path: Path) -> None:
    config = course_with(tmp_path, **LATE_KEYS)
    course = config.parent
    (course / "roster.csv").write_text(
        "id,name,email,section,lms_id,extension_hours\n"
        "s1,Ada Lovelace,ada@uni.edu,A,4242,\ns2,Bo Chen,bo@uni.edu,A,5151,\n"
        "s3,Cy Diaz,cy@uni.edu,B,6161,24\ns4,Di Eng,di@uni.edu,B,7171,\n"
    )
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_1_hw.ipynb", students.cells())
    late = write_notebook(folder / "chenbo_LATE_5151_2_hw.ipynb", students.cells())
    stamp = (DUE + timedelta(hours=2)).timestamp()
    os.utime(late, (stamp, stamp))
    write_notebook(folder / "diazcy_LATE_6161_3_hw.ipynb", students.cells())
    times = tmp_path / "times.csv"
    times.write_text(f"student,timestamp\ns3,{(DUE + timedelta(hours=26)).isoformat()}\n")
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    result = CliRunner().invoke(main, [*command, "--out", str(out), "--submitted-at", str(times)])
    assert result.exit_code == 0, result.output
    assert "1 submission time(s) taken from the file's modification time" in result.stderr
    assert "(s2)" in result.stderr
    rows = {row["student"]: row for row in read_rows(out / "grades.csv")}
    full = float(rows["s1"]["max_total"])
    two_hours = 2 * POLICY.percent
    assert float(rows["s1"]["total"]) == full and float(rows["s1"]["late_penalty"]) == 0
    for late_one in ("s2", "s3"):  # s3: 26 h late, 24 h of them an extension
        assert float(rows[late_one]["late_penalty"]) == two_hours
        assert float(rows[late_one]["total"]) == pytest.approx(full * (1 - two_hours / 100))
        assert float(rows[late_one]["autograded"]) == full
    assert "extension of 24 h" in rows["s3"]["lateness"]
    assert "--submitted-at" in rows["s3"]["lateness"]
    assert "modification time" in rows["s2"]["lateness"]
    assert rows["s4"]["problem"] == "no submission" and rows["s4"]["lateness"] == ""
    page = (out / "feedback" / "s2.html").read_text()
    assert "late penalty 20%" in page and f"{full * 0.8:g} / {full:g}" in page
    report = (out / "report.html").read_text()
    assert "late penalty 20%" in report
    # An override of the total replaces the penalised value; the export agrees.
    reason = ["--comment", "illness, excused", "--results", str(out)]
    done = CliRunner().invoke(main, ["override", "s2", "--points", str(full), *reason])
    assert done.exit_code == 0, done.output
    export = tmp_path / "canvas.csv"
    done = CliRunner().invoke(
        main,
        [
            "export",
            "--format",
            "canvas",
            "--results",
            str(out),
            "--out",
            str(export),
            "--course",
            str(course),
        ],
    )
    assert done.exit_code == 0, done.output
    imported = canvas_students(export.read_text())
    exported = {row["SIS User ID"]: float(row["self_attention"]) for row in imported}
    assert exported == {
        "s1": full,
        "s2": full,
        "s3": pytest.approx(full * (1 - two_hours / 100)),
        "s4": 0,
    }
    # A regrade (nothing changed) keeps lateness from the gradebook and the override.
    result = CliRunner().invoke(main, [*command, "--out", str(out), "--submitted-at", str(times)])
    rows = {row["student"]: row for row in read_rows(out / "grades.csv")}
    assert float(rows["s3"]["late_penalty"]) == two_hours and float(rows["s2"]["total"]) == full


def test_file_times_of_a_copy_are_no_hand_in_times(tmp_path: Path) -> None:
    """A file modified within a minute of two others or more is a copy's (`cp -r` after the
    due date charged the whole class past the cut-off, r55), whatever the rest (r56: one
    straggler turned the rule off for everyone)."""
    at = (DUE + timedelta(days=5)).timestamp()
    files = []
    for i, seconds in enumerate((0, 20, 40, 3600, 3630, 9000)):
        files.append(write_notebook(tmp_path / f"s{i}.ipynb", []))
        os.utime(files[-1], (at + seconds, at + seconds))
    assert copied_files(files) == set(files[:3])  # the last three: two within a minute, one
    os.utime(files[5], (at + 3650, at + 3650))
    assert copied_files(files) == set(files[:3]) | set(files[3:])
    assert copied_files(files[:2]) == set()
    unknown = copied_time(Handed(DUE + timedelta(days=5), MTIME))
    late = late_of(POLICY, unknown, 0)
    assert unknown.at is None and late.percent == 0
    assert late.note.startswith("no late penalty taken: ") and "--submitted-at" in late.note
    # Canvas's _LATE_ flag stays: charged as late by a second past the grace, as before
    flagged = copied_time(Handed(DUE + timedelta(days=5), f"{MTIME}{CANVAS_FLAG}"))
    charged = late_of(POLICY, flagged, 0)
    assert charged.percent == POLICY.percent and "_LATE_" in charged.note
    # a Canvas name without the flag is on time, whatever the word _LATE_ in its source
    on_time = Handed(None, "the Canvas export (not flagged _LATE_)")
    assert late_of(POLICY, on_time, 0).percent == 0


@pytest.mark.slow
@pytest.mark.parametrize("apart", [0, 3600])
def test_a_class_copied_after_the_due_date_is_not_charged_late(tmp_path: Path, apart: int) -> None:
    config = course_with(tmp_path, **LATE_KEYS)
    folder = tmp_path / "class"
    folder.mkdir()
    stamp = (DUE + timedelta(days=4)).timestamp()  # past the cap
    for i, name in enumerate(("ada", "bo", "cy")):
        notebook = write_notebook(folder / f"{name}.ipynb", students.cells())
        os.utime(notebook, (stamp + i * apart, stamp + i * apart))
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(config.parent), "-a", "self_attention"]
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "grades.csv")
    penalties = [float(row["late_penalty"]) for row in rows]
    if apart:  # an hour apart: hand-in times, charged (days late: the cap)
        assert penalties == [float(POLICY.cap)] * 3, penalties
        assert "3 submission time(s) taken" in result.stderr
        return
    assert penalties == [0.0] * 3 and all(row["total"] == row["autograded"] for row in rows)
    assert all("a copy's" in row["lateness"] for row in rows)
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 1 and "within one span of 60 s with 2 others" in warned[0], result.stderr
    assert "(ada, bo, cy)" in warned[0] and "taken from the file's modification time" not in (
        result.stderr
    )
    # a straggler copied two hours later is timed by its file; the three stay a copy (r56)
    dan = write_notebook(folder / "dan.ipynb", students.cells())
    os.utime(dan, (stamp + 7200, stamp + 7200))
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    rows = {row["student"]: row for row in read_rows(out / "grades.csv")}
    assert [float(rows[s]["late_penalty"]) for s in ("ada", "bo", "cy", "dan")] == [
        0.0,
        0.0,
        0.0,
        float(POLICY.cap),
    ]
    straggler = "1 submission time(s) taken from the file's modification time, the last resort"
    assert f"{straggler} (dan)" in result.stderr


@pytest.mark.slow
def test_a_class_copied_again_keeps_the_file_times_graded_before(tmp_path: Path) -> None:
    """Graded with the files' own times (10, 20, 30% late), then copied unchanged with
    `cp -r`: the copy's times erased every penalty of "unchanged" submissions (r56)."""
    config = course_with(tmp_path, **LATE_KEYS)
    folder = tmp_path / "class"
    folder.mkdir()
    names = ("ada", "bo", "cy")
    for hours, name in enumerate(names, start=1):
        notebook = write_notebook(folder / f"{name}.ipynb", students.cells())
        stamp = (DUE + timedelta(hours=hours)).timestamp()
        os.utime(notebook, (stamp, stamp))
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(config.parent), "-a", "self_attention"]
    first = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert first.exit_code == 0, first.output
    charged = [10.0, 20.0, 30.0]
    assert [float(r["late_penalty"]) for r in read_rows(out / "grades.csv")] == charged
    copied = (DUE + timedelta(days=9)).timestamp()
    for name in names:
        os.utime(folder / f"{name}.ipynb", (copied, copied))
    again = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert [float(r["late_penalty"]) for r in read_rows(out / "grades.csv")] == charged
    assert "a copy's times" not in again.stderr  # each time is known: the one graded before


@pytest.mark.slow
def test_a_copys_own_time_stored_before_is_no_hand_in_time(tmp_path: Path) -> None:
    """Two copied files (no copy told: too few) were charged by the copy's time and stored
    it; a third copied with them makes it a copy, and the stored time, the copy's own, is
    not taken as the file's (r57; so are a gradebook's from before copies were told)."""
    config = course_with(tmp_path, **LATE_KEYS)
    folder = tmp_path / "class"
    folder.mkdir()
    copied = (DUE + timedelta(days=9)).timestamp()
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(config.parent), "-a", "self_attention"]
    for names in (("ada", "bo"), ("cy",)):
        for name in names:
            notebook = write_notebook(folder / f"{name}.ipynb", students.cells())
            os.utime(notebook, (copied, copied))
        result = CliRunner().invoke(main, [*command, "--out", str(out)])
        assert result.exit_code == 0, result.output
        penalties = [float(r["late_penalty"]) for r in read_rows(out / "grades.csv")]
        assert penalties == ([float(POLICY.cap)] * 2 if len(names) == 2 else [0.0] * 3)
    assert "(ada, bo, cy)" in result.stderr
