"""Seeded cases for every target: the same for every student (but for the public cases of an
assignment with per-student inputs, drawn from the student's own seed), of several shapes
(each call's arguments are declared in config.yaml, declared.py, or made by a builder of the
course's cases.py, inputs.py), and the probes that perturb
one argument at a time."""

from __future__ import annotations

import contextlib
import copy
import random
import threading
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.errors import ConfigError

if TYPE_CHECKING:  # a worker unpickles cases without the config's machinery (25 ms of its start)
    from grader.course.config import AssignmentSpec, TargetSpec
    from grader.course.inputs import Builder, Rng


@dataclass(frozen=True)
class Case:
    """One call of one target. `args` must never be handed out without `fresh_args()`."""

    target: str
    index: int
    sizes: Mapping[str, int]
    args: tuple[Any, ...]
    variable: bool = False  # a top-level variable read after the notebook ran, not a call
    probe: bool = False  # only "did the output change?" matters: the child sends a digest

    def fresh_args(self) -> tuple[Any, ...]:
        """A deep copy, so no call can see what an earlier call did to its inputs."""
        return tuple(_fresh(a) for a in self.args)

    def describe(self) -> str:
        """The case as a message names it: its sizes, or what a variable case checks."""
        if self.variable:
            return "the value after the notebook ran"
        return ", ".join(f"{k}={v}" for k, v in self.sizes.items())


def _fresh(value: Any) -> Any:
    """copy.deepcopy for the kinds of value cases hold, without its bookkeeping."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_fresh(v) for v in value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return copy.deepcopy(value)


def case_seed(seed: int, target: TargetSpec, index: int, public_seed: int | None = None) -> int:
    """The seed case `index` of `target` is drawn from: `public_seed` (a student's own) for a
    public case when there is one, else the assignment's `seed`."""
    public = target.public_cases or len(target.sizes)
    return public_seed if public_seed is not None and index < public else seed


def target_cases(seed: int, target: TargetSpec, public_seed: int | None = None) -> tuple[Case, ...]:
    """The cases of one target; each case has its own stream so edits elsewhere change nothing
    (and the hidden cases stay the same whatever `public_seed` is)."""
    if target.variable:
        return (Case(target.name, 0, {}, (), variable=True),)
    build = _builder(target)
    name_key = zlib.crc32(target.name.encode())
    cases = []
    for index, sizes in enumerate(target.sizes):
        stream = case_seed(seed, target, index, public_seed)
        rng = np.random.default_rng([stream, name_key, index])
        with _global_generators_seeded(zlib.crc32(repr((stream, name_key, index)).encode())):
            cases.append(Case(target.name, index, dict(sizes), build(rng, sizes, index)))
    return tuple(cases)


_GLOBAL_GENERATORS = threading.Lock()


@contextlib.contextmanager
def _global_generators_seeded(seed: int) -> Iterator[None]:
    """numpy's and Python's global generators seeded for one case, and put back after: a
    builder that draws from them (`np.random.normal` where `rng.normal` is meant) makes
    the same case in every process, so the public cases a student checks against are the
    ones graded, and a regrade's hidden cases are the first grading's (r50)."""
    with _GLOBAL_GENERATORS:
        numpy_state, python_state = np.random.get_state(), random.getstate()
        np.random.seed(seed)
        random.seed(seed)
        try:
            yield
        finally:
            np.random.set_state(numpy_state)
            random.setstate(python_state)


def _builder(target: TargetSpec) -> Builder:
    """What makes one call's arguments: the declared `args`, else the course's builder (which
    sees only the size keys it declared)."""
    from grader.course.declared import draw_args
    from grader.course.inputs import DeclaredSizes

    if target.args:
        args = target.args

        def declared(rng: Rng, sizes: Mapping[str, int], index: int) -> tuple[Any, ...]:
            try:
                return draw_args(args, rng, sizes)
            except MemoryError:  # numpy's, for e.g. sizes {N: 300000, D: 300000}
                raise ConfigError(
                    f"target '{target.name}': the args of case {index} ({dict(sizes)}) need "
                    "more memory than this machine has: use smaller sizes"
                ) from None

        return declared
    builders = target.cases.builders() if target.cases is not None else {}
    if target.inputs not in builders:
        raise ConfigError(f"no case builder '{target.inputs}' for target '{target.name}'")
    function, needs = builders[target.inputs]
    name = target.inputs

    def build(rng: Rng, sizes: Mapping[str, int], index: int) -> tuple[Any, ...]:
        try:
            made = function(rng, DeclaredSizes(sizes, needs, name), index)
        except ConfigError:
            raise
        except Exception as exc:  # the course's own code: its failure is a course error
            raise ConfigError(
                f"case builder '{name}' fails on case {index} ({dict(sizes)}): "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(made, tuple):
            raise ConfigError(
                f"case builder '{name}' returned {type(made).__name__}, not a tuple of the "
                "call's arguments (one argument: `return (x,)`)"
            )
        return made

    return build


def assignment_cases(assignment: AssignmentSpec) -> dict[str, tuple[Case, ...]]:
    """Every target's cases, by target name, built from the assignment's seed (and the
    student's public seed, with per-student inputs)."""
    return {
        t.name: target_cases(assignment.seed, t, assignment.public_seed) for t in assignment.targets
    }


def _perturb(value: Any, rng: Rng) -> Any:
    """`value` changed a little, of its own type: noise on floating point numbers; integers
    (labels, indices) shuffled among their places, so each stays a valid index; one truth
    value of a boolean array flipped. Noise would make floats of them, which no index takes."""
    if isinstance(value, np.ndarray) and value.dtype == bool:
        flipped = value.copy()
        if flipped.size:
            flipped.flat[int(rng.integers(flipped.size))] ^= True
        return flipped
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.integer):
        shuffled = value.flatten()
        rng.shuffle(shuffled)
        return shuffled.reshape(value.shape)
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return (value + rng.standard_normal(value.shape) * 0.5).astype(value.dtype)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, list | tuple):
        return type(value)(_perturb(v, rng) for v in value)
    if isinstance(value, float):
        return value + float(rng.standard_normal()) * 0.5
    return value


PROBE_OFFSET = 1000


def probe_base(cases: tuple[Case, ...]) -> Case:
    """The case whose inputs the probes perturb: the second one, which avoids D = 4."""
    return cases[1 % len(cases)]


def probe_cases(seed: int, cases: tuple[Case, ...]) -> tuple[Case, ...]:
    """One case per argument, that argument perturbed: does the output depend on it at all?"""
    base = probe_base(cases)
    if base.variable:
        return ()
    rng = np.random.default_rng([seed, zlib.crc32(base.target.encode()), PROBE_OFFSET])
    probes = []
    for position, arg in enumerate(base.args):
        changed = list(copy.deepcopy(base.args))
        changed[position] = _perturb(arg, rng)
        index = PROBE_OFFSET + position
        probes.append(Case(base.target, index, base.sizes, tuple(changed), probe=True))
    return tuple(probes)


@dataclass(frozen=True)
class CaseSet:
    """Every target's seeded cases and its probes (one perturbed argument each)."""

    cases: dict[str, tuple[Case, ...]]
    probes: dict[str, tuple[Case, ...]]

    def plan(self, assignment: AssignmentSpec) -> list[tuple[str, tuple[Case, ...]]]:
        """What the child calls: every case of every target, then that target's probes."""
        return [(t.name, self.cases[t.name] + self.probes[t.name]) for t in assignment.targets]


_CASE_SETS: dict[str, CaseSet] = {}
# grader check builds them on a thread beside the engine's (run/prestart.py), whose early run
# is taken only with the very same set
_CASE_SETS_LOCK = threading.RLock()


def build_cases(assignment: AssignmentSpec) -> CaseSet:
    """The seeded inputs (and probes) of every target; deterministic, so built once."""
    key = repr(assignment)
    with _CASE_SETS_LOCK:  # one set per assignment, also when built on two threads at once
        if key not in _CASE_SETS:
            _CASE_SETS[key] = _remembered_or_built(assignment)
        return _CASE_SETS[key]


def _remembered_or_built(assignment: AssignmentSpec) -> CaseSet:
    """The set kept on disk for this assignment (case_memo.py), else built and kept."""
    from grader.course import case_memo

    path = case_memo.memo_path(assignment)
    if path is not None and isinstance(known := case_memo.recalled(path), CaseSet):
        return known
    cases = assignment_cases(assignment)
    probes = {
        t.name: probe_cases(_probe_seed(assignment, t, cases[t.name]), cases[t.name])
        for t in assignment.targets
    }
    built = CaseSet(cases, probes)
    if path is not None and isinstance(kept := case_memo.keep(path, built), CaseSet):
        return kept  # as the next check recalls it (case_memo.keep)
    return built


def _probe_seed(assignment: AssignmentSpec, target: TargetSpec, cases: tuple[Case, ...]) -> int:
    """The probes perturb their base case with the seed that case was drawn from."""
    index = probe_base(cases).index
    return case_seed(assignment.seed, target, index, assignment.public_seed)
