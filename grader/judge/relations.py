"""Generic relations between a wrong output and the right one, for mistakes no catalogue knows.

Each function looks at plain arrays (already normalised) and returns a sentence or None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from grader.course.config import Tolerance


def _factors(pairs: Sequence[tuple[np.ndarray, np.ndarray]], tol: Tolerance) -> list[float] | None:
    """Each pair's c where every entry got is c × the expected one; None when one is not."""
    factors = []
    for got, expected in pairs:
        denom = float(np.vdot(expected, expected))
        if got.shape != expected.shape or denom == 0:
            return None
        factor = float(np.vdot(got, expected)) / denom
        if not np.allclose(got, factor * expected, rtol=tol.rtol * 10, atol=tol.atol * 10):
            return None
        factors.append(factor)
    return factors


def constant_factor(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]],
    tol: Tolerance,
    sizes: Sequence[Mapping[str, int]] | None = None,
) -> str | None:
    """Every entry is c × the expected one (c may depend on the case). A c that changes is
    said to depend on the input size only when `sizes` (each case's) show it constant among
    cases of one size and changing with the size, or one of the sizes itself (size_factor);
    on the data when two cases of one size differ; else as changing from case to case and
    none of the sizes (N, 1/N, √N, 1/√N of each, as size_factor tries), so computed from
    the values: one case of each size cannot prove more."""
    factors = _factors(pairs, tol)
    if factors is None:
        return None
    if not factors or all(abs(f - 1) < 1e-6 for f in factors):
        return None
    if _alike(factors):
        return f"off by a constant factor: every entry is {factors[0]:.4g} × the expected value"
    listed = ", ".join(f"{f:.4g}" for f in factors)
    by_size = _by_size(factors, sizes)
    if any(not _alike(same) for same in by_size):
        return (
            f"off by a factor that depends on the data, not only on the sizes (×{listed} in "
            "the cases in turn; cases of one size differ): something computed from the values, "
            "such as a sum or a norm, multiplies the result in or divides it out"
        )
    if not by_size:  # no sizes to tell by
        return f"off by a factor that changes from case to case (×{listed} in the cases in turn)"
    if any(len(same) > 1 for same in by_size) or (sizes and size_factor(pairs, sizes, tol)):
        return f"off by a factor that depends on the input size (×{listed} in the cases in turn)"
    return (
        f"off by a factor that changes from case to case and is none of the sizes (×{listed} "
        "in the cases in turn): something computed from the values, such as a sum or a norm, "
        "multiplies the result or divides it"
    )


def _alike(factors: Sequence[float]) -> bool:
    """Whether the factors are one number (to 1e-9 of the first)."""
    return max(factors) - min(factors) < 1e-9 * max(1.0, abs(factors[0]))


def _by_size(
    factors: Sequence[float], sizes: Sequence[Mapping[str, int]] | None
) -> list[list[float]]:
    """The factors grouped by their case's sizes (none when the sizes are not known)."""
    if sizes is None or len(sizes) != len(factors):
        return []
    groups: dict[tuple[tuple[str, int], ...], list[float]] = {}
    for factor, size in zip(factors, sizes, strict=True):
        groups.setdefault(tuple(sorted(size.items())), []).append(factor)
    return list(groups.values())


def size_factor(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]],
    sizes: Sequence[Mapping[str, int]],
    tol: Tolerance,
) -> str | None:
    """Every case off by a factor that is one of its sizes (N, 1/N, √N, 1/√N), and the sizes
    differ between cases: a count multiplied in or divided out, as `np.mean` for `np.sum`."""
    factors = _factors(pairs, tol)
    if factors is None:
        return None
    if len(factors) < 2 or len(sizes) != len(factors):
        return None
    forms = (("{}", 1.0), ("1/{}", -1.0), ("√{}", 0.5), ("1/√{}", -0.5))
    for name in sizes[0]:
        values = [s[name] for s in sizes if name in s]
        if len(values) != len(sizes) or len(set(values)) < 2 or 0 in values:
            continue
        for form, power in forms:
            if all(np.isclose(f, float(v) ** power) for f, v in zip(factors, values, strict=True)):
                said = form.format(name)
                return (
                    f"the factor is {said} in every case ({name} = "
                    f"{', '.join(map(str, values))}): a count of {name} multiplied in or divided "
                    f"out where it should not be (`np.mean` where `np.sum` is meant divides by it)"
                )
    return None


def sums_to_one(got: np.ndarray, axis_name: str) -> str | None:
    """For softmax-like outputs: do the weights sum to one along the axis they must? Not
    said of weights holding NaN or an infinity ("sums from nan to nan", r54): the sentence on
    NaN says where those come from."""
    if got.dtype.kind in "fc" and not np.all(np.isfinite(got)):
        return None
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
    if abs(float(np.sum(got)) - 1) < 1e-6:
        return (
            f"the whole matrix sums to one, not each of the {axis_name}: the sum was taken "
            f"without `axis=`; sum along axis {axis} (with `keepdims=True`)"
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


def _argument_kind(args: Sequence[object], position: int) -> str:
    """How a case passes one argument: left out, a flag's value (`False`), or some value."""
    if position >= len(args):
        return "left out"
    value = args[position]
    return repr(value) if value is None or isinstance(value, bool) else "given"


def optional_argument(
    passed: Sequence[bool], args: Sequence[Sequence[object]], parameters: Sequence[str]
) -> tuple[str, str] | None:
    """(parameter, how) when the failing cases are exactly those that pass one argument one
    way: leave it out (`mask`), or give a flag one value (`scaled=False`), and some pass."""
    if all(passed) or not any(passed):
        return None
    failing = [not ok for ok in passed]
    for position, name in enumerate(parameters):
        kinds = [_argument_kind(a, position) for a in args]
        for kind in dict.fromkeys(kinds):
            if [k == kind for k in kinds] == failing and len(set(kinds)) > 1:
                return name, kind
    return None


def moved(before: np.ndarray, after: np.ndarray) -> bool:
    """Whether a reference's result changed when one input was perturbed (a probe call)."""
    return before.shape != after.shape or not np.allclose(after, before, rtol=1e-9, atol=1e-12)


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
        if moved(reference_base, ref_probe) and position < len(parameters):
            ignored.append(f"`{parameters[position]}`")
    if not ignored:
        return None
    it = "it" if len(ignored) == 1 else "any of them"
    return f"ignores {', '.join(ignored)}: changing {it} does not change the output, but it should"


def differing_lines(
    got: np.ndarray, expected: np.ndarray, tol: Tolerance, looped: bool = True
) -> str | None:
    """For a matrix of the right shape: which rows or columns are wrong, when not all are;
    a loop or slice that stops early or starts late is suggested only when `looped` (the
    function has a loop or a slice)."""
    found = _wrong_lines(got, expected, tol)
    if found is None:
        return None
    name, lines, count, infinite = found
    said = f"only {name} {', '.join(map(str, lines))} differ; the others are right"
    hint = "" if infinite else _suggestion(name, lines, count, looped)
    if not infinite and _all_as_first(got, name) and lines[0] != 0:
        first = name[:-1]
        hint = (
            f", and every {first} equals {first} 0: what changes from one {first} to the "
            f"next is not used (an index written as 0, or a value set once before the "
            f"loop)"
        )
    return f"{said}{hint}"


def lines_in_every_case(
    pairs: list[tuple[np.ndarray, np.ndarray]], tol: Tolerance, looped: bool = True
) -> str | None:
    """`differing_lines` said of the failing cases together: the first case's words when
    every case is wrong in the same rows (or columns), or every row is a copy of row 0;
    "only the last column differs in every case" when the same end of each is wrong in
    cases of several sizes; None when each case is wrong in its own way, a pattern that is
    chance (a ReLU's wrong negative entries fell in case 1's last columns)."""
    if not pairs:
        return None
    first = differing_lines(*pairs[0], tol, looped)
    if first is None or len(pairs) == 1:
        return first
    found = [_wrong_lines(got, want, tol) for got, want in pairs]
    if any(f is None for f in found):
        return None
    shapes = [f for f in found if f is not None]
    name = shapes[0][0]
    if any(f[0] != name for f in shapes):
        return None
    if all(f[1] == shapes[0][1] for f in shapes):
        return first
    if any(f[3] for f in shapes):  # a mask's infinities, in places that move with the size
        return None
    if all(_all_as_first(got, name) for got, _ in pairs) and all(f[1][0] != 0 for f in shapes):
        return first
    counts = {len(f[1]) for f in shapes}
    single = name[:-1]
    for end, late in (("last", "stops early"), ("first", "starts late")):
        if all(_at_end(end, lines, count) for _, lines, count, _ in shapes):
            what = (
                f"only the {end} {single} differs"
                if counts == {1}
                else f"only the {end} {counts.pop()} {name} differ"
                if len(counts) == 1
                else f"only {name} at the {'end' if end == 'last' else 'start'} differ"
            )
            why = f", as when a loop or slice {late}" if looped else ""
            return f"{what} in every case; the others are right{why}"
    return None


def _at_end(end: str, lines: list[int], count: int) -> bool:
    """Whether `lines` (sorted) are the last (or first) of `count`, without a gap."""
    if end == "last":
        return lines == list(range(count - len(lines), count))
    return lines == list(range(len(lines)))


def _wrong_lines(
    got: np.ndarray, expected: np.ndarray, tol: Tolerance
) -> tuple[str, list[int], int, bool] | None:
    """The columns (else the rows) that are wrong when not all are, how many there are, and
    whether only infinite entries differ (their pattern is the mask's, not a loop's)."""
    if got.ndim != 2 or got.shape != expected.shape:
        return None
    wrong = ~np.isclose(got, expected, rtol=tol.rtol, atol=tol.atol)
    rows = np.flatnonzero(wrong.any(axis=1))
    cols = np.flatnonzero(wrong.any(axis=0))
    infinite = bool(np.isinf(expected[wrong]).all())
    for name, lines, count in (("columns", cols, got.shape[1]), ("rows", rows, got.shape[0])):
        if 0 < len(lines) < count:
            return name, [int(i) for i in lines], count, infinite
    return None


def rows_as_first(got: np.ndarray, expected: np.ndarray, tol: Tolerance) -> bool:
    """Row 0 is right, some other row is wrong, and every row is the same as row 0."""
    if got.ndim != 2 or got.shape != expected.shape or got.shape[0] < 2:
        return False
    right = np.isclose(got, expected, rtol=tol.rtol, atol=tol.atol).all(axis=1)
    return bool(right[0] and not right.all() and _all_as_first(got, "rows"))


def _all_as_first(got: np.ndarray, name: str) -> bool:
    """Every row (or column) of `got` is the same as its first."""
    lines = got if name == "rows" else got.T
    return bool(np.allclose(lines, lines[:1], rtol=1e-9, atol=1e-12))


def repeated_items(got_length: int, expected_length: int) -> str | None:
    """A list of N×N items where N were expected: one item added per pair, not per item."""
    if expected_length < 2 or got_length != expected_length**2:
        return None
    return (
        f"{got_length} items where {expected_length} are expected ({expected_length} × "
        f"{expected_length}): an item is added once per pass of the inner loop; add it once "
        "per pass of the outer loop, after the inner one ends"
    )


def _suggestion(name: str, lines: list[int], count: int, looped: bool = True) -> str:
    """What a pattern of wrong rows or columns usually means."""
    if len(lines) == 1:
        return f": look at how {name[:-1]} {lines[0]} is computed (an index that is off)"
    if not looped:
        return ""
    for end, late in (("last", "stops early"), ("first", "starts late")):
        if _at_end(end, lines, count):
            return f": the {end} {name} are wrong, as when a loop or slice {late}"
    return ""


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


def nan_where_finite(got: np.ndarray, expected: np.ndarray, infinities: bool = True) -> str | None:
    """NaN where a finite value is expected, and what usually makes it (`0 * inf`); the
    mask's advice only with `infinities` in play (the code writes one, an input holds one),
    never for an entropy's `0 * np.log(0)`."""
    if got.shape != expected.shape or not np.issubdtype(got.dtype, np.floating):
        return None
    bad = np.isnan(got) & np.isfinite(expected)
    if not bad.any():
        return None
    count = int(bad.sum())
    where = f"{count} entr{'ies' if count > 1 else 'y'}"
    if np.all(expected[bad] == 0) and infinities:
        return (
            f"NaN in {where} where 0 is expected: `0 * inf` is NaN, so multiplying a matrix "
            "of zeros and ones by an infinity does not give a mask; set the entries to "
            "`-np.inf` directly (or use `np.where`)"
        )
    expected_there = "0 is" if np.all(expected[bad] == 0) else "a finite value is"
    return (
        f"NaN in {where} where {expected_there} expected: it comes from `0 * inf` "
        "(`0 * np.log(0)` is one), `inf - inf`, `0 / 0` or `inf / inf` (an `np.exp` that "
        "overflowed, divided by a sum of such) in the computation"
    )


def shape_relations(got: np.ndarray, expected: np.ndarray) -> list[str]:
    """What a wrong shape or order says: a D×1 column and a length-D vector broadcast into
    D×D; a reduction without `axis` that left one number; the right rows or columns in
    another order; a large finite number where an infinity belongs."""
    found = [
        said
        for check in (_broadcast_square, _whole_reduction, _permuted, _finite_for_infinite)
        if (said := check(got, expected)) is not None
    ]
    return found


def _broadcast_square(got: np.ndarray, expected: np.ndarray) -> str | None:
    n = expected.size
    column = expected.ndim == 1 or (expected.ndim == 2 and 1 in expected.shape)
    if not (column and n > 1 and got.shape == (n, n)):
        return None
    said = (
        f"the result is {n}×{n} where {n} numbers (shape {expected.shape}) are expected: an "
        f"operation between a {n}×1 column and a length-{n} vector (shape ({n},)) broadcasts "
        "them into a square; keep both as columns (or both 1-D) before adding or multiplying"
    )
    wanted = expected.reshape(-1)
    for line, where in ((np.diag(got), "its diagonal"), (got[:, 0], "its first column")):
        if np.allclose(line, wanted, rtol=1e-6, atol=1e-9):
            return f"{said}; {where} holds the expected values"
    return said


def _whole_reduction(got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.size != 1 or expected.size <= 1:
        return None
    return (
        f"returns one number where an array of shape {expected.shape} is expected: a "
        "reduction without `axis` (`np.sum(x)`, `x.max()`) works over the whole array; "
        "give it the axis it must work along"
    )


def _permuted(got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.shape != expected.shape or got.ndim not in (1, 2) or got.shape[0] < 2:
        return None
    if np.allclose(got, expected, rtol=1e-6, atol=1e-9):
        return None
    for axis, name in ((0, "rows"), (1, "columns")):
        if axis >= got.ndim:
            continue
        lines = np.moveaxis(got, axis, 0)
        wanted = np.moveaxis(expected, axis, 0)
        order = []
        for line in lines:
            match = [j for j, w in enumerate(wanted) if np.allclose(line, w, rtol=1e-6, atol=1e-9)]
            if not match:
                break
            order.append(match[0])
        else:
            if sorted(order) == list(range(len(wanted))):
                what = name if got.ndim == 2 else "values"
                turn = ", ".join(map(str, order))
                return (
                    f"the right {what} in another order (the expected {turn} in turn): an "
                    "index or the order of a loop is off, or the inputs were read in "
                    "another order"
                )
    return None


LARGE_FINITE = "a large finite number"  # how _finite_for_infinite's sentence starts


def _finite_for_infinite(got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.shape != expected.shape:
        return None
    infinite = np.isinf(expected)
    if not infinite.any() or not np.all(np.isfinite(got[infinite])):
        return None
    same_sign = np.sign(got[infinite]) == np.sign(expected[infinite])
    if not (same_sign.all() and np.all(np.abs(got[infinite]) >= 1e3)):
        return None
    value = float(got[infinite].flat[0])
    return (
        f"{LARGE_FINITE} ({value:.4g}) where ±inf is expected: use `-np.inf` (or "
        "`np.inf`) itself; a big number is not the same after scaling or adding"
    )


_BROADCAST = re.compile(r"could not be broadcast together with shapes ((?:\([\d,]*\) ?)+)")


def _broadcast_shapes(message: str) -> list[tuple[int, ...]]:
    """The shapes NumPy's "could not be broadcast" error names, or none for another error."""
    match = _BROADCAST.search(message)
    if match is None:
        return []
    return [
        tuple(int(n) for n in shape.split(",") if n)
        for shape in re.findall(r"\(([\d,]*)\)", match.group(1))
    ]


_AXIS_BEYOND = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")


def axis_beyond(message: str) -> str | None:
    """For NumPy's AxisError: the code names an axis that an input of some case lacks (an
    `axis=1` written for a matrix, given one row of scores); `axis=-1` is the last axis of
    an array of any number of dimensions. None for any other message."""
    found = _AXIS_BEYOND.search(message)
    if found is None:
        return None
    axis, dims = int(found[1]), int(found[2])
    said = (
        f"`axis={axis}` names an axis that an array of {dims} "
        f"dimension{'s' * (dims != 1)} does not have, and some cases pass one"
    )
    if axis < 0:
        return said
    return f"{said}: `axis=-1` is the last axis, whatever the number of dimensions"


def dropped_axis(message: str, sums_to_one: str | None = None) -> str | None:
    """For NumPy's "could not be broadcast" error between a shape and that shape less one
    axis, e.g. (5,6) and (5,): the smaller is a sum or maximum taken along that axis, which
    dropped it, so it no longer lines up; `keepdims=True` keeps it as size 1. A function
    whose result sums to one down its columns (`sums_to_one: columns`) that lost its last
    axis summed along the rows: told to sum along axis 0, not to keep the wrong axis."""
    shapes = _broadcast_shapes(message)
    for big in shapes:
        for small in shapes:
            for axis in range(len(big)):
                if len(big) > 1 and small == big[:axis] + big[axis + 1 :]:
                    kept = (*big[:axis], 1, *big[axis + 1 :])
                    said = (
                        f"shapes {big} and {small} do not line up: the {small} looks like a sum "
                        f"or maximum along axis {axis}, which dropped that axis"
                    )
                    if sums_to_one == "columns" and len(big) == 2 and axis == 1:
                        return (
                            f"{said}; this function works down each column, so take it along "
                            "axis 0 and keep that axis: `axis=0, keepdims=True`"
                        )
                    return (
                        f"{said}; pass `keepdims=True` to keep it (shape {kept}) so that it "
                        f"applies to each {'row' if axis == len(big) - 1 else 'slice'}"
                    )
    return None


def elementwise_not_matmul(message: str, line: str) -> str | None:
    """For NumPy's "could not be broadcast" error between two matrices that a matrix product
    would take, (4,3) and (3,3), raised on a line that multiplies with `*`: `*` multiplies
    entry by entry, and `@` is the matrix product."""
    if not re.search(r"(?<![*])[*](?![*=])", line):
        return None
    shapes = _broadcast_shapes(message)
    if len(shapes) != 2 or any(len(shape) != 2 for shape in shapes):
        return None
    (rows, inner), (inner_right, columns) = shapes
    if inner != inner_right:
        return None
    return (
        f"`*` multiplies entry by entry, so shapes {shapes[0]} and {shapes[1]} do not line up; "
        f"as a matrix product they do ({rows}×{inner} times {inner}×{columns}): write `@` "
        "where a matrix product is meant"
    )


_MATMUL = re.compile(
    r"matmul: Input operand 1 has a mismatch in its core dimension 0.*"
    r"\(size (\d+) is different from (\d+)\)"
)


_DOT = re.compile(r"shapes (\([\d,]*\)) and (\([\d,]*\)) not aligned: (\d+) \(dim \d+\) != (\d+)")


def matmul_sizes(message: str) -> str | None:
    """For NumPy's error on a matrix product (`@`, `np.matmul`, `np.dot`) whose inner sizes
    differ: which sizes met, and what usually makes them differ."""
    if match := _MATMUL.search(message):
        rows, columns = match.groups()
        shapes = ""
    elif match := _DOT.search(message):
        left, right, columns, rows = match.groups()
        shapes = f" (shapes {left} and {right})"
    else:
        return None
    return (
        f"a matrix product `A @ B` met a left side with {columns} columns and a right side "
        f"with {rows} rows{shapes}; these must be equal: check the shapes of both sides (a "
        "matrix transposed, the sides swapped, or arrays joined along the other axis)"
    )
