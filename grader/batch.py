"""Grade a folder of submissions (serially for now) and write grades.csv."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .config import AssignmentSpec, Config
from .engine import grade_path
from .errors import GraderError, UsageError
from .report import Report

SUFFIXES = (".ipynb", ".py")


@dataclass(frozen=True)
class Entry:
    """One student's outcome: a report, or why there is none."""

    student: str
    path: Path | None
    report: Report | None
    problem: str = ""


def find_submissions(folder: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """`<student>.ipynb` files and `<student>/…ipynb` folders; problems are reported, not fatal."""
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a folder of submissions")
    found: dict[str, list[Path]] = {}
    problems: list[str] = []
    for item in sorted(folder.iterdir()):
        if item.name.startswith("."):
            continue
        if item.is_dir():
            notebooks = sorted(
                p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
            )
            if not notebooks:
                problems.append(f"{item.name}/: no notebook inside; skipped")
            for notebook in notebooks:
                found.setdefault(item.name, []).append(notebook)
        elif item.suffix in SUFFIXES:
            found.setdefault(item.stem, []).append(item)
        else:
            problems.append(f"{item.name}: not a notebook (.ipynb) or script (.py); skipped")
    chosen = []
    for student, paths in sorted(found.items()):
        if len(paths) > 1:
            names = ", ".join(str(p.relative_to(folder)) for p in paths)
            problems.append(f"{student}: several submissions ({names}); graded {paths[0].name}")
        chosen.append((student, paths[0]))
    if not chosen and not problems:
        problems.append(f"{folder}: the folder is empty")
    return chosen, problems


def grade_folder(
    folder: Path,
    config: Config,
    assignment: str | None,
    on_entry: Callable[[Entry], None] | None = None,
) -> tuple[list[Entry], list[str]]:
    submissions, problems = find_submissions(folder)
    entries = []
    for student, path in submissions:
        try:
            entry = Entry(student, path, grade_path(path, config, assignment))
        except GraderError as exc:
            entry = Entry(student, path, None, str(exc))
        entries.append(entry)
        if on_entry:
            on_entry(entry)
    return entries, problems


def write_csv(entries: Sequence[Entry], assignment: AssignmentSpec, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "grades.csv"
    names = [t.name for t in assignment.targets]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *names, "total", "max_total", "problem"])
        for entry in entries:
            if entry.report is None:
                writer.writerow([entry.student, *[0] * len(names), 0, "", entry.problem])
                continue
            scores = {t.name: t.score for t in entry.report.targets}
            row = [scores.get(n, 0) for n in names]
            writer.writerow([entry.student, *row, entry.report.score, entry.report.max_score, ""])
    return path
