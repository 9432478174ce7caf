"""What `grader selftest` checks of the reference itself before any variant: outputs a
correct student can match. A reference that draws from a global random generator, returns
NaN, or is compared on floats with no tolerance at all passed every check, and then failed
the correct students (the solution, run as it was, matched itself).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial

import numpy as np

from grader.course.config import AssignmentSpec
from grader.course.notebook import Submission
from grader.judge.placement import reached
from grader.judge.reference import Reference
from grader.judge.static import FunctionSource, find_function

# What a module's random functions may be called for without drawing from its global state:
# making a generator of one's own, or seeding (a function that seeds first draws the same).
_OWN_GENERATOR = frozenset(
    {
        "default_rng", "Generator", "RandomState", "SeedSequence", "BitGenerator", "PCG64",
        "PCG64DXSM", "MT19937", "Philox", "SFC64", "Random", "SystemRandom", "get_state",
        "getstate",
    }
)  # fmt: skip
_SEEDS = frozenset({"seed", "set_state", "setstate"})
_GLOBAL = ("np.random.", "numpy.random.", "random.")


def _dotted(node: ast.expr) -> str:
    """`np.random.normal` for that attribute chain; "" for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def global_draws(function: FunctionSource) -> list[tuple[str, int]]:
    """The calls of `function` that draw from numpy's or Python's global generator (name
    and line), unless it seeds that generator itself."""
    found: list[tuple[str, int]] = []
    for node in function.nodes:
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        module = next((m for m in _GLOBAL if name.startswith(m)), None)
        if module is None or "." in name[len(module) :]:
            continue
        called = name[len(module) :]
        if called in _SEEDS:
            return []  # seeded here: the same numbers at every call
        if called not in _OWN_GENERATOR:
            found.append((name, node.lineno))
    return found


def random_references(assignment: AssignmentSpec, solution: Submission) -> list[str]:
    """A problem line for each function target whose reference draws from a global random
    generator: its outputs then depend on the draws made before the call (the notebook's
    cells, the other cases), and a correct function that draws otherwise, or not at all,
    fails."""
    problems = []
    for target in assignment.targets:
        if target.variable:
            continue  # the notebook's cells, run as the student's are, in their order
        own = find_function(solution, target.name)
        called = sorted(reached(own, partial(find_function, solution)))
        for function in [own, *(find_function(solution, n) for n in called)]:
            if function is None:
                continue
            draws = global_draws(function)
            if draws:
                name, line = draws[0]
                where = f"cell {function.cell.index}, line {line}"
                helper = "" if function.node.name == target.name else (
                    f" (in `{function.node.name}`, which it calls)"
                )  # fmt: skip
                problems.append(
                    f"{target.name}: the reference draws from the global random generator "
                    f"(`{name}`, {where}){helper}, so what it returns depends on the draws "
                    "made before each call and a correct function fails: take the random "
                    "numbers as an argument, or draw from `np.random.default_rng(seed)`"
                )
                break
    return problems


Leaves = Callable[[object], "list[np.ndarray] | None"]


def unmatchable_outputs(
    assignment: AssignmentSpec, references: dict[str, Reference], leaves: Leaves
) -> list[str]:
    """A problem line for each target whose reference returns NaN on some case (nothing a
    student returns equals it), and for each whose float outputs are compared with a
    tolerance of 0 (a correct function that adds in another order fails by 1e-17)."""
    problems = []
    for target in assignment.targets:
        reference = references.get(target.name)
        if reference is None:
            continue
        arrays = [(i, a) for i, out in enumerate(reference.outputs) for a in leaves(out) or []]
        floats = [(i, a) for i, a in arrays if np.issubdtype(a.dtype, np.inexact)]
        nan = next((i for i, a in floats if np.isnan(a).any()), None)
        if nan is not None:
            problems.append(
                f"{target.name}: the reference returns NaN on case {nan + 1}, which no "
                "student's answer can match: fix the solution or the case's inputs"
            )
        tolerance = target.tolerance
        if floats and tolerance.rtol == 0 and tolerance.atol == 0:
            problems.append(
                f"{target.name}: floats compared with a tolerance of 0 (rtol and atol): a "
                "correct function that computes in another order differs in the last digit "
                "and fails; give it a small one (rtol: 1.0e-7)"
            )
    return problems
