"""Installed versions are read from the metadata folders' names on the import path: the
answer importlib.metadata gives, for every distribution installed here and for one placed
first on the path, without importing importlib.metadata."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from grader.course import versions


def test_every_installed_distribution_has_the_version_importlib_metadata_gives() -> None:
    names = {d.metadata["Name"] for d in metadata.distributions()}
    assert len(names) > 20  # this environment's own, numpy and the grader among them
    versions.version.cache_clear()
    for name in sorted(names):
        assert versions.version(name) == metadata.version(name), name
    assert versions.version("no-such-distribution-here") == "unknown"


def test_the_first_on_the_path_wins_as_for_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "NumPy-99.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: NumPy\nVersion: 99.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    versions.version.cache_clear()
    try:
        assert versions.version("numpy") == metadata.version("numpy") == "99.1"
    finally:
        versions.version.cache_clear()


def test_reading_a_version_imports_no_metadata_machinery(tmp_path: Path) -> None:
    # numpy's from its .dist-info; the grader's from its source tree's .egg-info as well,
    # which a development install leaves first on the path of a command run there
    egg = tmp_path / "attention_grader.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: attention-grader\nVersion: 7.7\n")
    script = (
        "import sys; from grader.course.versions import version\n"
        "print(version('numpy') != 'unknown', version('attention-grader'),"
        " 'importlib.metadata' in sys.modules)"
    )
    said = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert said.stdout.split() == ["True", "7.7", "False"], said.stderr


def test_an_egg_info_first_on_the_path_wins_as_for_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an .egg-info (a setuptools develop install, a source tree's leftover) earlier on the
    # path than the installed .dist-info is the one importlib.metadata answers with
    egg = tmp_path / "numpy.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 98.7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    versions.version.cache_clear()
    try:
        assert versions.version("numpy") == metadata.version("numpy") == "98.7"
    finally:
        versions.version.cache_clear()
