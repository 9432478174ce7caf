"""A config the schema accepted is remembered by content (issue 19): the next start does not
compile the schema again; a refused config is never remembered and says why every time, and
a changed config is validated again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import fastjsonschema
import pytest

from grader.course import config as config_module
from grader.course.config import load_config
from grader.errors import ConfigError

from conftest import repo_config_raw


@pytest.fixture
def compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Each compile of the schema, in a cache folder of the test's own."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[object] = []
    real = fastjsonschema.compile

    def compile(schema: object) -> object:
        seen.append(schema)
        return real(schema)

    monkeypatch.setattr(fastjsonschema, "compile", compile)
    config_module._fast_validator.cache_clear()
    yield seen
    config_module._fast_validator.cache_clear()


def write(folder: Path, raw: dict[str, object]) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "config.yaml"
    path.write_text(json.dumps(raw))
    return path


def fresh_load(path: Path) -> object:
    config_module._fast_validator.cache_clear()  # as a new process
    return load_config(path)


def test_an_accepted_config_is_not_compiled_for_again(
    compiles: list[object], tmp_path: Path
) -> None:
    path = write(tmp_path / "course", repo_config_raw())
    first = fresh_load(path)
    assert len(compiles) == 1
    assert repr(fresh_load(path)) == repr(first)
    assert len(compiles) == 1, "the schema was compiled again for the same config"


def test_a_changed_config_is_validated_again(compiles: list[object], tmp_path: Path) -> None:
    raw = repo_config_raw()
    fresh_load(write(tmp_path / "course", raw))
    raw["defaults"]["time_limit"] = {"submission": 7, "cell": 1, "call": 0.5}
    fresh_load(write(tmp_path / "course", raw))
    assert len(compiles) == 2


def test_a_refused_config_says_why_every_time(compiles: list[object], tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["defaults"]["time_limit"] = {"submission": "soon"}
    path = write(tmp_path / "course", raw)
    said = []
    for _ in range(2):
        with pytest.raises(ConfigError) as info:
            fresh_load(path)
        said.append(str(info.value))
    assert said[0] == said[1] and "defaults.time_limit.submission" in said[0]
    assert len(compiles) == 2
    assert not list((tmp_path / "cache").glob("config-valid-*"))
