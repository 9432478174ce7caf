"""A cached course's derived fingerprints are decoded per target, the first time that target's
are read (grader/judge/lazy_prints.py): judging decodes only the targets it explains, and
what it decodes is what the eager read of the whole file gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.engine import require
from grader.judge import derived, expected
from grader.judge.fingerprints import catalogue_for
from grader.judge.lazy_prints import LazyPrints
from grader.judge.pair_store import pairs_of
from grader.run.wire import FrameReader, WireError, decode_frame, encode_frame, split_frames
from grader.run.workers import shared_workers

ASSIGNMENT = "masked_attention"


def build(config: Config) -> expected.Expected:
    spec = config.assignment(ASSIGNMENT)
    expected._EXPECTED.clear()
    return expected.build_expected(spec, build_cases(spec), shared_workers(require("auto"), ()))


def _singles(tmp_path: Path) -> Path:
    (path,) = [p for p in tmp_path.glob(f"derived-{ASSIGNMENT}-*.bin") if "-pairs-" not in p.name]
    return path


def test_a_cached_start_decodes_only_the_targets_read(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(derived.CACHE_ENV, str(tmp_path))
    build(config)  # computes and caches
    decoded: list[str] = []
    real = derived._decoded

    def counted(head: bytes, body: bytes) -> object:
        found = real(head, body)
        decoded.append(found[0] if found else "?")
        return found

    monkeypatch.setattr(derived, "_decoded", counted)
    second = build(config)
    prints = second.fingerprints
    assert isinstance(prints, LazyPrints) and prints.made == ()
    assert decoded == []  # nothing decoded before a target is read
    names = list(prints)
    assert len(names) > 1
    prints[names[0]]
    assert prints.made == (names[0],)
    assert decoded and set(decoded) == {names[0]}
    prints[names[0]]
    assert prints.made == (names[0],)  # decoded once


def test_a_lazily_decoded_target_is_what_the_eager_read_gives(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(derived.CACHE_ENV, str(tmp_path))
    first = build(config)
    eager = derived._load(_singles(tmp_path))
    assert eager is not None
    spec = config.assignment(ASSIGNMENT)
    catalogue = catalogue_for(spec)
    lazy = derived.derived_fingerprints(spec, build_cases(spec), catalogue, {}, {}, None)  # type: ignore[arg-type]
    assert isinstance(lazy, LazyPrints)
    assert list(lazy) == [t.name for t in spec.targets]
    for name in lazy:
        want, got = eager.get(name, []), lazy[name]
        assert [(f.mistake, f.origin, f.also) for f in got] == [
            (f.mistake, f.origin, f.also) for f in want
        ]
        assert all(str(a.outputs) == str(b.outputs) for a, b in zip(got, want, strict=True))
    second = build(config)
    for name, computed in first.fingerprints.items():  # and what the child's run gave
        again = second.fingerprints[name]
        assert [(f.mistake, f.origin) for f in again] == [(f.mistake, f.origin) for f in computed]
        assert all(str(a.outputs) == str(b.outputs) for a, b in zip(again, computed, strict=True))
        assert len(pairs_of(again)) == len(pairs_of(computed))


def test_the_mapping_makes_each_target_once_and_knows_no_other() -> None:
    made: list[str] = []
    prints = LazyPrints(["a", "b"], lambda name: made.append(name) or [])
    assert len(prints) == 2 and list(prints) == ["a", "b"] and made == []
    assert prints["b"] == [] and prints["b"] == [] and made == ["b"]
    with pytest.raises(KeyError):
        prints["c"]
    assert dict(prints) == {"a": [], "b": []} and made == ["b", "a"]


def test_threads_reading_one_target_at_once_make_it_once() -> None:
    import threading
    import time

    made: list[str] = []

    def slow(name: str) -> list[object]:
        made.append(name)
        time.sleep(0.05)  # long enough for every thread to ask before it is made
        return []

    prints = LazyPrints(["a"], slow)  # type: ignore[arg-type]
    threads = [threading.Thread(target=lambda: prints["a"]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == ["a"]


def test_frames_split_undecoded_are_the_frames_the_reader_decodes() -> None:
    data = b"".join(
        encode_frame({"target": t}, {"0": [np.arange(6.0).reshape(2, 3) * i, None]})
        for i, t in enumerate("xyz")
    )
    spans = split_frames(data)
    frames = FrameReader().feed(data)
    assert len(spans) == len(frames) == 3
    for (head, body), (header, values) in zip(spans, frames, strict=True):
        again_header, again_values = decode_frame(head, body)
        assert again_header == header and repr(again_values) == repr(values)
    with pytest.raises(WireError):
        split_frames(data[:-3])
    assert split_frames(b"") == []


def test_a_frames_target_is_read_from_its_header_whatever_its_order() -> None:
    frame = derived._frame("attention", [])
    assert frame is not None
    ((head, _),) = split_frames(frame)
    assert derived._target_of(head) == "attention"  # as _frame writes it: read from its start
    assert derived._target_of(b'{"prints": [], "target": "t"}') == "t"  # parsed whole
    assert derived._target_of(b'{"target": 3}') is None
    assert derived._target_of(b'{"target": "cut') is None
    assert derived._target_of(b'{"prints": []}') is None
