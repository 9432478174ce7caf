"""The sandbox's files come from a staged folder (grader/run/view.py): the mount table names
nothing of the host, a notebook imports only the standard library, numpy and the preloads,
and a stage is reused across runs only while it is whole and the grader's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from grader.run import bwrap, view

pytestmark = pytest.mark.sandbox

SYSTEM = ("/usr", "/etc/", "/lib", "/bin", "/sbin")
# Run inside the sandbox in place of the worker: imports what a worker imports, tries what a
# notebook may and may not import, and prints each mount's source root and mount point.
INSIDE = """
import sys
sys.path[:0] = sys.argv[1:]
import grader.run.worker, grader.run.child, grader.run.sandbox, grader.run.warmup
import numpy, {preloads}
def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False
print("IMPORTS", sorted({{m.split(".")[0] for m in sys.modules}}))
print("NOT", [n for n in ("nbformat", "jsonschema", "click", "pytest") if importable(n)])
print("YAML", importable("yaml"))
print("PYTHON", sys.executable)
for line in open("/proc/self/mountinfo"):
    print("MOUNT", line.split()[3], line.split()[4])
"""


def inside(preload: tuple[str, ...] = ()) -> str:
    """What the probe above prints, run in the sandbox the grader makes."""
    launch = bwrap.sandbox_launch(preload=preload)
    argv = list(launch.argv)
    at = argv.index("-c") + 1
    argv[at] = INSIDE.format(preloads=", ".join(preload) or "json")
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, **bwrap.process_options(launch)
        )
    finally:
        for fd in launch.pass_fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def staged(root: str) -> bool:
    places = (tempfile.gettempdir(), "/var/tmp")
    name = root.removesuffix("/lib")
    return os.path.dirname(name) in places and os.path.basename(name).startswith(view.PREFIX)


def mounts(said: str) -> list[tuple[str, str]]:
    return [tuple(line.split()[1:3]) for line in said.splitlines() if line.startswith("MOUNT")]


def check_table(said: str) -> None:
    """Every mount is the sandbox's own, a system path as it is, or a staged folder; none
    names the checkout, the environment or a home folder."""
    host = [str(Path(bwrap.__file__).resolve().parents[2]), sys.prefix, str(Path.home())]
    table = mounts(said)
    assert ("/usr", "/usr") in table and any(staged(root) for root, _ in table), table
    for root, point in table:
        device = point.startswith("/dev/") and root == "/" + point.rsplit("/", 1)[1]
        same = root == point and point.startswith(SYSTEM)
        assert root in {"/", "/newroot"} or device or same or staged(root), (root, point)
        assert not any(root.startswith(h) or point.startswith(h) for h in host), (root, point)


def test_the_worker_imports_from_the_stage_and_nothing_else_of_the_environment() -> None:
    said = inside(("matplotlib.pyplot",))
    assert "NOT []" in said  # installed for the grader, not for the notebook
    assert "'matplotlib'" in said and "'numpy'" in said and "YAML True" in said
    assert "PYTHON /usr/" in said
    check_table(said)


def test_an_interpreter_outside_usr_is_staged_when_the_system_has_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    binary, _ = bwrap._python()
    if binary.startswith("/usr/"):
        # This interpreter is the system's: make a prefix of its own outside /usr.
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        (tmp_path / "bin").mkdir()
        shutil.copy2(binary, tmp_path / "bin" / version)
        (tmp_path / "lib").mkdir()
        (tmp_path / "lib" / version).symlink_to(f"/usr/lib/{version}")
        fake = (str(tmp_path / "bin" / version), str(tmp_path))
        monkeypatch.setattr(bwrap, "_python", lambda: fake)
    monkeypatch.setattr(bwrap, "system_python", lambda: None)
    said = inside()
    assert "PYTHON /sandbox/python/bin/" in said
    check_table(said)


def test_a_stage_is_reused_rebuilt_and_never_taken_from_someone_else(tmp_path: Path) -> None:
    built: list[Path] = []

    def build(folder: Path) -> None:
        built.append(folder)
        (folder / "lib").mkdir()
        (folder / "lib" / "mark").write_text(str(len(built)))

    near = [str(tmp_path)]
    signature = f"test {os.getpid()} {tmp_path}"
    first = view._cached(signature, False, near, build)
    again = view._cached(signature, False, near, build)
    assert again == first and len(built) == 1  # found, not built again
    other = view._cached(signature + " changed", False, near, build)
    assert other != first and len(built) == 2
    first.chmod(0o777)  # no longer private: someone else could have written to it
    third = view._cached(signature, False, near, build)
    assert third != first and len(built) == 3 and (third / "lib" / "mark").read_text() == "3"
    for folder in (first, other, third):
        subprocess.run(["rm", "-rf", str(folder)], check=True)


def test_importing_the_view_imports_no_distribution_metadata() -> None:
    script = "import sys, grader.run.view; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stdout + done.stderr


def test_the_stage_is_recalled_until_what_it_was_found_from_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    (tmp_path / "site").mkdir()
    found: list[tuple[str, ...]] = []
    real = view._find_stage

    def find(preload: tuple[str, ...], *args: Any) -> Any:
        found.append(preload)
        return real(preload, *args)

    monkeypatch.setattr(view, "_find_stage", find)

    def stage() -> view.Staged:
        view.stage_lib.cache_clear()  # as a new process
        return view.stage_lib(("json",), False)

    first = stage()
    assert stage() == first and len(found) == 1  # recalled, not found again
    (tmp_path / "site" / "notes.txt").write_text("")  # a working folder's file: no change
    assert stage() == first and len(found) == 1
    (tmp_path / "site" / "newly-1.0.dist-info").mkdir()  # a distribution installed there
    assert stage() == first and len(found) == 2
    assert stage() == first and len(found) == 2
    os.chmod(first.folder, 0o777)  # no longer a stage of this user's alone: never recalled
    try:
        stage()
        assert len(found) == 3
    finally:
        os.chmod(first.folder, 0o700)
    view.stage_lib.cache_clear()


def test_a_recalled_stage_reads_no_distribution_metadata(tmp_path: Path) -> None:
    script = (
        "import sys; from grader.run import view\n"
        "staged = view.stage_lib(('json',), False)\n"
        "print(staged.folder.is_dir(), 'importlib.metadata' in sys.modules)"
    )
    env = {**os.environ, "GRADER_CACHE_DIR": str(tmp_path / "cache")}
    said = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert said == [["True", "True"], ["True", "False"]]
