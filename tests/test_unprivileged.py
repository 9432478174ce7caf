"""The sandbox without root: the sandbox tests again, run by an ordinary user this suite sets
up (CI runs as root; most instructors and students do not)."""

from __future__ import annotations

import hashlib
import os
import pwd
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from grader.run import bwrap

from conftest import REPO

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

USER = "grader-ci"
SANDBOX_TESTS = [
    "tests/test_redteam.py",
    "tests/test_redteam_more.py",
    "tests/test_redteam_oom.py",
    "tests/test_attacks.py",
    "tests/test_sandbox.py",
    "tests/test_default_signals.py",
    "tests/test_course_code_sandboxed.py",
    "tests/test_course_files.py",
    "tests/test_acceptance_batch.py",
    "tests/test_view.py",
    "tests/test_gradescope.py",
    "tests/test_working_folder.py",
    "tests/test_serve_grading.py",
    "tests/test_unsandboxed_root.py",
    "tests/test_memory_group.py",
    "tests/test_endless_recursion.py",
    "tests/test_cpu_share.py",
]


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/false", USER], check=True)
        return pwd.getpwnam(USER)


def _venv(user: pwd.struct_passwd) -> Path:
    """A virtual environment the user can run: the system's interpreter of this version,
    seeing this one's packages and the repository (read-only to the user)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = Path(f"/usr/bin/python{version}")
    assert system.is_file(), f"no {system}: the unprivileged run needs the system's Python"
    # One per checkout: two checkouts tested at once on a machine must not point one shared
    # environment at each other's code halfway through a run.
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:8]
    venv = Path(f"/var/tmp/{USER}-venv-{version}-{checkout}")
    if not (venv / "bin" / "python").exists():
        subprocess.run([str(system), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{version}" / "site-packages"
    packages = sysconfig.get_paths()["purelib"]
    (site / "grader-host.pth").write_text(f"{REPO}\n{packages}\n")
    for path in (REPO / "grader", Path(packages) / "numpy"):
        assert _readable_by_others(path), f"{path} is private: {USER} cannot run the tests"
    return venv


def _readable_by_others(path: Path) -> bool:
    return all(part.stat().st_mode & 0o001 for part in [path, *path.parents])


def test_the_sandbox_tests_pass_as_an_ordinary_user() -> None:
    if os.geteuid() != 0:  # this run is an ordinary user's: the sandbox must be here too
        support = bwrap.support()
        assert support.sandboxed, support.reason
        return
    user = _user()
    venv = _venv(user)
    env = {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "LANG": "C.UTF-8"}
    command = [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "-x", *SANDBOX_TESTS],
        cwd=REPO,
        env=env,
        user=user.pw_uid,
        group=user.pw_gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail and " skipped" not in tail, tail
