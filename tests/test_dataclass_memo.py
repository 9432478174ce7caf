"""The methods dataclasses writes are compiled once and remembered (issue 19): a class made
with the memo has exactly the code the plain `exec` compiles (no flag of the memo's own
module leaks in), the next start compiles nothing, and an unreadable memo is compiled
afresh."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.course import dataclass_memo


@pytest.fixture
def memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(dataclass_memo, "_MEMO", {})
    monkeypatch.setattr(dataclass_memo, "_STATE", {"loaded": False, "compiled": 0})
    dataclass_memo.install()
    yield tmp_path / "cache"
    dataclass_memo.uninstall()


def make() -> type:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: list[int] = dataclasses.field(default_factory=list)
        label: str = "p"

    return Point


def test_a_class_made_with_the_memo_has_the_code_exec_compiles(memo: Path) -> None:
    remembered = make()
    assert dataclass_memo.compiled() > 0
    dataclass_memo.uninstall()
    plain = make()
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        ours, theirs = getattr(remembered, name), getattr(plain, name)
        assert ours.__code__ == theirs.__code__, name
        # without dont_inherit the memo's `from __future__ import annotations` would turn
        # these into strings
        assert ours.__annotations__ == theirs.__annotations__, name
    point = remembered(1, [2])
    assert repr(point) == repr(plain(1, [2])).replace(plain.__qualname__, remembered.__qualname__)
    assert repr(point).endswith("Point(x=1, y=[2], label='p')")
    assert point == remembered(1, [2]) and point != remembered(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]


def test_texts_met_again_are_not_compiled_again(memo: Path) -> None:
    make()
    first = dataclass_memo.compiled()
    make()
    assert dataclass_memo.compiled() == first


SCRIPT = """
from grader.course import dataclass_memo
dataclass_memo.install()
import grader.report, grader.course.config
print(dataclass_memo.compiled())
"""


def start(cache: Path) -> int:
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_the_next_start_compiles_nothing_and_a_broken_memo_is_made_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert start(cache) > 20  # the report's and the config's classes
    [kept] = cache.glob("dataclass-methods-*.marshal")
    assert start(cache) == 0
    kept.write_bytes(b"\x00 not marshal")
    assert start(cache) > 20
    assert start(cache) == 0


def test_a_memo_in_a_folder_others_can_write_to_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    start(cache)
    cache.chmod(0o777)
    assert start(cache) > 20
