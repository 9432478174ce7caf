"""Properties of the comparator and of the wire format, over generated arrays (Hypothesis).

The comparator's contract: finite expected entries within `atol + rtol·|expected|`; an
expected ±inf only by the same infinity; an expected NaN only by NaN; a NaN or infinity where a
finite number is expected never. The wire format's: every float64 bit pattern, shape and
structure comes back as it was sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.course.config import Tolerance
from grader.judge.compare import compare, compare_arrays
from grader.run.wire import FrameReader, Other, Seq, Value, encode_frame

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = Tolerance(rtol=1e-5, atol=1e-8)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
FINITE = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
NON_FINITE = st.sampled_from([np.inf, -np.inf, np.nan])


def arrays(elements: st.SearchStrategy[float]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, SHAPES, elements=elements)


@PROPS
@given(arrays(ANY_FLOAT))
def test_every_array_matches_itself(expected: np.ndarray) -> None:
    assert compare_arrays(expected, expected.copy(), TOL).ok
    assert compare(expected, expected.copy(), "exact", TOL).ok


@PROPS
@given(arrays(FINITE), st.data())
def test_an_expected_infinity_is_matched_only_by_itself(
    expected: np.ndarray, data: st.DataObject
) -> None:
    index = data.draw(st.tuples(*[st.integers(0, n - 1) for n in expected.shape]))
    sign = data.draw(st.sampled_from([1.0, -1.0]))
    expected[index] = sign * np.inf
    got = expected.copy()
    replacement = data.draw(st.one_of(FINITE, st.just(-sign * np.inf), st.just(np.nan)))
    got[index] = replacement
    verdict = compare_arrays(expected, got, TOL)
    assert not verdict.ok
    assert "infinite or NaN" in verdict.summary
    assert not compare(Seq("list", (expected,)), Seq("list", (got,)), "exact", TOL).ok


@PROPS
@given(arrays(FINITE), st.data())
def test_an_expected_nan_is_matched_by_nan_only(expected: np.ndarray, data: st.DataObject) -> None:
    index = data.draw(st.tuples(*[st.integers(0, n - 1) for n in expected.shape]))
    expected[index] = np.nan
    got = expected.copy()
    assert compare_arrays(expected, got, TOL).ok
    got[index] = data.draw(st.one_of(FINITE, st.sampled_from([np.inf, -np.inf])))
    assert not compare_arrays(expected, got, TOL).ok


@PROPS
@given(arrays(FINITE), st.data())
def test_non_finite_where_a_number_is_expected_fails(
    expected: np.ndarray, data: st.DataObject
) -> None:
    index = data.draw(st.tuples(*[st.integers(0, n - 1) for n in expected.shape]))
    got = expected.copy()
    got[index] = data.draw(NON_FINITE)
    verdict = compare_arrays(expected, got, TOL)
    assert not verdict.ok
    assert "NaN or infinite where the expected values are finite" in verdict.summary


@PROPS
@given(arrays(FINITE), st.floats(min_value=-0.99, max_value=0.99))
def test_within_tolerance_passes_and_far_outside_fails(
    expected: np.ndarray, fraction: float
) -> None:
    bound = TOL.atol + TOL.rtol * np.abs(expected)
    assert compare_arrays(expected, expected + fraction * bound, TOL).ok
    far = expected + 3 * bound
    assert not compare_arrays(expected, far, TOL).ok


@PROPS
@given(arrays(ANY_FLOAT), arrays(ANY_FLOAT))
def test_a_sequence_is_judged_as_its_items_are(first: np.ndarray, second: np.ndarray) -> None:
    """The quick path over a whole sequence agrees with comparing item by item."""
    expected = Seq("list", (first, first))
    got = Seq("list", (first.copy(), second))
    item_by_item = compare_arrays(first, second, TOL).ok if first.shape == second.shape else False
    assert compare(expected, got, "exact", TOL).ok is item_by_item


def values() -> st.SearchStrategy[Any]:
    """Trees a student's function can return: arrays, numbers, lists, tuples, None, strings."""
    leaves = st.one_of(
        st.none(),
        ANY_FLOAT,
        st.integers(-(2**53), 2**53),
        st.text(max_size=5),
        hnp.arrays(
            st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
            hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
        ),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple)
        ),
        max_leaves=8,
    )


def same(sent: Any, received: Value) -> bool:
    """Whether `received` is what the wire promises for `sent`: structure kept, numbers as
    float64 with identical bits, anything else as its type name."""
    if sent is None:
        return received is None
    if isinstance(sent, list | tuple):
        kind = "tuple" if isinstance(sent, tuple) else "list"
        return (
            isinstance(received, Seq)
            and received.kind == kind
            and len(received.items) == len(sent)
            and all(same(s, r) for s, r in zip(sent, received.items, strict=True))
        )
    if isinstance(sent, str):
        return received == Other("str")
    array = np.asarray(sent).astype(np.float64)
    return (
        isinstance(received, np.ndarray)
        and received.dtype == np.float64
        and received.shape == array.shape
        and received.tobytes() == array.tobytes()
    )


@PROPS
@given(values(), st.integers(1, 64))
def test_wire_round_trip_keeps_structure_and_bits(sent: Any, piece: int) -> None:
    data = encode_frame({"kind": "answer"}, {"value": sent})
    reader = FrameReader()
    frames = []
    for start in range(0, len(data), piece):  # arriving in pieces changes nothing
        frames += reader.feed(data[start : start + piece])
    assert len(frames) == 1 and reader.pending == 0
    header, decoded = frames[0]
    assert header == {"kind": "answer"}
    assert same(sent, decoded["value"])


@PROPS
@given(arrays(ANY_FLOAT))
def test_the_comparator_accepts_what_crossed_the_wire(expected: np.ndarray) -> None:
    """inf, -inf, NaN and -0.0 cross unchanged, so a correct answer sent by the child passes."""
    _, decoded = FrameReader().feed(encode_frame({}, {"value": expected}))[0]
    assert compare(expected, decoded["value"], "exact", TOL).ok
