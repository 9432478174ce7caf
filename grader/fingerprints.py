"""What each catalogued mistake outputs on the seeded cases, computed once in the trusted process.

Besides a target's own variants there are *inherited* fingerprints: the reference of a target
run with a callee replaced by one of the callee's variants (self_attention with a wrong
softmax_cols). A student output that matches one of those is right apart from the callee.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cases import Case
from .config import AssignmentSpec
from .mistakes import Catalogue, Mistake, load_catalogue
from .reference import normalise, solution_namespace
from .wire import Value


@dataclass(frozen=True)
class Fingerprint:
    mistake: Mistake
    outputs: tuple[Value | Exception, ...]
    via: str | None = None  # the callee whose mistake this is, for inherited fingerprints


def _run(fn: Callable[..., Any], cases: tuple[Case, ...]) -> tuple[Value | Exception, ...]:
    outputs: list[Value | Exception] = []
    # Wrong variants overflow and divide by zero on purpose: that is not worth a warning.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                outputs.append(normalise(fn(*case.fresh_args())))
            except Exception as exc:  # a variant may fail on some shapes, as a student's would
                outputs.append(exc)
    return tuple(outputs)


def _with_callee(fn: Callable[..., Any], callee: str, replacement: Callable[..., Any]) -> Any:
    """A copy of `fn` whose global `callee` is `replacement`."""
    scope = {**fn.__globals__, callee: replacement}
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def catalogue_for(assignment: AssignmentSpec) -> Catalogue:
    if assignment.mistakes is None:
        return Catalogue()
    return load_catalogue(assignment.mistakes, solution_namespace(assignment))


def compute_fingerprints(
    assignment: AssignmentSpec,
    cases: Mapping[str, tuple[Case, ...]],
    catalogue: Catalogue,
) -> dict[str, list[Fingerprint]]:
    namespace = solution_namespace(assignment)
    names = {t.name for t in assignment.targets}
    result: dict[str, list[Fingerprint]] = {}
    for target in assignment.targets:
        if target.variable:
            result[target.name] = []
            continue
        own = [
            Fingerprint(m, _run(m.variant, cases[target.name]))
            for m in catalogue.for_target(target.name)
        ]
        reference = namespace[target.name]
        callees = sorted(set(reference.__code__.co_names) & names - {target.name})
        inherited = [
            Fingerprint(
                m, _run(_with_callee(reference, callee, m.variant), cases[target.name]), callee
            )
            for callee in callees
            for m in catalogue.for_target(callee)
        ]
        result[target.name] = own + inherited
    return result
