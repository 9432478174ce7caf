"""The loaded config says whether config.yaml names `sandbox:` at all (absent and `auto` grade
alike, but export-gradescope asks for the sandbox only where the course said nothing), so
export-gradescope parses config.yaml no more for that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from grader.cli import main
from grader.course.config import load_config

from conftest import REPO, repo_config_raw


def written(folder: Path, **top: object) -> Path:
    raw = {**repo_config_raw(), **top}
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder / "config.yaml"


def test_the_config_tells_absent_from_auto(tmp_path: Path) -> None:
    absent = load_config(written(tmp_path / "a"))
    auto = load_config(written(tmp_path / "b", sandbox="auto"))
    assert absent.sandbox == auto.sandbox == "auto"
    assert not absent.sandbox_named and auto.sandbox_named


def test_export_gradescope_parses_config_yaml_only_to_copy_the_assignment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_text = (REPO / "config.yaml").read_text(encoding="utf-8")
    parsed: list[str] = []
    real = yaml.safe_load

    def counted(stream: object) -> object:
        if stream == config_text:
            parsed.append("config.yaml")
        return real(stream)  # type: ignore[arg-type]

    monkeypatch.setattr(yaml, "safe_load", counted)
    out = tmp_path / "a.zip"
    result = CliRunner().invoke(
        main, ["export-gradescope", "-a", "self_attention", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "sandbox: required" in result.stderr
    assert parsed == ["config.yaml"]  # the assignment's keys, copied into the zip's config
