"""A config's text parsed before is read from its memo: the next start does not import or run
the YAML parser, and gets exactly the value the parser gave; a value JSON cannot carry exactly
is never remembered, and a changed or broken text is parsed (and refused) as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course import config as config_module
from grader.course import yaml_memo
from grader.course.config import load_config
from grader.errors import ConfigError

from conftest import REPO


@pytest.fixture
def parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each text the YAML parser is run on, in a cache folder of the test's own."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[str] = []
    real = config_module.parse_yaml

    def parse(text: str, path: Path) -> object:
        seen.append(text)
        return real(text, path)

    monkeypatch.setattr(config_module, "parse_yaml", parse)
    return seen


def course(tmp_path: Path) -> Path:
    folder = tmp_path / "course"
    shutil.copytree(REPO, folder, ignore=shutil.ignore_patterns(".*", "demo", "tests", "bench"))
    return folder / "config.yaml"


def test_a_text_parsed_before_is_not_parsed_again(parses: list[str], tmp_path: Path) -> None:
    path = course(tmp_path)
    first = load_config(path)
    assert len(parses) == 1
    again = load_config(path)
    assert len(parses) == 1, "the same text was parsed again"
    assert repr(again) == repr(first)
    path.write_text(path.read_text() + "\n# a comment changes the text\n")
    load_config(path)
    assert len(parses) == 2


def test_a_broken_text_is_refused_every_time(parses: list[str], tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("assignments: [unclosed\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match="not valid YAML at line"):
            load_config(path)
    assert len(parses) == 2


@pytest.mark.parametrize(
    "value",
    [{1: "a key that is a number"}, {"x": (1, 2)}, {"x": {1, 2}}, {"x": b"bin"}, {"x": {1.0: 2}}],
)
def test_what_json_would_change_is_not_remembered(
    value: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    yaml_memo.note_parsed("text", value)
    assert yaml_memo.parsed("text") == (False, None)
    yaml_memo.note_parsed("text", {"a": [1, 1.0, True, None, "1"]})
    assert yaml_memo.parsed("text") == (True, {"a": [1, 1.0, True, None, "1"]})
    kinds = [type(v) for v in yaml_memo.parsed("text")[1]["a"]]
    assert kinds == [int, float, bool, type(None), str]


def test_a_start_that_finds_the_memo_imports_no_yaml(tmp_path: Path) -> None:
    path = course(tmp_path)
    script = (
        "import sys; from grader.course.config import load_config\n"
        f"load_config({str(path)!r}); print('yaml' in sys.modules)"
    )
    env = {"GRADER_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    said = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    ]
    assert said == ["True", "False"]
    (memo,) = (tmp_path / "cache").glob("config-parsed-*.json")
    assert json.loads(memo.read_text())["assignments"]
