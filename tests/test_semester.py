"""Issue 18's "done when": a semester end to end. A roster of 40, a Canvas export with late
files, resubmissions and one student missing, two extensions, one override with a comment, a
regrade after the late policy changes; the Canvas import has exactly 40 rows with the right
penalties and the override, feedback pages show penalty and comment, the report's totals
are the export's, and a name that looks like a formula comes out inert."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

import students
from conftest import canvas_students, repo_config_raw, write_notebook

DUE = datetime(2026, 3, 1, 23, 59, tzinfo=timezone(timedelta(hours=1)))
GRACE, CAP, CUTOFF_DAYS = 15, 50, 3
FORMULA = "=1+2"  # a student's name, as a spreadsheet would run it
# Hours late (after the due date) of the late students, and the extensions.
GIVEN_LATE = {"s02": 1.5, "s03": 30, "s05": 25.5, "s06": 30, "s07": 24 * 4}
MTIME_LATE = {"s04": 5}
EXTENSIONS = {"s05": 24, "s06": 48}
MISSING = "s39"


def write_course(folder: Path, percent: float) -> Path:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(
        due=DUE.isoformat(),
        late={
            "grace": GRACE,
            "percent": percent,
            "per": "hour",
            "cap": CAP,
            "cutoff": (DUE + timedelta(days=CUTOFF_DAYS)).isoformat(),
        },
    )
    folder.mkdir(exist_ok=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def roster(course: Path) -> list[dict[str, str]]:
    rows = []
    for i in range(1, 41):
        sid = f"s{i:02d}"
        name = FORMULA if i == 40 else f"Ann{i:02d} Lee{i:02d}"
        extension = str(EXTENSIONS.get(sid, ""))
        rows.append(
            {"id": sid, "name": name, "email": f"{sid}@uni.edu", "section": "AB"[i % 2]}
            | {"lms_id": str(1000 + i), "extension_hours": extension}
        )
    with (course / "roster.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def canvas_export(folder: Path, rows: list[dict[str, str]]) -> Path:
    """The class as Canvas exports it: `lastfirst[_LATE]_userid_submissionid_file`."""
    folder.mkdir()
    for number, row in enumerate(rows):
        sid = row["id"]
        if sid == MISSING:
            continue
        canvas = "".join(reversed(row["name"].lower().split())).replace("=", "x")
        late = "_LATE" if sid in GIVEN_LATE or sid in MTIME_LATE else ""
        code = students.cells(**students.VARIANTS[number % len(students.VARIANTS)])
        code[0] += f"\n# {sid}"
        path = folder / f"{canvas}{late}_{row['lms_id']}_{500 + number}_attention.ipynb"
        write_notebook(path, code)
        if sid in MTIME_LATE:
            stamp = (DUE + timedelta(hours=MTIME_LATE[sid])).timestamp()
            os.utime(path, (stamp, stamp))
    # Resubmissions: s08's second try is worse than the first, s09's better; the latest counts.
    for sid, first, then in (
        ("s08", {}, {"softmax_cols": students.SOFTMAX_COLS_WRONG_AXIS}),
        ("s09", {"softmax_cols": students.SOFTMAX_COLS_WRONG_AXIS}, {}),
    ):
        lms = str(1000 + int(sid[1:]))
        for old in folder.glob(f"*_{lms}_*"):
            old.unlink()
        write_notebook(
            folder / f"lee{sid[1:]}ann{sid[1:]}_{lms}_700_attention.ipynb", students.cells(**first)
        )
        write_notebook(
            folder / f"lee{sid[1:]}ann{sid[1:]}_{lms}_800_attention-1.ipynb", students.cells(**then)
        )
    return folder


def expected_percent(sid: str, percent: float) -> float:
    """The penalty the policy means, worked out here from its words: lateness counts from
    the due date plus the extension; the grace costs nothing; every started hour costs
    `percent`, up to the cap; past the cut-off (plus the extension) everything."""
    hours = GIVEN_LATE.get(sid, MTIME_LATE.get(sid, 0)) - EXTENSIONS.get(sid, 0)
    if hours <= GRACE / 60:
        return 0
    if hours > CUTOFF_DAYS * 24:
        return 100
    return min(CAP, percent * math.ceil(hours))


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.slow
def test_a_semester_end_to_end(tmp_path: Path) -> None:
    course = write_course(tmp_path / "course", percent=10)
    rows = roster(course)
    folder = canvas_export(tmp_path / "canvas", rows)
    times = tmp_path / "times.csv"
    times.write_text(
        "student,timestamp\n"
        + "".join(f"{s},{(DUE + timedelta(hours=h)).isoformat()}\n" for s, h in GIVEN_LATE.items())
    )
    out = tmp_path / "results"
    grade = ["grade", str(folder), "--course", str(course), "--out", str(out)]
    grade += ["-a", "self_attention", "--submitted-at", str(times)]
    result = CliRunner().invoke(main, grade)
    assert result.exit_code == 0, result.output
    assert "1 submission time(s) taken from the file's modification time" in result.stderr
    assert "the last resort (s04)" in result.stderr
    assert "graded the last, lee08ann08_1008_800_attention-1.ipynb" in result.stderr

    comment = "doctor's note: full marks"
    override = ["override", "s02", "--points", "9", "--comment", comment, "--results", str(out)]
    assert CliRunner().invoke(main, [*override, "--course", str(course)]).exit_code == 0

    def check(percent: float) -> None:
        grades = {r["student"]: r for r in read_csv((out / "grades.csv").read_text())}
        export = tmp_path / "canvas-import.csv"
        command = ["export", "--format", "canvas", "--results", str(out), "--out", str(export)]
        done = CliRunner().invoke(main, [*command, "--course", str(course)])
        assert done.exit_code == 0, done.output
        imported = canvas_students(export.read_text())
        assert len(imported) == 40
        assert [r["SIS User ID"] for r in imported] == [r["id"] for r in rows]
        for row in imported:
            sid = row["SIS User ID"]
            autograded = float(grades[sid]["autograded"])
            want = autograded * (1 - expected_percent(sid, percent) / 100)
            if sid == "s02":
                want = 9.0  # the override replaces the penalised value
            if sid == MISSING:
                assert grades[sid]["problem"] == "no submission" and autograded == 0
            assert float(row["self_attention"]) == pytest.approx(want, abs=1e-4), sid
            assert float(grades[sid]["late_penalty"]) == expected_percent(sid, percent)
        assert next(r for r in imported if r["SIS User ID"] == "s40")["Student"] == f"'{FORMULA}"
        assert grades["s40"]["name"] == f"'{FORMULA}"
        # The resubmissions: the latest counts, better or worse.
        assert float(grades["s08"]["autograded"]) < float(grades["s09"]["autograded"])
        # The report's totals are the export's.
        report = CliRunner().invoke(main, ["report", str(out), "--format", "csv"])
        assert report.exit_code == 0, report.output
        totals = {
            r["name"]: float(r["value"]) for r in read_csv(report.stdout) if r["section"] == "score"
        }
        exported = {r["SIS User ID"]: float(r["self_attention"]) for r in imported}
        assert totals == {
            s: pytest.approx(v, abs=1e-4) for s, v in exported.items() if s != MISSING
        }
        assert sum(totals.values()) == pytest.approx(sum(exported.values()), abs=1e-3)
        page = (out / "feedback" / "s02.html").read_text()
        assert comment.replace("'", "&#39;") in page
        assert f"late penalty {expected_percent('s02', percent):g}%" in page
        s05 = (out / "feedback" / "s05.html").read_text()
        assert "extension of 24 h" in s05
        assert f"late penalty {expected_percent('s05', percent):g}%" in s05
        assert "after the cut-off, the score is 0" in (out / "feedback" / "s07.html").read_text()

    check(percent=10)
    # Week 5: the late policy is softened; a regrade keeps the override and the comment.
    write_course(course, percent=5)
    result = CliRunner().invoke(main, grade)
    assert result.exit_code == 0, result.output
    assert "39 graded, 0 unchanged" in result.stdout  # the config changed: all of them again
    check(percent=5)
