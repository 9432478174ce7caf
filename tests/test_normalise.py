"""A reference's inputs are normalised as the wire would carry them: a float64 array is
copied directly, and the copy is what the wire gives back (shape, order, every bit)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.judge.reference import normalise
from grader.run.wire import MAX_ELEMENTS, Other, decode_frame, encode_frame


def through_the_wire(obj: object) -> object:
    frame = encode_frame({}, {"v": obj})
    head_len = int.from_bytes(frame[:4], "big")
    return decode_frame(frame[8 : 8 + head_len], frame[8 + head_len :])[1]["v"]


def same(got: object, want: object) -> bool:
    if isinstance(want, np.ndarray):
        return (
            isinstance(got, np.ndarray)
            and got.dtype == want.dtype
            and got.shape == want.shape
            and got.flags.c_contiguous
            and got.tobytes() == want.tobytes()
        )
    return got == want


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
    st.sampled_from(["as is", "transposed", "every other row", "fortran"]),
)
def test_a_float_array_is_what_the_wire_gives_back(array: np.ndarray, how: str) -> None:
    if how == "transposed":
        array = array.T
    elif how == "every other row" and array.ndim:
        array = array[::2]
    elif how == "fortran":
        array = np.asfortranarray(array)
    got, want = normalise(array), through_the_wire(array)
    assert same(got, want)
    if array.size:
        assert got is not array and not np.shares_memory(got, array)  # its own copy


def test_what_the_wire_would_not_carry_whole_is_still_its_words() -> None:
    huge = np.zeros(MAX_ELEMENTS + 1)
    assert isinstance(normalise(huge), Other) and normalise(huge) == through_the_wire(huge)
    for other in (np.arange(6).reshape(2, 3), [np.ones(2), 3.0], 2.5, None, np.float32(1.5)):
        got, want = normalise(other), through_the_wire(other)
        assert repr(got) == repr(want)
