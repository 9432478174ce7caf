"""The grader's cache folder is trusted only when it is the user's own: what others can
write there (a shared $GRADER_CACHE_DIR, a folder another user created first) must not
reach the grader. Jinja's bytecode cache unpickles what it finds (run as the grader, outside
any sandbox), the schema memo lets a config skip validation, the head start's plan names
what workers start with: none of it may come from a folder someone else can write to."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import jinja2.bccache
import pytest

from grader.course import cache_home, schema_memo

RENDER = "from grader.render.html import _ENV\nprint(_ENV.get_template('feedback.html.j2').name)\n"


class _Payload:
    """What an attacker's file holds: code that runs when it is unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


def render_with(cache: Path) -> None:
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", RENDER], env=env, capture_output=True, check=True)


def test_compiled_templates_from_a_folder_others_can_write_are_not_loaded(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine"
    render_with(mine)  # the names jinja gives the compiled pages
    names = [p.name for p in (mine / "templates").iterdir()]
    assert names
    shared = tmp_path / "shared"
    (shared / "templates").mkdir(parents=True)
    for folder in (shared, shared / "templates"):
        folder.chmod(0o777)  # a folder anyone may write to, set up before the grader came
    marker = tmp_path / "ran"
    planted = jinja2.bccache.bc_magic + pickle.dumps(_Payload(marker), 2)
    for name in names:
        (shared / "templates" / name).write_bytes(planted)
    render_with(shared)
    assert not marker.exists(), "the grader ran code planted in its cache folder"


def test_the_cache_folder_is_the_users_own_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    monkeypatch.setenv(cache_home.CACHE_ENV, str(own))
    assert cache_home.cache_dir() == own
    monkeypatch.setenv(cache_home.CACHE_ENV, str(tmp_path / "not-yet"))
    assert cache_home.cache_dir() == tmp_path / "not-yet"  # created by its first writer
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(cache_home.CACHE_ENV, str(shared))
    assert cache_home.cache_dir() is None


def test_a_schema_memo_planted_in_a_shared_folder_validates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(cache_home.CACHE_ENV, str(shared))
    bad = json.loads('{"assignments": 7}')
    # what another user would write there: the memo's own name for this config
    monkeypatch.setenv(cache_home.CACHE_ENV, str(tmp_path / "probe"))
    path = schema_memo._path(bad)
    assert path is not None
    (shared / path.name).write_bytes(b"")
    monkeypatch.setenv(cache_home.CACHE_ENV, str(shared))
    assert not schema_memo.known_valid(bad)


def test_a_relative_cache_folder_in_a_students_checkout_is_not_used(tmp_path: Path) -> None:
    """`grader check` run (by CI, by an instructor) inside a student's folder: a relative
    cache folder would be the student's own files, planted compiled pages and all."""
    mine = tmp_path / "mine"
    render_with(mine)
    names = [p.name for p in (mine / "templates").iterdir()]
    checkout = tmp_path / "student"
    (checkout / ".cache" / "grader" / "templates").mkdir(parents=True)
    marker = tmp_path / "ran"
    planted = jinja2.bccache.bc_magic + pickle.dumps(_Payload(marker), 2)
    for name in names:
        (checkout / ".cache" / "grader" / "templates" / name).write_bytes(planted)
    for variable, value in (("GRADER_CACHE_DIR", ".cache/grader"), ("XDG_CACHE_HOME", ".cache")):
        env = {
            k: v for k, v in os.environ.items() if k not in ("GRADER_CACHE_DIR", "XDG_CACHE_HOME")
        }
        env |= {variable: value, "HOME": str(tmp_path / "home")}
        subprocess.run(
            [sys.executable, "-c", RENDER], env=env, cwd=checkout, capture_output=True, check=True
        )
        assert not marker.exists(), f"{variable}={value} ran the student's planted file"


def test_a_new_cache_folder_is_the_users_alone_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache_home.CACHE_ENV, str(tmp_path / "new" / "grader"))
    old = os.umask(0o002)
    try:
        folder = cache_home.cache_dir()
    finally:
        os.umask(old)
    assert folder == tmp_path / "new" / "grader"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert cache_home.cache_dir() == folder


ELSEWHERE = (
    "import sys, jinja2\n"
    "env = jinja2.Environment(loader=jinja2.PackageLoader('grader', 'templates'),\n"
    "    autoescape=False, bytecode_cache=jinja2.FileSystemBytecodeCache(sys.argv[1]))\n"
    "env.get_template('serve/notes.html.j2')\n"
)
NOTES = (
    "from grader.render.html import render_template\n"
    "print(render_template('serve/notes.html.j2', notes=['<b>\\u202e</b>']))\n"
)


def test_a_page_compiled_under_other_settings_is_compiled_again(tmp_path: Path) -> None:
    """The same template source compiled by a grader whose environment differed (an older
    version before escaping or `finalize` was added, at the same path: an editable install,
    a checkout updated in place) must not be reused: escaping is compiled into the page."""
    cache = tmp_path / "cache"
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
    run = {"env": env, "capture_output": True, "text": True, "check": True}
    subprocess.run([sys.executable, "-c", RENDER], **run)  # type: ignore[call-overload]
    folder = str(cache / "templates")
    subprocess.run([sys.executable, "-c", ELSEWHERE, folder], **run)  # type: ignore[call-overload]
    page = subprocess.run([sys.executable, "-c", NOTES], **run).stdout  # type: ignore[call-overload]
    assert "&lt;b&gt;" in page and "<b>" not in page, page
    assert "\u202e" not in page, page
