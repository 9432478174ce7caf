"""A Blackboard attempt time (a local time in the file name) is read in the course's
`time_zone:`, each with the offset of its own day: a submission after a daylight-saving
change is not charged the hour the due date's offset would add."""

from __future__ import annotations

import csv
import json
import time
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from grader.batch.lateness import handed_in
from grader.cli import main
from grader.course.config import load_config
from grader.errors import ConfigError

import students
from conftest import repo_config_raw, write_notebook

# Europe/Berlin moves from +01:00 to +02:00 at 02:00 on 29 March 2026.
DUE = datetime(2026, 3, 28, 23, 59, tzinfo=timezone(timedelta(hours=1)))
BOARD = "self_attention_bo_attempt_2026-03-29-03-30-00_hw.ipynb"


def course(tmp_path: Path, **top: object) -> Path:
    raw = repo_config_raw()
    raw.update(top)
    raw["assignments"]["self_attention"].update(
        due=DUE.isoformat(), late={"percent": 10, "per": "hour"}
    )
    folder = tmp_path / "course"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder / "config.yaml"


def test_an_attempt_after_a_daylight_saving_change_carries_its_own_offset(tmp_path: Path) -> None:
    board = write_notebook(tmp_path / BOARD, [])
    berlin = ZoneInfo("Europe/Berlin")
    handed = handed_in(("bo",), board, tmp_path, {}, DUE, berlin)
    assert handed.at is not None and handed.at.utcoffset() == timedelta(hours=2)
    assert handed.at == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    before = write_notebook(tmp_path / BOARD.replace("03-29-03-30", "03-28-23-00"), [])
    earlier = handed_in(("bo",), before, tmp_path, {}, DUE, berlin).at
    assert earlier is not None and earlier.utcoffset() == timedelta(hours=1)


def test_the_config_names_a_time_zone_this_machine_knows(tmp_path: Path) -> None:
    assert load_config(course(tmp_path, time_zone="Europe/Berlin")).time_zone == "Europe/Berlin"
    with pytest.raises(ConfigError, match="time_zone: 'Mars/Olympus' is no time zone"):
        load_config(course(tmp_path / "other", time_zone="Mars/Olympus"))


@pytest.mark.slow
def test_grading_charges_the_hours_late_in_the_course_s_time_zone(tmp_path: Path) -> None:
    config = course(tmp_path, time_zone="Europe/Berlin")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / BOARD, students.cells())
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(config.parent), "-a", "self_attention"]
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    # 03:30+02:00 is 2 h 31 min after 23:59+01:00: three started hours (four at +01:00).
    assert float(row["late_penalty"]) == 30, row
    assert "2026-03-29T03:30+02:00" in row["lateness"]


@pytest.mark.slow
def test_a_zip_entrys_time_is_read_in_the_courses_time_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zip keeps local times without a zone: they were read in the grading machine's (UTC
    on a CI runner), an hour later than the course's Berlin, an hour more of penalty. An
    entry whose date is no date (month 0) is still unpacked."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        config = course(tmp_path, time_zone="Europe/Berlin")
        notebook = write_notebook(tmp_path / "bo.ipynb", students.cells())
        archive = tmp_path / "export.zip"
        with zipfile.ZipFile(archive, "w") as bundle:
            # 00:30 in Berlin on 29 March: 31 minutes late, 10% (read as UTC: 91, 20%)
            entry = zipfile.ZipInfo("bo.ipynb", date_time=(2026, 3, 29, 0, 30, 0))
            bundle.writestr(entry, notebook.read_bytes())
            bundle.writestr(zipfile.ZipInfo("cy.ipynb", (1980, 0, 0, 0, 0, 0)), "{}")
        out = tmp_path / "out"
        command = ["grade", str(archive), "--config", str(config), "-a", "self_attention"]
        done = CliRunner().invoke(main, [*command, "--out", str(out)])
        assert done.exit_code == 1, done.output  # cy's "{}" is no notebook
        with (out / "grades.csv").open(encoding="utf-8") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
        assert float(rows["bo"]["late_penalty"]) == 10, rows["bo"]["lateness"]
        assert "cy" in rows
    finally:
        monkeypatch.undo()
        time.tzset()
