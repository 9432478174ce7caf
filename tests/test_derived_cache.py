"""The derived mistakes' fingerprints are cached on disk by content hash (issue 17, item 1):
a second start reads them instead of running the child, any change of what they depend on
means a new key, and a damaged file is ignored."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.engine import require
from grader.judge import derived, expected
from grader.judge.fingerprints import catalogue_for
from grader.judge.pair_store import pairs_of
from grader.run.workers import shared_workers


def build(config: Config) -> expected.Expected:
    spec = config.assignment("masked_attention")
    expected._EXPECTED.clear()
    return expected.build_expected(spec, build_cases(spec), shared_workers(require("auto"), ()))


def test_a_second_start_reads_the_cache(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(derived.CACHE_ENV, str(tmp_path))
    first = build(config)
    files = list(tmp_path.glob("derived-masked_attention-*.bin"))
    singles = [p for p in files if "-pairs-" not in p.name]
    assert len(singles) == 1
    # each target's pairs of mutations in a file of their own, read only when needed
    assert len(files) == 1 + len(config.assignment("masked_attention").targets)

    def no_run(*args: object) -> None:
        raise AssertionError("the child was run although the cache holds the answer")

    monkeypatch.setattr(derived, "_run", no_run)
    read: list[str] = []
    real_pairs = derived._load_pairs
    monkeypatch.setattr(derived, "_load_pairs", lambda p, t: read.append(t) or real_pairs(p, t))
    second = build(config)
    assert read == []  # a start reads no pairs
    pairs = pairs_of(second.fingerprints["scaled_dot_product_attention"])
    assert read == ["scaled_dot_product_attention"] and pairs and all(f.also for f in pairs)
    for name, prints in first.fingerprints.items():
        again = second.fingerprints[name]
        assert [(f.mistake, f.origin) for f in again] == [(f.mistake, f.origin) for f in prints]
        assert all(str(a.outputs) == str(b.outputs) for a, b in zip(prints, again, strict=True))
    assert any(f.origin == "mutant" for p in second.fingerprints.values() for f in p)


def test_a_damaged_cache_file_is_ignored(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(derived.CACHE_ENV, str(tmp_path))
    first = build(config)
    (path,) = [p for p in tmp_path.glob("derived-*.bin") if "-pairs-" not in p.name]
    path.write_bytes(path.read_bytes()[:-20])
    second = build(config)
    assert len(second.fingerprints["scaled_dot_product_attention"]) == len(
        first.fingerprints["scaled_dot_product_attention"]
    )


def test_the_key_changes_with_what_the_mistakes_depend_on(config: Config) -> None:
    spec = config.assignment("masked_attention")
    catalogue = catalogue_for(spec)
    key = derived.cache_key(spec, catalogue)
    assert derived.cache_key(spec, catalogue) == key
    assert derived.cache_key(replace(spec, seed=spec.seed + 1), catalogue) != key
    changed = replace(catalogue, source=catalogue.source + "\n# edited\n")
    assert derived.cache_key(spec, changed) != key
