"""`per: day` counts calendar days in the deadline's time zone (the course's `time_zone:`):
the 25-hour day when the clocks go back and the 23-hour day when they go forward are one day
each; `per: hour` counts hours of real time across either change."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from grader.course.config import load_config
from grader.course.deadline import LatePolicy, lateness

from conftest import repo_config_raw

BERLIN = ZoneInfo("Europe/Berlin")
# Europe/Berlin goes back from +02:00 to +01:00 at 03:00 on 25 October 2026 (a 25-hour day)
# and forward from +01:00 to +02:00 at 02:00 on 29 March 2026 (a 23-hour day).


def berlin(year: int, month: int, day: int, hour: int, minute: int, fold: int = 0) -> datetime:
    """A local time in Berlin, at its offset then (as config.yaml and --submitted-at give
    times: a fixed offset; `fold=1`: the second of the hour repeated in autumn)."""
    moment = datetime(year, month, day, hour, minute, fold=fold, tzinfo=BERLIN)
    offset = moment.utcoffset()
    assert offset is not None
    return moment.astimezone(timezone(offset))


AUTUMN_DUE = berlin(2026, 10, 24, 23, 59)
SPRING_DUE = berlin(2026, 3, 28, 23, 59)


def daily(due: datetime, zone: ZoneInfo | None = BERLIN) -> LatePolicy:
    """5% per started day."""
    return LatePolicy(due, percent=5, per="day", zone=zone)


def real_hours(start: datetime, end: datetime) -> float:
    return (end.astimezone(UTC) - start.astimezone(UTC)).total_seconds() / 3600


def test_the_autumn_25_hour_day_counts_as_one_day() -> None:
    policy = daily(AUTUMN_DUE)
    # 23:29 on the 25th, local: 24.5 hours of real time after 23:59 on the 24th.
    at = berlin(2026, 10, 25, 23, 29)
    assert real_hours(AUTUMN_DUE, at) == 24.5
    late = lateness(policy, at)
    assert late.percent == policy.percent and "1 day ×" in late.note
    # Half an hour into the next calendar day: the second day has started.
    next_day = lateness(policy, berlin(2026, 10, 26, 0, 29))
    assert next_day.percent == 2 * policy.percent and "2 days ×" in next_day.note
    # Without a zone the due date's offset is all there is: 24.5 hours are two days.
    assert lateness(daily(AUTUMN_DUE, None), at).percent == 2 * policy.percent


def test_the_spring_23_hour_day_counts_as_one_whole_day() -> None:
    policy = daily(SPRING_DUE)
    within = berlin(2026, 3, 29, 23, 29)
    assert real_hours(SPRING_DUE, within) == 22.5
    assert lateness(policy, within).percent == policy.percent
    # 00:29 on the 30th is in the second calendar day, though only 23.5 real hours late.
    after = berlin(2026, 3, 30, 0, 29)
    assert real_hours(SPRING_DUE, after) == 23.5
    late = lateness(policy, after)
    assert late.percent == 2 * policy.percent and "2 days ×" in late.note
    assert late.minutes == 23.5 * 60  # how late is still said in real time


def test_an_extension_moves_the_calendar_day_boundary_too() -> None:
    # Due 23:59 on the 23rd; 24 h of extension move it to 23:59 on the 24th, before the
    # clocks go back: 23:29 on the 25th is 24.5 h later, in the first calendar day.
    policy = daily(berlin(2026, 10, 23, 23, 59))
    at = berlin(2026, 10, 25, 23, 29)
    assert real_hours(AUTUMN_DUE, at) == 24.5
    assert lateness(policy, at, extension_hours=24).percent == policy.percent
    at = berlin(2026, 10, 26, 0, 29)
    assert lateness(policy, at, extension_hours=24).percent == 2 * policy.percent


def test_the_hour_repeated_in_autumn_still_costs_a_day() -> None:
    # Due at the first 02:30 (+02:00); handed in at the second 02:10 (+01:00): 40 minutes
    # late, though the local clock reads a time before the due date's.
    due = berlin(2026, 10, 25, 2, 30)
    at = berlin(2026, 10, 25, 2, 10, fold=1)
    assert real_hours(due, at) * 60 == 40
    late = lateness(daily(due), at)
    assert late.minutes == 40 and late.percent == 5


def test_per_hour_counts_real_hours_across_either_change() -> None:
    # 01:30 (+02:00) to 02:00 (+01:00) on 25 October: the clock says 30 min, 90 have passed.
    due = berlin(2026, 10, 25, 1, 30)
    hourly = LatePolicy(due, percent=10, per="hour", zone=BERLIN)
    at = berlin(2026, 10, 25, 2, 0, fold=1)
    assert real_hours(due, at) == 1.5
    assert lateness(hourly, at).percent == 2 * hourly.percent
    # 01:30 (+01:00) to 03:00 (+02:00) on 29 March: the clock says 90 min, 30 have passed.
    due = berlin(2026, 3, 29, 1, 30)
    at = berlin(2026, 3, 29, 3, 0)
    assert real_hours(due, at) == 0.5
    hourly = LatePolicy(due, percent=10, per="hour", zone=BERLIN)
    assert lateness(hourly, at).percent == hourly.percent


def test_the_course_time_zone_reaches_each_late_policy(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["time_zone"] = "Europe/Berlin"
    raw["assignments"]["self_attention"].update(
        due=AUTUMN_DUE.isoformat(), late={"percent": 5, "per": "day"}
    )
    (tmp_path / "config.yaml").write_text(json.dumps(raw))
    policy = load_config(tmp_path / "config.yaml").assignments["self_attention"].late
    assert policy is not None and policy.zone == BERLIN
    at = berlin(2026, 10, 25, 23, 29)
    assert lateness(policy, at).percent == policy.percent
