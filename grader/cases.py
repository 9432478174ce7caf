"""Seeded inputs for every target: the same for every student, of several shapes.

A builder turns (random generator, sizes, case index) into the positional arguments of one
call. Sizes come from config.yaml so that an instructor can add shapes without code; the case
index lets a builder vary the container (list of floats, list of 1×1 arrays, array).
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .config import AssignmentSpec, TargetSpec

Rng = np.random.Generator
Builder = Callable[[Rng, Mapping[str, int], int], tuple[Any, ...]]


@dataclass(frozen=True)
class Case:
    """One call of one target. `args` must never be handed out without `fresh_args()`."""

    target: str
    index: int
    sizes: Mapping[str, int]
    args: tuple[Any, ...]
    variable: bool = False  # a top-level variable read after the notebook ran, not a call

    def fresh_args(self) -> tuple[Any, ...]:
        """A deep copy, so no call can see what an earlier call did to its inputs."""
        return copy.deepcopy(self.args)

    def describe(self) -> str:
        if self.variable:
            return "the value after the notebook ran"
        return ", ".join(f"{k}={v}" for k, v in self.sizes.items())


def _column(rng: Rng, d: int) -> np.ndarray:
    return rng.standard_normal((d, 1))


def _weights(rng: Rng, rows: int, cols: int) -> np.ndarray:
    # Scaled so that unscaled scores are large but not saturated: scaling must matter.
    weights: np.ndarray = rng.standard_normal((rows, cols)) / np.sqrt(cols)
    return weights


def _qkv_loop(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    all_x = [_column(rng, d) for _ in range(n)]
    omegas = [_weights(rng, d, d) for _ in range(3)]
    betas = [_column(rng, d) for _ in range(3)]
    return (all_x, *omegas, *betas)


def _score_list(rng: Rng, s: Mapping[str, int], index: int) -> tuple[Any, ...]:
    scores = rng.standard_normal(s["N"]) * 2.0
    kind = index % 3
    if kind == 0:
        return ([float(v) for v in scores],)
    if kind == 1:
        return ([np.full((1, 1), v) for v in scores],)
    return (scores,)


def _qkv_lists(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    return tuple([_column(rng, d) for _ in range(n)] for _ in range(3))


def _score_matrix(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    # Rows ≠ columns in most cases, so summing over the wrong axis cannot hide.
    return (rng.standard_normal((s["N"], s["D"])) * 2.0,)


def _attention_columns(rng: Rng, s: Mapping[str, int], _: int) -> tuple[Any, ...]:
    d, n = s["D"], s["N"]
    x = rng.standard_normal((d, n))
    omega_v, omega_q, omega_k = (_weights(rng, d, d) for _ in range(3))
    beta_v, beta_q, beta_k = (_column(rng, d) for _ in range(3))
    return (x, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k)


BUILDERS: dict[str, Builder] = {
    "qkv_loop": _qkv_loop,
    "score_list": _score_list,
    "qkv_lists": _qkv_lists,
    "score_matrix": _score_matrix,
    "attention_columns": _attention_columns,
}


def target_cases(seed: int, target: TargetSpec) -> tuple[Case, ...]:
    """The cases of one target; each case has its own stream so edits elsewhere change nothing."""
    if target.variable:
        return (Case(target.name, 0, {}, (), variable=True),)
    build = BUILDERS[target.inputs]
    name_key = zlib.crc32(target.name.encode())
    cases = []
    for index, sizes in enumerate(target.sizes):
        rng = np.random.default_rng([seed, name_key, index])
        cases.append(Case(target.name, index, dict(sizes), build(rng, sizes, index)))
    return tuple(cases)


def assignment_cases(assignment: AssignmentSpec) -> dict[str, tuple[Case, ...]]:
    return {t.name: target_cases(assignment.seed, t) for t in assignment.targets}


def _perturb(value: Any, rng: Rng) -> Any:
    if isinstance(value, np.ndarray):
        return value + rng.standard_normal(value.shape) * 0.5
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
        probes.append(Case(base.target, PROBE_OFFSET + position, base.sizes, tuple(changed)))
    return tuple(probes)
