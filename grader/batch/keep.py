"""Several notebooks from one student: which one counts (`keep: latest|best` in config.yaml).

Under `keep: best` each of a student's notebooks is graded, under a key of its own (the
student's id, ALT, a number), and the one with the most points after any late penalty is
kept (ties: the latest). Under `keep: latest` (the default) only the latest is graded: the
others could not change the grade. Either way a line says which was kept and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ALT = "\x1f"  # never in a file name a batch accepts as a student's

Keep = Literal["latest", "best"]


def alt_key(student: str, number: int) -> str:
    """The key another notebook of `student` is graded under."""
    return f"{student}{ALT}{number}"


def base_of(key: str) -> str:
    """The student a key (theirs, or one of their other notebooks') belongs to."""
    return key.split(ALT, 1)[0]


@dataclass(frozen=True)
class Candidate:
    """One of a student's notebooks, graded: its points after any late penalty (None: it
    could not be graded)."""

    key: str
    path: Path | None
    points: float | None


def choose(candidates: Sequence[Candidate], keep: Keep) -> tuple[Candidate, str]:
    """The kept notebook among `candidates` (oldest first, the latest last) and one line
    saying which and why."""
    latest = candidates[-1]
    if keep == "latest":
        names = ", ".join(c.path.name if c.path else c.key for c in candidates)
        return latest, f"{len(candidates)} notebooks ({names}); kept the latest (keep: latest)"
    names = ", ".join(_shown(c) for c in candidates)
    graded = [c for c in candidates if c.points is not None]
    if not graded:
        return latest, f"{len(candidates)} notebooks ({names}), none graded; kept the latest"
    # max keeps the first of equals: searched from the latest back, a tie goes to the latest.
    best = max(reversed(graded), key=lambda c: c.points or 0.0)
    name = best.path.name if best.path else best.key
    return best, f"{len(candidates)} notebooks ({names}); kept {name}, the best (keep: best)"


def _shown(candidate: Candidate) -> str:
    name = candidate.path.name if candidate.path else "?"
    points = "not graded" if candidate.points is None else f"{candidate.points:g} points"
    return f"{name}: {points}"
