"""Compiled page templates are kept in the user's cache folder (a batch no longer compiles
its pages on every start), and a cache folder that cannot be used only means compiling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RENDER = (
    "from grader.render.html import _ENV\n"
    "page = _ENV.get_template('feedback.html.j2')\n"
    "print(type(_ENV.bytecode_cache).__name__, page.name)\n"
)


def render_with(cache: Path) -> str:
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", RENDER], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_templates_are_compiled_once_into_the_cache_folder(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert render_with(cache) == "_CompiledTemplates feedback.html.j2"
    kept = sorted((cache / "templates").iterdir())
    assert kept and all(p.stat().st_size > 0 for p in kept)
    stamps = [p.stat().st_mtime_ns for p in kept]
    assert render_with(cache) == "_CompiledTemplates feedback.html.j2"
    assert [p.stat().st_mtime_ns for p in kept] == stamps  # read back, not written again


def test_an_unusable_cache_folder_only_means_compiling(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert render_with(blocked) == "NoneType feedback.html.j2"
    broken = tmp_path / "cache"
    render_with(broken)
    for kept in (broken / "templates").iterdir():
        kept.write_bytes(b"garbage")  # a damaged file is compiled again, not an error
    assert render_with(broken) == "_CompiledTemplates feedback.html.j2"
