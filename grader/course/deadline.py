"""An assignment's deadline and late policy (`due:` and `late:` in config.yaml), and what a
submission handed in at a given time loses.

Lateness counts from the due date (moved by the student's extension); within the grace period
it costs nothing; after it, every started hour (or day) costs `percent` of the points, up to
`cap`; after the cut-off (moved by the same extension) the score is 0.

An hour is 60 minutes of real time. A day is a calendar day in the deadline's time zone (the
course's `time_zone:`, else the due date's offset): day N late ends N days after the due date
at the same local time, so the 23- and 25-hour days of a daylight-saving change count as one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

Per = Literal["hour", "day"]
PER_SECONDS: dict[Per, int] = {"hour": 3600, "day": 86400}


@dataclass(frozen=True)
class LatePolicy:
    """When an assignment is due and what each period late costs."""

    due: datetime
    grace_minutes: float = 0.0
    percent: float = 0.0  # of the points, per started period after the grace
    per: Per = "day"
    cap: float = 100.0  # the most the periods may cost, in percent
    cutoff: datetime | None = None  # after it (plus any extension), the score is 0
    zone: tzinfo | None = None  # where a day is a calendar day (`time_zone:`); else due's offset


@dataclass(frozen=True)
class Late:
    """How late one submission was and what it costs."""

    minutes: float  # after the due date (with the extension); 0 when on time
    percent: float  # of the points taken off
    note: str  # one line: when, how late, the penalty and why

    def apply(self, points: float) -> float:
        """The points after the penalty."""
        return round(points * (1 - self.percent / 100), 6)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time with a time zone; ValueError for anything else (no zone included:
    a deadline without one means different moments on the grader and the LMS)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:  # Python's own words ("Invalid isoformat string") show no example
        raise ValueError(
            f"{text!r} is not a date and time (write it as 2026-03-01T23:59:00+01:00)"
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{text!r} has no time zone (write it as 2026-03-01T23:59:00+01:00)")
    return moment


def lateness(policy: LatePolicy, submitted: datetime, extension_hours: float = 0.0) -> Late:
    """What handing in at `submitted` costs under `policy`, with an extension in hours."""
    extra = timedelta(hours=extension_hours)
    due = policy.due + extra
    moved = f" (with an extension of {extension_hours:g} h)" if extension_hours else ""
    stamp = submitted.isoformat(timespec="minutes")
    seconds = (submitted - due).total_seconds()
    if seconds <= 0:
        return Late(0.0, 0.0, f"handed in {stamp}, on time{moved}")
    minutes = seconds / 60
    late = f"handed in {stamp}, {_duration(minutes, policy.per)} after the due date{moved}"
    if policy.cutoff is not None and submitted > policy.cutoff + extra:
        return Late(minutes, 100.0, f"{late}: after the cut-off, the score is 0")
    if minutes <= policy.grace_minutes:
        return Late(minutes, 0.0, f"{late}: within the grace period, no penalty")
    periods = _periods(policy, due, submitted, seconds)
    percent = min(policy.cap, policy.percent * periods)
    rule = f"{policy.percent:g}% per {policy.per}"
    capped = (
        f", capped at {policy.cap:g}%" if percent == policy.cap < policy.percent * periods else ""
    )
    what = f"{periods} {policy.per}{'s' * (periods > 1)} × {rule}{capped}"
    return Late(minutes, percent, f"{late}: late penalty {percent:g}% ({what})")


def _periods(policy: LatePolicy, due: datetime, submitted: datetime, seconds: float) -> int:
    """The started periods from `due` to `submitted`, `seconds` later: hours of real time, or
    calendar days in the deadline's zone, counted on the local clock (a 25-hour day is one
    day, not two; a 23-hour day is a whole one too). At least one: in the hour repeated when
    the clocks go back, the local clock can read a time before the due date's."""
    if policy.per == "hour":
        return math.ceil(seconds / PER_SECONDS["hour"])
    zone = policy.zone or due.tzinfo
    local = submitted.astimezone(zone).replace(tzinfo=None)
    deadline = due.astimezone(zone).replace(tzinfo=None)
    return max(1, math.ceil((local - deadline).total_seconds() / PER_SECONDS["day"]))


def _duration(minutes: float, per: Per = "day") -> str:
    """How long after the due date, in its two largest units that are not zero, each part
    rounded down and a started second counted: "1 s", "3 h 30 s", "2 days 4 h" (never days
    under a penalty per hour). Never a rounded "3.0 h" beside a penalty for 4 started hours
    (it was 3 h 1 min): a whole number of periods is said only when it is exact."""
    left = math.ceil(round(minutes * 60, 6))  # "0 min after the due date" read as a bug
    parts = []
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        count, left = divmod(left, size)
        if count and (unit != "day" or (count >= 2 and per == "day")):
            parts.append(f"{count} {unit}{'s' * (unit == 'day' and count > 1)}")
        elif count:  # a day and some hours: said in hours, as "30 h"
            left += count * size
    return " ".join(parts[:2]) or "1 s"
