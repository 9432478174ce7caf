"""What every format says of one target before its messages, written once: status and points,
where (unless it passed), the mistakes named. Plain words; each format escapes them its way."""

from __future__ import annotations

from grader.report import TargetResult


def shown_location(target: TargetResult) -> str:
    """Where a target went wrong, as `cell 3, line 2`; empty when it passed or has no place."""
    return target.location.describe() if target.location and target.status != "passed" else ""


def verdict_lines(target: TargetResult, mistakes: bool = True) -> list[str]:
    """`failed: 1 / 2 points`, then `at cell 3, line 2` (not for a target that passed), then
    `mistakes: a, b` when any were named (leave them out with `mistakes=False`)."""
    lines = [f"{target.status}: {target.score:g} / {target.max_score:g} points"]
    where = shown_location(target)
    if where:
        lines.append(f"at {where}")
    if mistakes and target.mistakes:
        lines.append(f"mistakes: {', '.join(target.mistakes)}")
    return lines
