"""Without the sandbox, a grader run as root runs no notebook as root: each student's child
becomes nobody before any of its code (grader/run/unprivileged.py). So a notebook graded by
a root autograder whose course says `sandbox: auto` where no bubblewrap starts (Gradescope)
cannot write the grader's results, nor any file of root's."""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_attacks import WRONG

from grader.course.config import Config
from grader.engine import grade_path
from grader.errors import GraderError
from grader.run import bwrap, unprivileged

from conftest import write_notebook

pytestmark = pytest.mark.sandbox


@pytest.fixture
def results() -> Iterator[Path]:
    """A results folder of the grader's (as /autograder/results): anyone may look into it,
    only its owner write; it holds the grader's results.json."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-results-"))
    try:
        folder.chmod(0o755)
        (folder / "results.json").write_text('{"score": 0}')
        (folder / "results.json").chmod(0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


def said_by_softmax(config: Config, path: Path) -> object:
    """What the notebook's softmax raised (a ValueError whose message is a Python literal),
    graded without the sandbox."""
    report = grade_path(path, config, "self_attention", sandbox="none")
    softmax = next(t for t in report.targets if t.name == "softmax")
    said = next(m for m in softmax.messages if "raised ValueError: " in m)
    return ast.literal_eval(said.split("raised ValueError: ", 1)[1].rsplit(" (cell ", 1)[0])


FORGE = """
import os
def attempt(do):
    try:
        do()
        return "done"
    except PermissionError:
        return "denied"
def forge():
    with open(RESULTS + "/results.json", "w") as handle:
        handle.write('{"score": 100}')
def add():
    open(RESULTS + "/extra.json", "w").close()
SAID = (os.getuid(), os.geteuid(), os.getegid(), os.getgroups(), attempt(forge), attempt(add),
        os.access(".", os.W_OK))
def softmax(items_in):
    raise ValueError(repr(SAID))
"""


def test_an_unsandboxed_notebook_of_a_root_grader_runs_as_nobody(
    fast_config: Config, tmp_path: Path, results: Path
) -> None:
    source = f"RESULTS = {str(results)!r}\n{FORGE}"
    path = write_notebook(tmp_path / "forger.ipynb", [WRONG, source])
    said = said_by_softmax(fast_config, path)
    assert isinstance(said, tuple)
    uid, euid, gid, groups, forge, add, workdir_writable = said
    assert uid == euid
    if os.geteuid() == 0:
        nobody, nogroup = unprivileged.account()
        assert (uid, gid, groups) == (nobody, nogroup, [])
        assert (forge, add) == ("denied", "denied")
    else:  # an ordinary user's grader: the notebook is that user, as it always was
        assert uid == os.geteuid()
        assert (forge, add) == ("done", "done")
    assert workdir_writable  # its own working folder stays its own to write
    expected = '{"score": 0}' if os.geteuid() == 0 else '{"score": 100}'
    assert (results / "results.json").read_text() == expected


IMPORTS = """
import json, fractions, decimal, statistics
SAID = (json.dumps([1]), str(fractions.Fraction(1, 3)), str(decimal.Decimal("0.5")))
def softmax(items_in):
    raise ValueError(repr(SAID))
"""


def test_a_notebook_run_as_nobody_imports_the_standard_library(
    fast_config: Config, tmp_path: Path
) -> None:
    """Modules no worker imported before (a root's pyenv in /root is private to root: the
    worker is the system's interpreter of the same version then)."""
    path = write_notebook(tmp_path / "imports.ipynb", [WRONG, IMPORTS])
    assert said_by_softmax(fast_config, path) == ("[1]", "1/3", "0.5")


def test_a_private_folder_is_unreadable_to_nobody() -> None:
    """As a root's pyenv in /root (mode 0700): what nobody cannot import from."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-private-"))
    try:
        (folder / "lib").mkdir()
        (folder / "lib").chmod(0o755)
        nobody, nogroup = unprivileged.account()
        folder.chmod(0o755)
        assert unprivileged.readable(str(folder / "lib"), nobody, nogroup)
        folder.chmod(0o700)
        assert not unprivileged.readable(str(folder / "lib"), nobody, nogroup)
        assert unprivileged.readable(str(folder / "lib"), os.geteuid(), os.getegid())
        folder.chmod(0o711)  # searchable, not listable: its named folders are readable
        assert unprivileged.readable(str(folder / "lib"), nobody, nogroup)
        assert not unprivileged.readable(str(folder), nobody, nogroup)
    finally:
        shutil.rmtree(folder)


def test_a_root_grader_whose_python_nobody_cannot_read_refuses_to_run_unsandboxed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A root's pyenv in /root, and no system interpreter of its version to stand in: the
    notebook would run as nobody unable to import (even the child's own code fails), so
    no worker starts and the one-line reason names the folder (a grader fault, exit 3)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-private-"))
    try:
        folder.chmod(0o700)
        binary = folder / "bin" / "python3"
        monkeypatch.setattr(unprivileged, "needed", lambda: True)
        monkeypatch.setattr(bwrap, "_python", lambda: (str(binary), str(folder)))
        monkeypatch.setattr(bwrap, "system_python", lambda: None)
        with pytest.raises(GraderError) as raised:
            bwrap.plain_launch()
        assert raised.value.exit_code == 3
        said = str(raised.value)
        assert "nobody" in said and str(folder) in said and "\n" not in said
        monkeypatch.setattr(bwrap, "system_python", lambda: "/usr/bin/python3")
        assert bwrap.plain_launch().argv[0] == "/usr/bin/python3"  # it stands in
    finally:
        shutil.rmtree(folder)


def test_a_root_only_by_a_user_namespace_keeps_its_user() -> None:
    # A namespace mapping only its maker's user to 0 (as bubblewrap's Gradescope machine in
    # tests/test_gradescope.py run by grader-ci): nobody is no user there, and that root is
    # only the host user who made it. The real root of the machine drops (the tests above).
    import subprocess
    import sys

    code = "from grader.run import unprivileged as u; import os; print(os.geteuid(), u.needed())"
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == ["0", "False"]
