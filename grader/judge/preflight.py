"""Fail fast on a broken course: before any student's notebook runs, the course's own files
must exist, the solution must pass its own cases and every catalogued mistake must be caught.

One ConfigError (exit 2) naming the file and the config key, instead of one fault per
student. A course that passed is remembered on disk by a content hash (solution, config,
catalogue, data files, grader and numpy versions), so the second run costs a hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from grader.course import versions
from grader.course.cache_home import used
from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec, Config
from grader.course.mistakes import Catalogue
from grader.course.notebook import load_submission
from grader.errors import ConfigError
from grader.judge.compare import compare
from grader.judge.diagnose import GENERIC_STATIC, STRUCTURAL
from grader.judge.expected import Expected
from grader.judge.fingerprints import catalogue_for, compute_fingerprints
from grader.judge.reference import compute_references, load_solution
from grader.judge.run_cache import cache_dir, content_digest
from grader.judge.score import Answers, judge_case
from grader.run.workers import Workers

# Told apart by the mutation check, not by its outputs (as in selftest).
BY_MUTATION = "mutates_input"


def key_of(config: Config, spec: AssignmentSpec) -> str:
    """The content hash a passed check of `spec` is remembered under."""
    version = versions.version("attention-grader")
    parts = [spec.id.encode(), repr(spec).encode(), version.encode(), np.__version__.encode()]
    files = [config.path, spec.solution, spec.mistakes, *(f.source for f in spec.files)]
    return content_digest(parts, files)


def _marker(config: Config, spec: AssignmentSpec) -> Path | None:
    folder = cache_dir()
    return folder / f"preflight-{spec.id}-{key_of(config, spec)}.ok" if folder else None


def check_files(config: Config, specs: Iterable[AssignmentSpec]) -> None:
    """The files the config names exist: no worker needed, so this runs before any starts."""
    for spec in specs:
        for key, path in (("solution", spec.solution), ("mistakes", spec.mistakes)):
            if path is not None and not path.is_file():
                raise ConfigError(
                    f"{config.path}: assignments.{spec.id}.{key}: no such file: {path}"
                )


def checked_catalogue(config: Config, spec: AssignmentSpec) -> Catalogue:
    """The assignment's catalogue, read (not run), each mistake of a function that an
    assignment sharing the file grades; ConfigError naming the key and the file otherwise
    (a missing solution named as such, not blamed on the catalogue that is read with it)."""
    check_files(config, [spec])
    mine = spec.mistakes.resolve() if spec.mistakes is not None else None
    graded = {
        target.name
        for other in config.assignments.values()
        if other.mistakes is not None and other.mistakes.resolve() == mine
        for target in other.targets
    }
    if spec.mistakes is not None and spec.mistakes.suffix == ".ipynb":  # JSON parses as Python
        raise ConfigError(
            f"{config.path}: assignments.{spec.id}.mistakes: {spec.mistakes} is a notebook; the "
            "mistake catalogue is a Python file of its own, e.g. solutions/<name>_mistakes.py"
        )
    try:
        catalogue = catalogue_for(spec)  # read, not run: its errors name the file and line
        try:
            catalogue.refuse_strays(graded | {t.name for t in spec.targets})
        except ConfigError:
            _refuse_renamed_targets(config, spec)  # the config's slip, not the catalogue's
            raise
        catalogue.refuse_unknown_replaces({*STRUCTURAL, *GENERIC_STATIC})
        if catalogue.mistakes:  # they run after the solution's cells, in its namespace
            targets = {t.name for t in spec.targets}  # fingerprints.py words those itself
            catalogue.refuse_rebinding(set(load_solution(spec).definitions()) - targets)
    except _Renamed:
        raise
    except ConfigError as exc:
        raise ConfigError(f"assignments.{spec.id}.mistakes in {config.path}: {exc}") from None
    return catalogue


class _Renamed(ConfigError):
    """A target the solution does not define: the config's key, not the catalogue, is named."""


def _refuse_renamed_targets(config: Config, spec: AssignmentSpec) -> None:
    """ConfigError naming a function target the solution does not define, with the name it
    defines instead, when a target was renamed in config.yaml alone (its catalogue, still
    of the old name, was blamed). Read only once the catalogue is refused: no cost else."""
    from difflib import get_close_matches

    defined = load_solution(spec).definitions()
    for target in spec.targets:
        if target.variable or target.name in defined:
            continue
        near = get_close_matches(target.name, list(defined), n=1, cutoff=0.6)
        instead = f"; it defines `{near[0]}`: renamed in one place only?" if near else ""
        raise _Renamed(
            f"{config.path}: assignments.{spec.id}.targets.{target.name}: the solution "
            f"{spec.solution} defines no `{target.name}`{instead}"
        )


def preflight(config: Config, spec: AssignmentSpec, workers: Workers) -> None:
    """Check one assignment of the course (see the module); nothing when it passed before
    with the same content. ConfigError with file and key when it is broken."""
    check_files(config, [spec])
    marker = _marker(config, spec)
    if marker is not None and marker.is_file():
        used(marker)
        return
    catalogue = checked_catalogue(config, spec)
    where = f"{spec.solution}: assignments.{spec.id}.solution in {config.path}"
    case_set = build_cases(spec)
    # The references and the catalogue's fingerprints only: the derived mistakes (a second
    # or more, cached on their own) wait for the first notebook graded.
    try:
        references, probes = compute_references(spec, case_set, workers)
        fingerprints = compute_fingerprints(spec, case_set, catalogue, workers)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    expected = Expected(references, probes, fingerprints)
    _solution_passes(config, spec, expected, workers)
    _mistakes_caught(config, spec, expected)
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # no cache: the check runs again next time


def preflight_all(
    config: Config, specs: Iterable[AssignmentSpec], workers_for: Callable[..., Workers]
) -> None:
    """`preflight` for each assignment; `workers_for(spec)` gives the workers to run on,
    called only for an assignment not remembered as passed."""
    specs = list(specs)
    check_files(config, specs)
    for spec in specs:
        marker = _marker(config, spec)
        if marker is None or not marker.is_file():
            preflight(config, spec, workers_for(spec))


def _solution_passes(
    config: Config, spec: AssignmentSpec, expected: Expected, workers: Workers
) -> None:
    """The solution, graded as a student's notebook is (the student's time limits), passes
    every case of every target."""
    solution = load_submission(spec.solution)
    case_set = build_cases(spec)
    plan = [(t.name, case_set.cases[t.name]) for t in spec.targets]
    run = workers.run(solution.cells, plan, spec.time_limit, spec.files)
    answers = Answers.from_run(run)
    unanswered = run.wire_error or run.exit_description or "no answer"
    for target in spec.targets:
        reference = expected.references[target.name]
        for case in case_set.cases[target.name]:
            answer = answers.results.get((target.name, case.index))
            outcome = judge_case(target, case, reference, answer, unanswered)
            if outcome.kind != "passed":
                raise ConfigError(
                    f"{spec.solution}: assignments.{spec.id}.targets.{target.name} in "
                    f"{config.path}: the solution fails its own case {case.index} "
                    f"({case.describe()}): {outcome.message}"
                )


def _mistakes_caught(config: Config, spec: AssignmentSpec, expected: Expected) -> None:
    """Every catalogued mistake of the assignment's targets fails at least one case."""
    for target in spec.targets:
        reference = expected.references[target.name]
        for found in expected.fingerprints[target.name]:
            mistake = found.mistake
            if found.via is not None or found.origin != "catalogue" or mistake.id == BY_MUTATION:
                continue
            caught = any(
                isinstance(got, Exception)
                or not compare(want, got, target.compare, target.tolerance).ok
                for got, want in zip(found.outputs, reference.outputs, strict=True)
            )
            if not caught:
                raise ConfigError(
                    f"{spec.mistakes}: mistake {mistake.id} ({mistake.function}) is not caught: "
                    f"it passes every case of assignments.{spec.id}.targets.{target.name} in "
                    f"{config.path}; add sizes that tell it apart, or fix the variant"
                )
