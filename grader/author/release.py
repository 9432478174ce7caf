"""`grader release`: the student bundle. A folder a student (or their CI) can hold: the
exercise notebooks, the course's data files, and one data file (grader/course/bundle.py)
with each assignment's public cases, their expected outputs and what the diagnosis needs on
them, as numbers. No solution source, no catalogue source, no hidden case's expected value.
"""

from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from grader.author.assign import MARKED, refuse_shared_exercises, stale_exercise
from grader.author.exercise_outputs import quoted_solution
from grader.course.bundle import BUNDLE_NAME, read_data, write_data
from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec, Config, Mode
from grader.course.notebook import load_submission
from grader.course.per_student import course_secret, for_student
from grader.engine import require
from grader.errors import ConfigError, UsageError
from grader.judge.expected import build_expected
from grader.judge.preflight import preflight
from grader.judge.released import bundle_entry
from grader.judge.static import find_function
from grader.run.workers import shared_workers


def spec_entry(spec: AssignmentSpec, exercise: str | None, files: list[str]) -> dict[str, Any]:
    """What the manifest says of one (public) assignment: no solution, no catalogue."""
    return {
        "id": spec.id,
        "title": spec.title,
        "exercise": exercise,
        "seed": spec.seed,
        "time_limit": vars(spec.time_limit),
        "preload": list(spec.preload),
        "files": files,
        "keep": spec.keep,
        "targets": [
            {
                "name": t.name,
                "points": t.points,
                "sizes": [dict(s) for s in t.sizes],
                "compare": t.compare,
                "tolerance": vars(t.tolerance),
                "partial_credit": t.partial_credit,
                "mutation": t.mutation,
                "sums_to_one": t.sums_to_one,
                "variable": t.variable,
                "hidden_cases": t.hidden_cases,
            }
            for t in spec.targets
        ],
    }


def _place(path: Path, root: Path) -> str:
    """Where a course file goes in the bundle: where it lies in the course, else its name."""
    resolved = path.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else path.name


def _copy(source: Path, out: Path, name: str) -> None:
    target = out / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def release(
    config: Config,
    out: Path,
    assignment: str | None = None,
    sandbox: Mode | None = None,
    student: str | None = None,
    notes: list[str] | None = None,
) -> Path:
    """Write the student bundle of the course (or of one assignment) into `out`; returns
    its data file. `student`: whose bundle it is, for assignments with per-student inputs
    (their public cases are that student's own). ConfigError (exit 2) for a broken course,
    a missing exercise, an exercise that hands out a solution of an assignment in this
    release, per-student inputs without a student, or a course that is itself a bundle.
    `notes` gets a line for each solution of an assignment outside this release that an
    exercise hands out (as a later assignment's helper: fine once that one is due)."""
    if config.path.name == BUNDLE_NAME:
        raise ConfigError(f"{config.path} is a student bundle: release from the course itself")
    _refuse_course_out(config, out)
    specs = [config.assignment(assignment)] if assignment else list(config.assignments.values())
    # what this release hands out first; one released before may be given away by it now
    released = {spec.id for spec in specs}
    if assignment:  # one more into a bundle: those released there before stay (r50 #7)
        kept = [a for a in _assignments_before(out) if a != assignment]
        gone = [a for a in kept if a not in config.assignments]
        specs = [config.assignment(a) for a in kept if a not in gone] + specs
        if notes is not None and len(specs) > 1:
            notes.append(
                f"{out} already holds {', '.join(s.id for s in specs[:-1])}: kept, and "
                "written again from the course (release into an empty folder for one alone)"
            )
        if notes is not None and gone:
            notes.append(f"{out} held {', '.join(gone)}, which the course no longer has: left out")
    refuse_shared_exercises(config)
    exercises: dict[str, Path | None] = {}
    for spec in specs:  # every exercise checked before a file is written
        if spec.exercise is None:  # graded on a notebook the course does not write (udl_12_1)
            exercises[spec.id] = None
            if notes is not None:
                notes.append(
                    f"{spec.id} has no `exercise:`: its bundle holds its public cases alone, "
                    "for students to check their own copy of the notebook it grades"
                )
            continue
        exercises[spec.id], elsewhere = _check_exercise(config, spec, released)
        for given in elsewhere:
            if notes is not None:
                notes.append(
                    f"{spec.exercise} hands out {given.assignment}'s solution of "
                    f"`{given.target}`{given.named}: hand it out only once "
                    f"{given.assignment} is due"
                )
    root = config.path.resolve().parent
    before = _released_before(out)
    entries: list[dict[str, Any]] = []
    numbers: dict[str, Any] = {}
    arrays: list[np.ndarray] = []
    for spec in specs:
        if spec.per_student_inputs:
            spec = _student_spec(config, spec, student)
        notebook = exercises[spec.id]
        entries.append(_assignment(config, spec, notebook, root, out, sandbox, numbers, arrays))
    data = out / BUNDLE_NAME
    try:
        version = metadata.version("attention-grader")
    except metadata.PackageNotFoundError:
        version = "unknown"
    manifest = {
        "assignments": entries,
        "numbers": numbers,
        "sandbox": config.sandbox,
        "grader": version,
    }
    write_data(data, manifest, arrays)
    _remove_stale(out, before - _released_names(manifest))
    return data


def _refuse_course_out(config: Config, out: Path) -> None:
    """The bundle goes beside the course, never into its folder (its exercises and data files
    would be copied onto themselves, and a later release would remove them as stale) nor
    into a solution's folder (which students must never get)."""
    where, root = out.resolve(), config.path.resolve().parent
    folders = {spec.solution.resolve().parent for spec in config.assignments.values()} - {root}
    if where == root:
        raise UsageError(
            f"--out {out} is the course folder: write the bundle into a folder of its own, "
            "e.g. --out handout/"
        )
    inside = next((f for f in sorted(folders) if where.is_relative_to(f)), None)
    if inside is not None:
        raise UsageError(
            f"--out {out} is inside the solutions' folder {inside}, which students must never "
            "get: write the bundle into a folder of its own, e.g. --out handout/"
        )
    # A folder that holds the course (its parent, a repository it lies in) would hand out
    # the solutions with the bundle: whoever gets the folder gets them.
    kept = [config.path] + [s.solution for s in config.assignments.values()]
    holds = next((p for p in kept if p.resolve().is_relative_to(where)), None)
    if holds is not None:
        raise UsageError(
            f"--out {out} holds {holds}, which students must never get: write the bundle "
            "into a folder of its own, e.g. --out handout/"
        )


def _released_names(manifest: dict[str, Any]) -> set[str]:
    """The files a bundle's manifest says its release wrote (each exercise notebook and
    data file, relative to the bundle's folder); only plain relative paths, none that
    climbs out with `..`."""
    names: set[str] = set()
    entries = manifest.get("assignments")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        files = entry.get("files")
        for name in [entry.get("exercise"), *(files if isinstance(files, list) else [])]:
            if isinstance(name, str) and name and _plain(name):
                names.add(name)
    return names


def _plain(name: str) -> bool:
    """A relative path that stays inside its folder (no root, no `..`, no backslash)."""
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _manifest_before(out: Path) -> dict[str, Any]:
    """The manifest of the bundle already in `out` ({} when there is none, or it cannot be
    read)."""
    data = out / BUNDLE_NAME
    if not data.is_file():
        return {}
    try:
        manifest, _ = read_data(data)
    except ConfigError:
        return {}
    return manifest


def _released_before(out: Path) -> set[str]:
    """What the bundle already in `out` (if any) wrote there."""
    return _released_names(_manifest_before(out))


def _assignments_before(out: Path) -> list[str]:
    """The assignments of the bundle already in `out`, in its order."""
    entries = _manifest_before(out).get("assignments")
    ids = [e.get("id") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    return [i for i in ids if isinstance(i, str)]


def _remove_stale(out: Path, names: set[str]) -> None:
    """Remove what the last release into `out` wrote and this one no longer does (an
    exercise renamed, or a file handed out by mistake): a handout holds this release only.
    Nothing else in `out` is touched."""
    for name in sorted(names):
        path = out / name
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)


def _student_spec(config: Config, spec: AssignmentSpec, student: str | None) -> AssignmentSpec:
    """The assignment with `student`'s own public cases, as a plain one: in their bundle,
    the cases are theirs already."""
    if student is None:
        raise ConfigError(
            f"{config.path}: assignments.{spec.id}.per_student_inputs: each student's public "
            "cases are their own: release one bundle per student (--roster roster.csv)"
        )
    return replace(for_student(spec, student, course_secret(config)), per_student_inputs=False)


def _check_exercise(
    config: Config, spec: AssignmentSpec, released: set[str]
) -> tuple[Path, list[GivenAway]]:
    """The assignment's exercise notebook, and the solutions of assignments outside this
    release (`released`, their ids) it hands out; ConfigError unless it is there to hand out
    and hands out no solution of an assignment in this release."""
    where = f"{config.path}: assignments.{spec.id}.exercise"
    if spec.exercise is None:
        raise ConfigError(f"{where}: not set, so there is no notebook to hand out")
    if not spec.exercise.is_file():
        raise ConfigError(
            f"{where}: no such file ({spec.exercise}); write it with "
            f"`grader assign --assignment {spec.id}` first"
        )
    exercise = spec.exercise.resolve()
    for other in config.assignments.values():  # handed out as it is: never a solution
        for kept in (other.solution, other.mistakes):
            if (
                kept is not None
                and kept.is_file()
                and (exercise == kept.resolve() or exercise.read_bytes() == kept.read_bytes())
            ):
                raise ConfigError(
                    f"{where}: {spec.exercise} is {kept} (or a copy of it), which students must "
                    f"never see; write the exercise with `grader assign --assignment {spec.id}`"
                )
    given = given_away(config, spec)
    for one in given:
        named = one.named
        if one.assignment == spec.id:
            raise ConfigError(
                f"{where}: {spec.exercise} holds the solution's `{one.target}` as it is"
                f"{named} (a copy of {spec.solution} saved again?), which students must never "
                f"see; write the exercise with `grader assign --assignment {spec.id}`"
            )
        if one.assignment in released:
            raise ConfigError(
                f"{where}: {spec.exercise} hands out {one.assignment}'s solution of "
                f"`{one.target}`{named}, and {one.assignment} is in this release: release "
                f"{spec.id} on its own once {one.assignment} is due (--assignment {spec.id}), "
                f"or mark `{one.function}`'s body `# BEGIN SOLUTION` in {spec.solution} and "
                "run `grader assign`"
            )
    if stale_exercise(spec):
        raise ConfigError(
            f"{where}: {spec.exercise} was written from an older {spec.solution} (changed "
            f"since): write it again with `grader assign --assignment {spec.id}`"
        )
    if quoted := quoted_solution(spec.exercise, spec.solution):
        raise ConfigError(
            f"{where}: {spec.exercise} cell {quoted[0]}'s saved output shows the solution's "
            f"line `{quoted[1]}` (run while it held the solution?), which students must never "
            f"see; clear its outputs, or write it with `grader assign --assignment {spec.id}`"
        )
    if MARKED.search(spec.exercise.read_text(encoding="utf-8", errors="replace")):
        raise ConfigError(
            f"{where}: {spec.exercise} still holds a SOLUTION marker, and what it marks would "
            f"be handed out; write the exercise with `grader assign --assignment {spec.id}`"
        )
    return spec.exercise, [one for one in given if one.assignment not in released]


@dataclass(frozen=True)
class GivenAway:
    """A function an exercise hands out that is, as code, a solution's graded function."""

    function: str  # its name in the exercise
    assignment: str  # whose solution it is
    target: str  # the graded function it is

    @property
    def named(self) -> str:
        """Words for the exercise's name of it, when that is not the target's."""
        return "" if self.function == self.target else f" (as `{self.function}`)"


def given_away(config: Config, spec: AssignmentSpec) -> list[GivenAway]:
    """Each function of the assignment's exercise whose body is the body of a graded
    function of a solution (this assignment's or another's), under any name: a copy of
    the solution saved again, or a later assignment that hands out an earlier one's answer
    as its given helper. Bodies are compared as code (docstrings aside), so layout and
    comments do not hide a copy."""
    if spec.exercise is None or not spec.exercise.is_file():
        return []
    # a body -> (its place among the solutions' targets, assignment, target); own first
    solved: dict[str, tuple[int, str, str]] = {}
    for other in sorted(config.assignments.values(), key=lambda a: a.id != spec.id):
        if other.solution is None or not other.solution.is_file():
            continue
        solution = load_submission(other.solution)
        for target in other.targets:
            found = None if target.variable else find_function(solution, target.name)
            if found is not None:
                solved.setdefault(_body(found.node), (len(solved), other.id, target.name))
    exercise = load_submission(spec.exercise)
    found_here: list[tuple[int, GivenAway]] = []
    for cell in exercise.cells:
        tree = exercise.tree(cell.index)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef) and (at := solved.get(_body(node))):
                found_here.append((at[0], GivenAway(node.name, at[1], at[2])))
    return [given for _, given in sorted(found_here, key=lambda pair: pair[0])]


def _body(node: ast.FunctionDef) -> str:
    """A function's body as code, its docstring aside (the exercise keeps the solution's)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return ast.dump(ast.Module(body, []))


def _assignment(
    config: Config,
    spec: AssignmentSpec,
    notebook: Path | None,
    root: Path,
    out: Path,
    sandbox: Mode | None,
    numbers: dict[str, Any],
    arrays: list[np.ndarray],
) -> dict[str, Any]:
    """Check one assignment, write its files (`notebook`, its checked exercise, and its
    data files) into `out` and its numbers into `numbers`."""
    workers = shared_workers(require(sandbox or config.sandbox), spec.files, spec.preload)
    preflight(config, replace(spec, public_seed=None), workers)  # the course's own cases
    public = spec.public()
    case_set = build_cases(public)
    expected = build_expected(public, case_set, workers)
    numbers[spec.id] = bundle_entry(public, case_set, expected, arrays)
    exercise = _place(notebook, root) if notebook is not None else None
    out.mkdir(parents=True, exist_ok=True)
    if notebook is not None and exercise is not None:
        _copy(notebook, out, exercise)
    for data in spec.files:
        _copy(data.source, out, data.name)
    return spec_entry(public, exercise, [d.name for d in spec.files])


def student_folder(out: Path, student: str) -> Path:
    """Where a student's own bundle goes: OUT/<id>; ConfigError for an id that is not one
    plain folder name (a roster could otherwise write anywhere)."""
    if not student or Path(student).name != student or student in (".", ".."):
        raise ConfigError(f"student id {student!r} cannot name a folder: fix it in the roster")
    return out / student
