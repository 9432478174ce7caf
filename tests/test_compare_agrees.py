"""`agrees` (the diagnosis's yes/no comparison) says exactly what `compare(...).ok` says, over
generated values: arrays with NaN and infinities, sequences of them, other values, both modes
and tolerances up to ones so large that `rtol·|expected|` overflows."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.course.config import Tolerance
from grader.judge.compare import agrees, compare
from grader.run.wire import Other, Seq, Value

PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ENTRIES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 1e308, -1e308, np.inf, -np.inf, np.nan]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
ARRAYS = hnp.arrays(np.float64, SHAPES, elements=ENTRIES)
LEAVES = st.one_of(ARRAYS, st.none(), st.just(Other("str")))
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.builds(
        Seq, st.sampled_from(["list", "tuple"]), st.lists(inner, max_size=3).map(tuple)
    ),
    max_leaves=6,
)
TOLERANCES = st.builds(
    Tolerance,
    rtol=st.sampled_from([0.0, 1e-5, 1.0, 1e10]),
    atol=st.sampled_from([0.0, 1e-8, 1.0]),
)


def near(value: Value, data: st.DataObject) -> Value:
    """The same tree, each array perturbed in some entries (or kept bit for bit)."""
    if isinstance(value, np.ndarray):
        changed = value.copy()
        for index in np.ndindex(value.shape):
            if data.draw(st.booleans()):
                changed[index] = data.draw(ENTRIES)
        return changed
    if isinstance(value, Seq):
        return Seq(value.kind, tuple(near(item, data) for item in value.items))
    return value


@PROPS
@given(VALUES, TOLERANCES, st.sampled_from(["exact", "squeeze"]), st.data())
def test_agrees_is_compare_ok(
    expected: Value, tol: Tolerance, mode: str, data: st.DataObject
) -> None:
    got = data.draw(st.one_of(st.just(expected), VALUES, st.builds(lambda: near(expected, data))))
    assert agrees(expected, got, mode, tol) == compare(expected, got, mode, tol).ok


def test_overflowing_tolerance_with_an_infinity_and_a_nan_is_judged_as_compare_does() -> None:
    # Within an infinite bound (rtol·1e308 overflows) an infinity passes entry by entry, yet
    # with a NaN expected elsewhere the array fails as having an infinity where a finite
    # number is expected: `agrees` must not call it close.
    tol = Tolerance(rtol=1e10, atol=0.0)
    expected = np.array([1e308, np.nan])
    got = np.array([np.inf, np.nan])
    assert not compare(expected, got, "exact", tol).ok
    assert not agrees(expected, got, "exact", tol)


def test_a_bit_identical_answer_passes_even_with_nan() -> None:
    tol = Tolerance()
    expected = Seq("tuple", (np.array([1.0, np.nan]), np.array([[np.inf]])))
    got = Seq("tuple", (np.array([1.0, np.nan]), np.array([[np.inf]])))
    assert compare(expected, got, "exact", tol).ok
    assert agrees(expected, got, "squeeze", tol)
