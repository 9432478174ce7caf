"""Generic relations between a wrong output and the right one, for mistakes no catalogue knows.

Each function looks at plain arrays (already normalised) and returns a sentence or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from grader.course.config import Tolerance


def constant_factor(pairs: Sequence[tuple[np.ndarray, np.ndarray]], tol: Tolerance) -> str | None:
    """Every entry is c × the expected one (c may depend on the case)."""
    factors = []
    for got, expected in pairs:
        denom = float(np.vdot(expected, expected))
        if got.shape != expected.shape or denom == 0:
            return None
        factor = float(np.vdot(got, expected)) / denom
        if not np.allclose(got, factor * expected, rtol=tol.rtol * 10, atol=tol.atol * 10):
            return None
        factors.append(factor)
    if not factors or all(abs(f - 1) < 1e-6 for f in factors):
        return None
    if max(factors) - min(factors) < 1e-9 * max(1.0, abs(factors[0])):
        return f"off by a constant factor: every entry is {factors[0]:.4g} × the expected value"
    listed = ", ".join(f"{f:.4g}" for f in factors)
    return f"off by a factor that depends on the input size (×{listed} in the cases in turn)"


def sums_to_one(got: np.ndarray, axis_name: str) -> str | None:
    """For softmax-like outputs: do the weights sum to one along the axis they must?"""
    if axis_name == "all":
        total = float(np.sum(got))
        return None if abs(total - 1) < 1e-6 else f"the weights sum to {total:.4g}, not to one"
    if got.ndim != 2:
        return None
    axis = 0 if axis_name == "columns" else 1
    sums = np.sum(got, axis=axis)
    if np.allclose(sums, 1, atol=1e-6):
        return None
    other = np.sum(got, axis=1 - axis)
    other_name = "rows" if axis_name == "columns" else "columns"
    if np.allclose(other, 1, atol=1e-6):
        return (
            f"the {other_name} sum to one instead of the {axis_name}: "
            f"normalise each of the {axis_name}"
        )
    return f"the {axis_name} do not sum to one (sums from {sums.min():.4g} to {sums.max():.4g})"


def only_some_sizes(
    passed: Sequence[bool], sizes: Sequence[Mapping[str, int]], notebook: Mapping[str, int]
) -> str | None:
    """Right exactly on the cases whose size matches the notebook's example (D = 4, …)."""
    if all(passed) or not any(passed):
        return None
    for name, value in notebook.items():
        same = [s.get(name) == value for s in sizes]
        if same == list(passed):
            return (
                f"right only in the cases where {name} = {value}, the size of the notebook's "
                f"example: a size written as a number, or the notebook's global `{name}`, "
                "is used where the size of the inputs is meant"
            )
    return None


def ignored_inputs(
    parameters: Sequence[str],
    unchanged: set[int],
    reference_base: np.ndarray,
    reference_probes: Mapping[int, np.ndarray],
) -> str | None:
    """Inputs the output should depend on but does not.

    `unchanged` holds the argument positions whose perturbation left the student's output
    exactly as it was (the child reports digests, not values, for these probe calls).
    """
    ignored = []
    for position in sorted(unchanged):
        ref_probe = reference_probes.get(position)
        if ref_probe is None or ref_probe.shape != reference_base.shape:
            continue
        reference_moves = not np.allclose(ref_probe, reference_base, rtol=1e-9, atol=1e-12)
        if reference_moves and position < len(parameters):
            ignored.append(f"`{parameters[position]}`")
    if not ignored:
        return None
    return f"ignores {', '.join(ignored)}: changing it does not change the output, but it should"


def differing_lines(got: np.ndarray, expected: np.ndarray, tol: Tolerance) -> str | None:
    """For a matrix of the right shape: which rows or columns are wrong, when not all are."""
    if got.ndim != 2 or got.shape != expected.shape:
        return None
    wrong = ~np.isclose(got, expected, rtol=tol.rtol, atol=tol.atol)
    rows = np.flatnonzero(wrong.any(axis=1))
    cols = np.flatnonzero(wrong.any(axis=0))
    if 0 < len(cols) < got.shape[1]:
        return f"only columns {', '.join(map(str, cols))} differ; the others are right"
    if 0 < len(rows) < got.shape[0]:
        return f"only rows {', '.join(map(str, rows))} differ; the others are right"
    return None


def singleton_dimensions(got: np.ndarray, expected: np.ndarray) -> str | None:
    """The right numbers with extra or missing size-1 dimensions."""
    if got.shape == expected.shape or got.size != expected.size:
        return None
    if tuple(d for d in got.shape if d != 1) != tuple(d for d in expected.shape if d != 1):
        return None
    return (
        f"the shape {got.shape} differs from {expected.shape} only by size-1 dimensions: "
        f"reshape the result to {expected.shape}"
    )


def nan_where_finite(got: np.ndarray, expected: np.ndarray) -> str | None:
    """NaN where a finite value is expected, and what usually makes it (`0 * inf`)."""
    if got.shape != expected.shape or not np.issubdtype(got.dtype, np.floating):
        return None
    bad = np.isnan(got) & np.isfinite(expected)
    if not bad.any():
        return None
    count = int(bad.sum())
    where = f"{count} entr{'ies' if count > 1 else 'y'}"
    if np.all(expected[bad] == 0):
        return (
            f"NaN in {where} where 0 is expected: `0 * inf` is NaN, so multiplying a matrix "
            "of zeros and ones by an infinity does not give a mask; set the entries to "
            "`-np.inf` directly (or use `np.where`)"
        )
    return (
        f"NaN in {where} where a finite value is expected: it comes from `0 * inf`, "
        "`inf - inf` or `0 / 0` in the computation"
    )
