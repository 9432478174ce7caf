"""The course's own code's runs (references, the catalogue's fingerprints) are cached on disk
by content hash (issue 19): a fresh process reads them instead of starting a child, any change
of what the child is handed means a new key, and a damaged file is ignored."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.engine import require
from grader.judge import expected, run_cache
from grader.judge.course_code import course_limits
from grader.judge.reference import compute_references, load_solution
from grader.run.workers import Workers, shared_workers


def references(config: Config) -> tuple[object, object]:
    spec = config.assignment("self_attention")
    return compute_references(spec, build_cases(spec), shared_workers(require("auto"), ()))


def test_a_second_start_reads_the_references_from_the_cache(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(run_cache.CACHE_ENV, str(tmp_path))
    first = references(config)
    assert len(list(tmp_path.glob("course-run-*.bin"))) == 1

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("a child was run although the cache holds the answer")

    monkeypatch.setattr(Workers, "run", no_run)
    second = references(config)
    assert repr(second) == repr(first)


def test_the_whole_expected_comes_from_the_cache(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(run_cache.CACHE_ENV, str(tmp_path))
    spec = config.assignment("masked_attention")
    workers = shared_workers(require("auto"), ())
    expected._EXPECTED.clear()
    first = expected.build_expected(spec, build_cases(spec), workers)
    expected._EXPECTED.clear()
    monkeypatch.setattr(Workers, "run", lambda *a, **k: pytest.fail("a child was run"))
    second = expected.build_expected(spec, build_cases(spec), workers)
    assert repr(second) == repr(first)


def test_a_damaged_cache_file_is_ignored(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(run_cache.CACHE_ENV, str(tmp_path))
    first = references(config)
    (path,) = tmp_path.glob("course-run-*.bin")
    path.write_bytes(path.read_bytes()[:-20])
    assert run_cache.load(path) is None
    assert repr(references(config)) == repr(first)
    assert run_cache.load(path) is not None  # replaced by the fresh run


def test_the_key_changes_with_what_the_child_is_handed(config: Config) -> None:
    spec = config.assignment("self_attention")
    cells = load_solution(spec).cells
    plan = build_cases(spec).plan(spec)
    limits = course_limits(spec)
    key = run_cache.run_key(cells, plan, limits, spec, True)
    assert run_cache.run_key(cells, plan, limits, spec, True) == key
    assert run_cache.run_key(cells, plan, limits, spec, False) != key
    edited = [replace(cells[0], source=cells[0].source + "\n# edited\n"), *cells[1:]]
    assert run_cache.run_key(edited, plan, limits, spec, True) != key
    reseeded = replace(spec, seed=spec.seed + 1)
    assert run_cache.run_key(cells, build_cases(reseeded).plan(reseeded), limits, spec, True) != key
    assert run_cache.run_key(cells, plan, replace(limits, call=limits.call + 1), spec, True) != key


def test_a_run_that_ran_out_of_time_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "course-run-x.bin"
    finished = [({"kind": "result", "target": "f", "case": 0, "status": "ok"}, {"value": None})]
    run_cache.save(path, finished)
    assert run_cache.load(path) == finished
    path.unlink()
    late = [({"kind": "result", "target": "f", "case": 0, "status": "timeout"}, {})]
    run_cache.save(path, [*finished, *late])
    assert not path.exists()
    cell = [({"kind": "cell", "cell": 1, "error": {"type": "TimeLimit", "message": ""}}, {})]
    run_cache.save(path, cell)
    assert not path.exists()


def test_a_file_in_a_key_is_read_once_while_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data.npy"
    data.write_bytes(b"first")
    reads: list[Path] = []
    real = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    key = run_cache.content_digest([b"part"], [data])
    assert run_cache.content_digest([b"part"], [data]) == key and reads == [data]
    data.write_bytes(b"other")  # another size: read again, another key
    assert run_cache.content_digest([b"part"], [data]) != key and len(reads) == 2
    data.write_bytes(b"first")
    assert run_cache.content_digest([b"part"], [data]) == key
    data.unlink()
    assert run_cache.content_digest([b"part"], [data]) == run_cache.content_digest(
        [b"part"], [None]
    )


def test_the_solution_is_read_once_while_it_is_unchanged(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    solution = tmp_path / "solution.ipynb"
    solution.write_bytes(config.assignment("self_attention").solution.read_bytes())
    spec = replace(config.assignment("self_attention"), solution=solution)
    first = load_solution(spec)
    assert load_solution(spec) is first
    solution.write_text(solution.read_text().replace("def ", "def  ", 1))  # edited since
    assert load_solution(spec) is not first


def test_the_key_holds_the_version_of_a_preloaded_modules_package(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """udl_12_1 preloads `matplotlib.pyplot`: the key asked the version of a distribution of
    that name, which none has ("unknown", after a scan of every installed distribution), so
    a new matplotlib never meant a new key."""
    spec = config.assignment("udl_12_1")
    assert "matplotlib.pyplot" in spec.preload
    cells = load_solution(spec).cells
    plan = build_cases(spec).plan(spec)
    limits = course_limits(spec)
    key = run_cache.run_key(cells, plan, limits, spec, True)
    asked: list[str] = []
    real = run_cache.versions.version

    def upgraded(name: str) -> str:
        asked.append(name)
        return "99.0" if name == "matplotlib" else real(name)

    monkeypatch.setattr(run_cache.versions, "version", upgraded)
    assert run_cache.run_key(cells, plan, limits, spec, True) != key
    assert "matplotlib" in asked and "matplotlib.pyplot" not in asked
