"""grader/run/programs.py answers as shutil.which and tempfile.gettempdir do, without
loading either module (a warm `grader check` asks both: test_cli_lazy.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.run import programs

from conftest import REPO


def _program(folder: Path, name: str = "tool", mode: int = 0o755) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_which_skips_what_cannot_run_and_finds_what_shutil_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(tmp_path / "plain", mode=0o644)  # not executable
    (tmp_path / "folder" / "tool").mkdir(parents=True)  # a folder of that name
    runnable = _program(tmp_path / "bin")
    folders = [str(tmp_path / f) for f in ("missing", "plain", "folder", "plain", "bin")]
    monkeypatch.setenv("PATH", os.pathsep.join(folders))
    assert programs.which("tool") == shutil.which("tool") == str(runnable)
    assert programs.which("absent") is shutil.which("absent") is None
    assert programs.which(str(runnable)) == shutil.which(str(runnable)) == str(runnable)


def test_which_with_path_empty_finds_nothing_and_with_path_unset_the_systems(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "")
    assert programs.which("sh") is shutil.which("sh") is None
    monkeypatch.delenv("PATH")
    assert programs.which("sh") == shutil.which("sh") is not None


def _folders(env: dict[str, str], cwd: Path) -> list[str]:
    """programs.temporary_folder() in a fresh interpreter (tempfile not loaded), and then
    tempfile.gettempdir()'s answer there."""
    script = (
        "import json, sys\n"
        "from grader.run.programs import temporary_folder\n"
        "ours = temporary_folder()\n"
        "assert 'tempfile' not in sys.modules\n"
        "import tempfile\n"
        "print(json.dumps([ours, tempfile.gettempdir()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[str] = json.loads(done.stdout)
    return found


def test_the_temporary_folder_is_tempfiles_and_leaves_no_file(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TEMP", "TMP")}
    mine = tmp_path / "mine"
    mine.mkdir()
    ours, theirs = _folders({**env, "TMPDIR": str(mine)}, tmp_path)
    assert ours == theirs == str(mine)
    assert list(mine.iterdir()) == []
    # a folder that is not there, then one given relative to the working folder
    (tmp_path / "relative").mkdir()
    ours, theirs = _folders({**env, "TEMP": str(tmp_path / "gone"), "TMP": "relative"}, tmp_path)
    assert ours == theirs == str(tmp_path / "relative")
    ours, theirs = _folders(env, tmp_path)
    assert ours == theirs


def test_where_tempfile_is_loaded_its_answer_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", "/somewhere/told")
    assert programs.temporary_folder() == "/somewhere/told"
