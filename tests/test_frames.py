"""The child's frames parsed once, at the parent's side, into one dataclass per kind; the
bytes they come in are the wire format's, unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from grader.judge.score import location_of
from grader.run import wire
from grader.run.frames import (
    MOST_FIXES,
    CellFrame,
    CellsDoneFrame,
    MissingFrame,
    OtherFrame,
    ResultFrame,
    parse_frames,
)
from grader.run.wire import FrameReader, WireError, encode_frame


def test_each_kind_becomes_its_dataclass_with_the_fields_the_child_sent() -> None:
    error = {"type": "KeyError", "message": "'q'", "where": {"cell": 3, "line": 1}}
    data = b"".join(
        [
            encode_frame({"kind": "cell", "cell": 2, "scalar_fixes": [[2, 5]]}, {}),
            encode_frame({"kind": "cell", "cell": 3, "error": error}, {}),
            encode_frame({"kind": "missing", "target": "softmax", "found": "x" * 90}, {}),
            encode_frame(
                {"kind": "result", "target": "f", "case": 4, "status": "ok", "digest": "ab"},
                {"value": np.arange(3.0)},
            ),
            encode_frame({"kind": "result", "target": "f", "case": 5, "status": "timeout"}, {}),
            encode_frame({"kind": "cells_done", "output": "hi\x1b[2J"}, {}),
            encode_frame({"kind": "done", "scalar_fixes": [[1, 1]]}, {}),
        ]
    )
    cell, failed, missing, ok, late, output, done = parse_frames(FrameReader().feed(data))
    assert cell == CellFrame(2, None, frozenset({(2, 5)}))
    assert failed == CellFrame(3, error)
    assert isinstance(missing, MissingFrame) and missing.target == "softmax"
    assert len(missing.found) == 41 and missing.found.endswith("…")  # bounded, as before
    assert isinstance(ok, ResultFrame) and (ok.target, ok.case, ok.status) == ("f", 4, "ok")
    assert ok.digest == "ab" and np.array_equal(np.asarray(ok.values["value"]), np.arange(3.0))
    assert isinstance(late, ResultFrame) and late.status == "timeout" and late.error is None
    assert output == CellsDoneFrame("hi?[2J")
    assert done == OtherFrame("done", frozenset({(1, 1)}))


def test_what_the_child_got_wrong_becomes_safe_defaults() -> None:
    forged = {"kind": "result", "target": 7, "case": True, "status": "passed!", "digest": 3}
    frames = [(forged, {}), ({"kind": "cell", "cell": "1", "scalar_fixes": "no"}, {})]
    result, cell = parse_frames(frames)
    assert isinstance(result, ResultFrame)
    assert (result.target, result.case, result.status, result.digest) == ("7", -1, "error", None)
    assert cell == CellFrame(-1, None, frozenset())
    (unknown,) = parse_frames([({"kind": ["x"]}, {})])
    assert unknown == OtherFrame("")


def test_numbers_no_notebook_holds_and_floods_of_fixes_or_frames_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A `<cell 9223372036854775808>` of the student's own compile() reached the gradebook
    # (SQLite refused it: the class lost its grades); a forged list of fixes was a note each.
    huge = 2**63
    error = {"type": "ValueError", "message": "boom", "where": {"cell": huge, "line": 10**400}}
    fixes = [[3, line] for line in range(1, 10_001)]
    frames = [({"kind": "cell", "cell": huge, "error": error, "scalar_fixes": fixes}, {})]
    (cell,) = parse_frames(frames)
    assert isinstance(cell, CellFrame) and cell.cell == -1
    assert location_of(error) is None
    assert len(cell.scalar_fixes) == MOST_FIXES
    # Empty frames by the million: refused past MAX_FRAMES, as bytes past MAX_STREAM_BYTES.
    monkeypatch.setattr(wire, "MAX_FRAMES", 100)
    tiny = encode_frame({}, {})
    reader = FrameReader()
    assert len(reader.feed(tiny * 100)) == 100
    with pytest.raises(WireError, match="more than 100 frames"):
        reader.feed(tiny)


def test_the_fixes_of_all_frames_together_are_bounded_too() -> None:
    from grader.judge.score import Answers
    from grader.run.sandbox import ChildRun

    frames = [
        encode_frame({"kind": "cell", "cell": 2, "scalar_fixes": [[c, i] for i in range(n)]}, {})
        for c, n in enumerate((10, 64, 64, 64), start=1)
    ]
    answers = Answers.from_run(ChildRun(raw=b"".join(frames), finished=True))
    assert len(answers.scalar_fixes) == MOST_FIXES
