"""A decoded array holds its own numbers only: a small answer kept from a frame (a
reference's output, a variant's) does not keep the frame's large arguments alive."""

from __future__ import annotations

import numpy as np

from grader.run.wire import FrameReader, encode_frame


def test_a_kept_array_holds_only_its_own_numbers() -> None:
    big = np.arange(100_000, dtype=float).reshape(1000, 100)
    small = np.array([[1.5, -2.0]])
    frame = encode_frame({"kind": "result"}, {"value": small, "args": [big]})
    [(_, values)] = FrameReader().feed(frame)
    value = values["value"]
    assert isinstance(value, np.ndarray)
    np.testing.assert_array_equal(value, small)
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert root.base is None and root.nbytes == small.nbytes
    value[0, 0] = 7.0  # its own: writing to it changes nothing else
    assert value.flags.writeable
