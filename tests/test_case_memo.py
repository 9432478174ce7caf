"""Built case sets are remembered on disk (course/case_memo.py, issue 19): a warm `grader
check` neither imports numpy.random nor draws, every part of the key makes a new entry when it
changes, and an entry that cannot be read is built again."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grader.course import case_memo, cases, versions
from grader.course.cache_home import CACHE_ENV
from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, load_config

REPO = Path(__file__).resolve().parent.parent
# What a check that recalls its cases has no use for (numpy.random also pulls hmac and
# OpenSSL's _hashlib in); difflib is only for a notebook that misses a target.
NOT_ON_A_WARM_CHECK = ("numpy.random", "difflib", "hmac")


@pytest.fixture
def memo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    monkeypatch.setattr(cases, "_CASE_SETS", {})  # as a fresh process finds it
    return folder


def same(a: CaseSet, b: CaseSet) -> bool:
    return repr(a) == repr(b)


def test_a_warm_check_imports_no_numpy_random(tmp_path: Path) -> None:
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache")}
    command = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "grader",
        "check",
        str(REPO / "demo" / "submissions" / "bruno.ipynb"),
        "--course",
        str(REPO),
        "--format",
        "json",
    ]
    runs = [subprocess.run(command, env=env, capture_output=True, text=True) for _ in range(2)]
    assert runs[0].returncode == runs[1].returncode == 1, runs[1].stderr[-500:]  # bruno fails
    assert list((tmp_path / "cache").glob("cases-*.pickle"))
    cold = {line.rsplit("|", 1)[-1].strip() for line in runs[0].stderr.splitlines()}
    warm = {line.rsplit("|", 1)[-1].strip() for line in runs[1].stderr.splitlines()}
    assert "numpy.random" in cold  # the cold check draws its cases
    assert warm.isdisjoint(NOT_ON_A_WARM_CHECK), sorted(warm & set(NOT_ON_A_WARM_CHECK))


def test_the_second_build_reads_the_set_kept_by_the_first(
    config: Config, memo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = config.assignment("self_attention")
    first = build_cases(spec)
    assert len(list(memo_dir.glob("cases-*.pickle"))) == 1

    def no_draw(assignment: AssignmentSpec) -> None:
        raise AssertionError("cases were drawn although the memo holds them")

    monkeypatch.setattr(cases, "_CASE_SETS", {})
    monkeypatch.setattr(cases, "assignment_cases", no_draw)
    assert same(build_cases(spec), first)


def test_the_check_that_builds_a_set_hands_out_the_bytes_later_checks_recall(
    config: Config, memo_dir: Path
) -> None:
    """A worker's first message and a run's cache key are the pickled plan: the check that
    draws the set must pickle it as the checks that recall it do (else the next check's
    early worker is never adopted, and its references are run again)."""
    spec = config.assignment("self_attention")
    first = pickle.dumps(build_cases(spec).plan(spec))
    cases._CASE_SETS.clear()
    assert pickle.dumps(build_cases(spec).plan(spec)) == first


def test_an_unreadable_entry_is_built_again(config: Config, memo_dir: Path) -> None:
    spec = config.assignment("self_attention")
    first = build_cases(spec)
    (path,) = memo_dir.glob("cases-*.pickle")
    for damaged in (path.read_bytes()[:40], b"not a pickle", b""):
        path.write_bytes(damaged)
        cases._CASE_SETS.clear()
        assert same(build_cases(spec), first)
        assert isinstance(case_memo.recalled(path), CaseSet)  # written over, whole


def test_every_part_of_the_key_makes_a_new_entry(
    config: Config, memo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = config.assignment("self_attention")
    keys = {case_memo.memo_path(spec)}
    keys.add(case_memo.memo_path(replace(spec, seed=spec.seed + 1)))
    with monkeypatch.context() as patched:
        patched.setattr(np, "__version__", np.__version__ + ".other")
        keys.add(case_memo.memo_path(spec))
    with monkeypatch.context() as patched:
        patched.setattr(versions, "version", lambda name: "0.0.0.other")
        keys.add(case_memo.memo_path(spec))
    sources = tmp_path / "sources"
    shutil.copytree(Path(case_memo.__file__).parent, sources)
    monkeypatch.setattr(case_memo, "_HERE", sources)
    for name in case_memo._SOURCES:
        keys.add(case_memo.memo_path(spec))
        with (sources / name).open("a") as source:
            source.write("\n# edited\n")
    keys.add(case_memo.memo_path(spec))
    assert None not in keys
    assert len(keys) == 4 + len(case_memo._SOURCES) + 1


def test_an_edited_course_builder_gives_new_cases(memo_dir: Path, tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    for name in ("config.yaml", "cases.py"):
        shutil.copy(REPO / name, course / name)
    for folder in ("solutions", "exercises"):
        shutil.copytree(REPO / folder, course / folder)
    before = build_cases(load_config(course / "config.yaml").assignment("self_attention"))
    text = (course / "cases.py").read_text()
    edited = text.replace('rng.standard_normal(s["N"]) * 2.0', 'rng.standard_normal(s["N"]) * 3.0')
    assert edited != text
    (course / "cases.py").write_text(edited)
    cases._CASE_SETS.clear()
    after = build_cases(load_config(course / "config.yaml").assignment("self_attention"))
    assert not same(after, before)
    assert len(list(memo_dir.glob("cases-*.pickle"))) == 2
