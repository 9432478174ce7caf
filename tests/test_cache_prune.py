"""The cache folder does not grow without end (grader/course/cache_prune.py): entries unused
for STALE_DAYS go, over the size budget the least recently used go first, a read counts as
a use, the prune runs at most once a day and off the command's path, and `grader cache`
shows the folder and empties it, touching nothing but the grader's own files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from grader.__main__ import _prune_cache
from grader.cli import main
from grader.course import cache_home, cache_prune, schema_memo, yaml_memo
from grader.course.cache_home import CACHE_ENV
from grader.judge import run_cache

DAY = 86400.0


def key(n: int) -> str:
    """A content hash as the grader names entries by (40 hex digits)."""
    return f"{n:040x}"


def folder_at(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    return folder


def entry(folder: Path, name: str, age_days: float = 0.0, size: int = 10) -> Path:
    """A file `name` of `size` bytes, last used `age_days` ago."""
    path = folder / name
    path.write_bytes(b"x" * size)
    aged(path, age_days)
    return path


def aged(path: Path, days: float) -> None:
    when = time.time() - days * DAY
    os.utime(path, (when, when), follow_symlinks=False)


def test_entries_unused_for_the_stale_age_go_and_recent_ones_stay(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    old = [
        entry(folder, f"course-run-{key(1)}.bin", cache_prune.STALE_DAYS + 1),
        entry(folder, f"config-parsed-{key(2)}.json", cache_prune.STALE_DAYS + 5),
        entry(folder, f"sandbox-probe-{key(3)}.ok", cache_prune.STALE_DAYS + 1),
    ]
    recent = [
        entry(folder, f"course-run-{key(4)}.bin", cache_prune.STALE_DAYS - 1),
        entry(folder, f"config-valid-{key(5)}", 0.5),
    ]
    done = cache_prune.prune(folder)
    assert [p.exists() for p in old] == [False] * len(old)
    assert [p.exists() for p in recent] == [True] * len(recent)
    assert done.removed == len(old)
    assert done.left == len(recent)


def _read_course_run(folder: Path) -> Path:
    path = folder / f"course-run-{key(7)}.bin"
    run_cache.save(path, [({"status": "ok"}, {"out": np.arange(4.0)})])
    aged(path, cache_prune.STALE_DAYS + 1)
    assert run_cache.load(path) is not None  # a warm course run: read, never written again
    return path


def _read_parsed_config(folder: Path) -> Path:
    yaml_memo.note_parsed("a: 1\n", {"a": 1})
    (path,) = folder.glob("config-parsed-*.json")
    aged(path, cache_prune.STALE_DAYS + 1)
    assert yaml_memo.parsed("a: 1\n") == (True, {"a": 1})
    return path


def _read_valid_config(folder: Path) -> Path:
    schema_memo.note_valid({"b": 2})
    (path,) = folder.glob("config-valid-*")
    aged(path, cache_prune.STALE_DAYS + 1)
    assert schema_memo.known_valid({"b": 2})
    return path


@pytest.mark.parametrize("read", [_read_course_run, _read_parsed_config, _read_valid_config])
def test_an_entry_that_is_only_read_counts_as_used_and_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: object
) -> None:
    folder = folder_at(tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(folder))
    path = read(folder)  # type: ignore[operator]
    unread = entry(folder, f"course-run-{key(8)}.bin", cache_prune.STALE_DAYS + 1)
    cache_prune.prune(folder)
    assert path.exists(), "an entry read just now was pruned as unused"
    assert not unread.exists()


def test_an_entry_used_after_the_scan_is_not_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_at(tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(folder))
    busy = entry(folder, f"course-run-{key(30)}.bin", cache_prune.STALE_DAYS + 1)
    idle = entry(folder, f"course-run-{key(31)}.bin", cache_prune.STALE_DAYS + 1)
    scan = cache_prune.entries

    def scanned_then_read(where: Path) -> object:
        found = scan(where)
        cache_home.used(busy)  # a command reads it while the prune runs
        return found

    monkeypatch.setattr(cache_prune, "entries", scanned_then_read)
    done = cache_prune.prune(folder)
    assert busy.exists()
    assert not idle.exists()
    assert (done.removed, done.left) == (1, 1)


def test_over_the_budget_the_least_recently_used_go_first(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    by_age = {
        age: entry(folder, f"course-run-{key(age)}.bin", age_days=age / 24, size=1000)
        for age in (4, 1, 3, 2)  # hours since last used
    }
    done = cache_prune.prune(folder, limit=2500)
    assert {age for age, path in by_age.items() if path.exists()} == {1, 2}
    assert done.size == 2000
    assert done.freed == 2000


def test_the_budget_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_at(tmp_path)
    paths = [entry(folder, f"config-parsed-{key(n)}.json", n / 24, size=1024) for n in (1, 2, 3)]
    monkeypatch.setenv(cache_prune.BUDGET_ENV, "2K")
    assert cache_prune.budget() == 2048
    cache_prune.prune(folder)
    assert [p.exists() for p in paths] == [True, True, False]
    monkeypatch.setenv(cache_prune.BUDGET_ENV, "lots")
    assert cache_prune.budget() == cache_prune.BUDGET_BYTES


def test_an_entry_of_several_files_goes_whole_the_file_looked_up_first_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_at(tmp_path)
    base = f"derived-self_attention-{key(9)}"
    singles = entry(folder, f"{base}.bin", cache_prune.STALE_DAYS + 2)
    pairs = [entry(folder, f"{base}-pairs-{t}.bin", cache_prune.STALE_DAYS + 3) for t in "ab"]
    plan = entry(folder, f"head-start-{key(10)}.json", cache_prune.STALE_DAYS + 2)
    init = entry(folder, f"head-start-{key(10)}-{key(11)}.init", cache_prune.STALE_DAYS + 2)
    # an entry of which one file was read lately is used: none of its files goes
    kept = entry(folder, f"derived-masked-{key(12)}.bin", cache_prune.STALE_DAYS + 2)
    kept_pairs = entry(folder, f"derived-masked-{key(12)}-pairs-c.bin", 1)
    removed: list[str] = []
    unlink = os.unlink

    def recorded(path: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        removed.append(Path(path).name)
        unlink(path)

    monkeypatch.setattr(cache_prune.os, "unlink", recorded)
    cache_prune.prune(folder)
    assert not any(p.exists() for p in (singles, *pairs, plan, init))
    assert kept.exists() and kept_pairs.exists()
    assert removed.index(singles.name) < min(removed.index(p.name) for p in pairs)
    assert removed.index(plan.name) < removed.index(init.name)


def test_temporary_files_go_only_when_no_writer_can_be_writing_them(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    writing = entry(folder, f"course-run-{key(13)}.4242.tmp", 0, size=1000)
    left = entry(
        folder, f"config-parsed-{key(14)}.json.4243.tmp", 2 * cache_prune.TMP_SECONDS / DAY
    )
    cache_prune.prune(folder, limit=0)
    assert writing.exists()
    assert not left.exists()


def recorded_starts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """From now on, the command lines of the pruning children started (none runs)."""
    started: list[list[str]] = []

    class Started:
        def __init__(self, argv: list[str], **kwargs: object) -> None:
            started.append(argv)

    monkeypatch.setattr(subprocess, "Popen", Started)
    return started


def three_exits(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command lines of the pruning children three `grader` exits start (none runs)."""
    started = recorded_starts(monkeypatch)
    for _ in range(3):
        _prune_cache()  # what each `grader` command does at exit
    return started


def test_the_prune_is_started_at_most_once_a_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_at(tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(folder))
    started = three_exits(monkeypatch)
    assert len(started) == 1
    assert started[0][-1] == str(folder)
    marker = folder / cache_home.LAST_PRUNED
    aged(marker, (cache_home.PRUNE_EVERY - 60) / DAY)
    _prune_cache()
    assert len(started) == 1
    aged(marker, (cache_home.PRUNE_EVERY + 60) / DAY)
    _prune_cache()
    assert len(started) == 2


def test_a_long_running_process_prunes_whenever_a_prune_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    folder = folder_at(tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(folder))
    started = recorded_starts(monkeypatch)
    stop = threading.Event()
    watcher = cache_prune.keep_pruning(stop, every=0.05)
    try:
        deadline = time.monotonic() + 10
        while not started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(started) == 1  # due at once: never pruned
        time.sleep(0.3)  # several checks, none due
        assert len(started) == 1
        aged(folder / cache_home.LAST_PRUNED, (cache_home.PRUNE_EVERY + 60) / DAY)
        deadline = time.monotonic() + 10
        while len(started) == 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(started) == 2  # a day later, in the same process
    finally:
        stop.set()
    watcher.join(5)
    assert not watcher.is_alive()


def test_a_grader_command_prunes_a_due_folder_after_it_has_exited(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    old = entry(folder, f"course-run-{key(15)}.bin", cache_prune.STALE_DAYS + 1)
    recent = entry(folder, f"course-run-{key(16)}.bin", 0)
    env = {**os.environ, CACHE_ENV: str(folder)}
    done = subprocess.run(
        [sys.executable, "-m", "grader", "cache"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 60
    while old.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not old.exists(), "the detached prune did not remove the stale entry"
    assert recent.exists()
    assert (folder / cache_home.LAST_PRUNED).exists()


def _cache_command(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, CACHE_ENV: str(folder)}
    return subprocess.run(
        [sys.executable, "-m", "grader", "cache", *args], env=env, capture_output=True, text=True
    )


def test_cache_shows_the_folder_its_size_and_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_at(tmp_path)
    sizes = [3000, 5000, 7000]
    for n, size in enumerate(sizes):
        entry(folder, f"course-run-{key(n)}.bin", 0, size=size)
    entry(folder, f"derived-a-{key(20)}-pairs-t.bin", 0, size=2000)  # one entry with the next
    entry(folder, f"derived-a-{key(20)}.bin", 0, size=1000)
    entry(folder, "notes.txt", 0, size=100000)  # not the grader's
    monkeypatch.setenv(CACHE_ENV, str(folder))
    result = CliRunner().invoke(main, ["cache"])
    assert result.exit_code == 0, result.output
    total_kb = (sum(sizes) + 3000) / 1024
    assert str(folder) in result.stdout
    assert f"{total_kb:.0f} KB in {len(sizes) + 1} entries" in result.stdout


def test_clean_removes_the_graders_entries_and_nothing_else(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    ours = [
        entry(folder, f"course-run-{key(1)}.bin"),
        entry(folder, f"head-start-{key(2)}.json"),
        entry(folder, f"head-start-{key(2)}-{key(3)}.init"),
        entry(folder, f"dataclass-methods-{key(4)[:24]}.marshal"),
        entry(folder, f"preflight-self_attention-{key(5)}.ok"),
        entry(folder, f"view-stage-{key(6)}.json"),
    ]
    (folder / "templates").mkdir()
    ours.append(entry(folder / "templates", f"__jinja2_{key(7)}.cache"))
    others = [
        entry(folder, "notes.txt"),
        entry(folder, "course-run-mine.bin"),  # not a name the grader gives
        entry(folder / "templates", "page.html"),
        entry(folder, f"course-run-{key(8)}.99.tmp"),  # a writer may be writing it
    ]
    (folder / "course-run-dir").mkdir()
    done = _cache_command(folder, "--clean")
    assert done.returncode == 0, done.stderr
    assert [p.exists() for p in ours] == [False] * len(ours)
    assert [p.exists() for p in others] == [True] * len(others)
    assert (folder / "course-run-dir").is_dir()
    assert "removed 6 entries" in done.stdout  # the head start's plan and first message: one


def test_a_folder_others_can_write_to_is_refused(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    kept = entry(folder, f"course-run-{key(1)}.bin")
    folder.chmod(0o777)
    done = _cache_command(folder, "--clean")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "not private" in done.stderr
    assert kept.exists()
    assert cache_prune.prune(folder, limit=0).removed == 0
    assert kept.exists()


def test_links_inside_the_folder_are_not_followed(tmp_path: Path) -> None:
    folder = folder_at(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = entry(elsewhere, f"course-run-{key(1)}.bin", cache_prune.STALE_DAYS + 1)
    page = entry(elsewhere, f"__jinja2_{key(2)}.cache", cache_prune.STALE_DAYS + 1)
    link = folder / f"course-run-{key(3)}.bin"
    link.symlink_to(target)
    (folder / "templates").symlink_to(elsewhere)
    aged(link, cache_prune.STALE_DAYS + 1)
    cache_prune.prune(folder, limit=0)
    assert cache_prune.measure(folder) == (0, 0)
    done = _cache_command(folder, "--clean")
    assert done.returncode == 0, done.stderr
    assert target.exists() and page.exists()
    assert link.is_symlink()


def test_the_prune_child_imports_nothing_from_the_commands_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A student's checkout holding a `grader` package: `python -m` puts the working folder
    # first on the import path, so the detached child would run it outside the sandbox.
    checkout = tmp_path / "checkout"
    (checkout / "grader").mkdir(parents=True)
    ran = tmp_path / "ran"
    (checkout / "grader" / "__init__.py").write_text(
        f"open({str(ran)!r}, 'w').write('the checkout ran')\n", encoding="utf-8"
    )
    folder = folder_at(tmp_path)
    old = entry(folder, f"course-run-{key(17)}.bin", cache_prune.STALE_DAYS + 1)
    monkeypatch.chdir(checkout)
    cache_prune.after_command(folder)
    deadline = time.monotonic() + 60
    while old.exists() and not ran.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ran.exists(), "the prune child imported the working folder's `grader`"
    assert not old.exists(), "the detached prune did not remove the stale entry"


def test_without_a_home_folder_there_is_no_cache_and_every_command_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No $HOME and a user id the password database does not know (`docker run -u 12345`):
    # Path.home() raises, and the cache is simply not kept (as for a relative folder).
    import pwd

    from grader.course import dataclass_memo

    def unknown(uid: int) -> pwd.struct_passwd:
        raise KeyError(uid)

    for name in ("HOME", "XDG_CACHE_HOME", CACHE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    with pytest.raises(RuntimeError):
        Path.home()  # the situation itself
    assert cache_home.named_folder() is None
    assert cache_home.cache_dir() is None
    assert cache_home.prune_due() is None
    assert dataclass_memo.memo_path() is None
    _prune_cache()  # what each `grader` command does at exit: nothing, quietly
    result = CliRunner().invoke(main, ["cache"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert len(result.output.splitlines()) == 1 and "no home folder" in result.output


def test_no_prune_is_started_where_its_mark_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cache folder that cannot be made (a home folder that does not exist or is read-only):
    # the once-a-day mark is never written, so each command would start a pruning child.
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "a-file" / "cache"))
    started = three_exits(monkeypatch)
    assert started == []
    folder = folder_at(tmp_path)  # one that can be written: pruned, once
    monkeypatch.setenv(CACHE_ENV, str(folder))
    for _ in range(3):
        _prune_cache()
    assert len(started) == 1
