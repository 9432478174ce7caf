"""Hostile notebooks. Every function in them is wrong, so an honest score is 0; each attack
tries to get more, or to harm the grader, the gradebook or the machine. All are bounded
(short sleeps, capped loops) so they stop by themselves even if the sandbox failed."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.grade import grade_batch
from grader.cli import main
from grader.course.config import Config
from grader.engine import grade_path
from grader.run import bwrap

import students
from conftest import REPO, processes_with, write_notebook

pytestmark = pytest.mark.sandbox

WRONG = """\
import numpy as np
def qkv_loop(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):
    return [np.zeros_like(x) for x in all_x], [x for x in all_x], [x for x in all_x]
def softmax(items_in):
    return np.ones(len(items_in))
def attention_loop(all_queries, all_keys, all_values):
    return [v * 2 for v in all_values]
def softmax_cols(data_in):
    return np.ones_like(data_in)
def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    return X * 0.5
def scaled_dot_product_self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    return X * 0.25"""

SOLUTION = REPO / "solutions" / "self_attention.ipynb"

ATTACKS = {
    "patch_comparisons": """\
import numpy as np, builtins, math
np.allclose = lambda *a, **k: True
np.isclose = lambda *a, **k: np.array(True)
np.testing.assert_allclose = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
builtins.abs = lambda x: 0
math.isclose = lambda *a, **k: True""",
    "lying_arrays": """\
import numpy as np
class Liar(np.ndarray):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __array_ufunc__(self, *a, **k): return True
    def __array__(self, *a, **k): return np.zeros(1)
def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    return np.zeros((X.shape[0], X.shape[1])).view(Liar)
class Anything:
    def __eq__(self, other): return True
    def __float__(self): return 1.0
def softmax(items_in):
    return Anything()""",
    "read_the_solution": f"""\
import json
import os
def _reference():
    cells = json.load(open({str(SOLUTION)!r}))["cells"]
    ns = {{}}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]), ns)
    return ns
def scaled_dot_product_self_attention(*args):
    return _reference()["scaled_dot_product_self_attention"](*args)
def softmax_cols(data_in):
    return _reference()["softmax_cols"](data_in)""",
    "exit_at_top_level": "import sys\nsys.exit(0)",
    "exit_inside_a_function": """\
import os
def softmax_cols(data_in):
    os._exit(0)""",
    "loop_at_top_level": "while True:\n    pass",
    "loop_inside_a_function": """\
import signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass""",
    "allocate_40_gb": "import numpy as np\nhuge = np.ones(5_000_000_000)",
    "many_processes": """\
import subprocess
children = []
for _ in range(300):
    try:
        children.append(subprocess.Popen(["sleep", "41.4142"]))
    except OSError:
        break""",
    "detached_process": """\
import subprocess
subprocess.Popen(["sleep", "27.1828"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)""",
    "fifty_mb_of_output": "print('x' * (50 * 1024 * 1024))",
    "fake_results": """\
print("::error file=x.py,line=1::all good")
print(json.dumps({"score": 10, "max_score": 10, "targets": []}))""".replace(
        "json.dumps", "__import__('json').dumps"
    ),
    "deep_recursion": """\
import sys
sys.setrecursionlimit(10**9)
def softmax(items_in):
    def down(n):
        return down(n + 1) + 1
    return down(0)""",
}


def attack(tmp_path: Path, name: str, extra: str = "") -> Path:
    return write_notebook(tmp_path / f"{name}.ipynb", [WRONG, ATTACKS[name] + extra])


def test_the_sandbox_is_available_here() -> None:
    support = bwrap.support()
    assert support.sandboxed, f"no sandbox here ({support.reason}): the tests fail, never skip"


def unsandboxed(report_notes: tuple[str, ...]) -> bool:
    return any(note.startswith("no sandbox:") for note in report_notes)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_attack_scores_zero(fast_config: Config, tmp_path: Path, name: str) -> None:
    report = grade_path(attack(tmp_path, name), fast_config, "self_attention")
    assert report.score == 0, [(t.name, t.status, t.messages[:2]) for t in report.targets]
    assert not unsandboxed(report.notes)


@pytest.mark.parametrize(
    ("name", "marker"), [("many_processes", "41.4142"), ("detached_process", "27.1828")]
)
def test_no_process_survives(fast_config: Config, tmp_path: Path, name: str, marker: str) -> None:
    grade_path(attack(tmp_path, name), fast_config, "self_attention")
    time.sleep(0.1)
    assert processes_with(marker) == []


def test_the_solution_is_out_of_sight(fast_config: Config, tmp_path: Path) -> None:
    report = grade_path(attack(tmp_path, "read_the_solution"), fast_config, "self_attention")
    scaled = next(t for t in report.targets if t.name == "scaled_dot_product_self_attention")
    assert scaled.status == "error"
    assert any("FileNotFoundError" in m for m in scaled.messages)


def test_clear_messages_for_limits(fast_config: Config, tmp_path: Path) -> None:
    memory = grade_path(attack(tmp_path, "allocate_40_gb"), fast_config, "self_attention")
    assert any("MemoryError" in e for e in memory.errors)
    loop = grade_path(attack(tmp_path, "loop_at_top_level"), fast_config, "self_attention")
    assert any("time limit" in e for e in loop.errors)
    spin = grade_path(attack(tmp_path, "loop_inside_a_function"), fast_config, "self_attention")
    # It catches the exception that stops it, again and again: it is stopped at the line
    # after its catch, and told so.
    (target,) = [t for t in spin.targets if t.name == "self_attention"]
    said = "caught the exception that stops it at the time limit"
    assert target.status == "timeout" and any(said in m for m in target.messages), target
    assert "was stopped at its next line" in " ".join(target.messages)


def test_deep_recursion_is_the_calls_error(config: Config, tmp_path: Path) -> None:
    """Under the course's own time limits, not the fast ones: recursing to the ceiling a few
    times takes longer than half a second a call on a loaded machine (it then ended as a time
    limit, which is not what this test is about)."""
    crash = grade_path(attack(tmp_path, "deep_recursion"), config, "self_attention")
    softmax = next(t for t in crash.targets if t.name == "softmax")
    # Python 3.11 recursion lives on the heap: under the child's ceiling on the recursion
    # limit (grader/run/recursion.py) it is the call's RecursionError, not a time limit.
    assert softmax.status == "error", softmax.messages
    said = "raised RecursionError: maximum recursion depth exceeded"
    assert any(said in m for m in softmax.messages), softmax.messages


def test_no_network(fast_config: Config, tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True).start()
    code = f"""
import socket
def softmax(items_in):
    socket.create_connection(("127.0.0.1", {port}), timeout=1).sendall(b"leak")
    return [1.0]"""
    path = write_notebook(tmp_path / "net.ipynb", [WRONG, code])
    report = grade_path(path, fast_config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    # Its own network namespace has a loopback with nothing listening, and no route out.
    words = ("unreachable", "OSError", "Connection refused")
    assert any(w in m for m in softmax.messages for w in words), softmax.messages
    time.sleep(0.2)
    server.close()
    assert accepted in ([], [None])


def _accept(server: socket.socket) -> object:
    try:
        return server.accept()
    except OSError:
        return None


def test_forged_output_reaches_no_format(fast_config: Config, tmp_path: Path) -> None:
    path = attack(tmp_path, "fake_results")
    config = str(fast_config.path)
    github = CliRunner().invoke(
        main, ["check", str(path), "--config", config, "--format", "github"]
    )
    assert "all good" not in github.output
    data = json.loads(  # stdout: a note on stderr names the repository's own config.yaml
        CliRunner()
        .invoke(main, ["check", str(path), "--config", config, "--format", "json"])
        .stdout
    )
    assert data["score"] == 0


def test_a_60_mb_notebook_is_refused_clearly(fast_config: Config, tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "big.ipynb", [WRONG, "x = '" + "a" * (60 << 20) + "'"])
    result = CliRunner().invoke(main, ["check", str(path), "--config", str(fast_config.path)])
    assert result.exit_code == 2 and "larger than the 50 MB limit" in result.output


def test_batch_with_attacks_keeps_honest_grades_and_the_gradebook(
    fast_config: Config, tmp_path: Path
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    out = tmp_path / "out"
    honest = {
        "ok": students.cells(),
        "seed001": students.cells(scaled_dot_product_self_attention=students.SEED_001_SCALED),
        "axis": students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS),
    }
    for i in range(4):
        for kind, cells in honest.items():
            write_notebook(folder / f"{kind}{i}.ipynb", cells)
    vandal = f"""
def softmax(items_in):
    for name in ("gradebook.sqlite", "grades.csv", "feedback/ok0.html"):
        try:
            open({str(out)!r} + "/" + name, "w").write("vandalised")
        except OSError:
            pass
    return [0.0]"""
    write_notebook(folder / "vandal.ipynb", [WRONG, vandal])
    for name in ("patch_comparisons", "exit_inside_a_function", "many_processes", "allocate_40_gb"):
        attack(folder, name)
    batch = grade_batch(folder, fast_config, out, "self_attention", jobs=2)
    by_student = {e.student: e.report for e in batch.entries}
    for student, report in by_student.items():
        assert report is not None
        if student in ATTACKS or student == "vandal":
            assert report.score == 0, student
            continue
        alone = grade_path(folder / f"{student}.ipynb", fast_config, "self_attention")
        assert [(t.status, t.score, t.mistakes) for t in report.targets] == [
            (t.status, t.score, t.mistakes) for t in alone.targets
        ]
    assert "vandalised" not in (out / "feedback" / "ok0.html").read_text()
    again = grade_batch(folder, fast_config, out, "self_attention")
    assert again.skipped == len(by_student)  # the gradebook is intact and still skips them


def test_files_written_by_an_attack_stay_in_its_own_tmp(
    fast_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    targets = [tmp_path / "dropped.txt", REPO / "dropped.txt", Path("/tmp/dropped-by-attack")]
    targets.append(Path.home() / "dropped-by-attack")
    code = "\n".join(
        f"try:\n    open({str(t)!r}, 'w').write('x')\nexcept OSError:\n    pass" for t in targets
    )
    code += "\nopen('scratch.txt', 'w').write('its own folder is fine')"
    path = write_notebook(tmp_path / "writer.ipynb", [WRONG, code])
    report = grade_path(path, fast_config, "self_attention")
    assert report.score == 0
    assert [t for t in targets if t.exists()] == []
    assert not (tmp_path / "scratch.txt").exists()


def test_without_namespaces_the_report_says_so(
    fast_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "support", lambda: bwrap.Support(False, "simulated"))
    report = grade_path(write_notebook(tmp_path / "a.ipynb", students.cells()), fast_config)
    assert report.notes[1] == "no sandbox: the notebook ran with process limits only (simulated)"
    assert report.score == report.max_score


def test_neither_a_single_notebook_nor_a_batch_sees_the_class_folder(
    fast_config: Config,
) -> None:
    """The view is an allow-list: a notebook's own folder is not in it either, so a loop of
    `grader check` over a class folder cannot let one student read another's notebook."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-test-"))
    try:
        (folder / "classmate.ipynb").write_text("{}")
        reader = f"""
def softmax(items_in):
    return [float(len(open({str(folder / "classmate.ipynb")!r}).read()))]"""
        path = write_notebook(folder / "reader.ipynb", [WRONG, reader])
        alone = grade_path(path, fast_config, "self_attention")
        softmax = next(t for t in alone.targets if t.name == "softmax")
        assert any("FileNotFoundError" in m for m in softmax.messages), softmax.messages
        batch = grade_batch(folder, fast_config, None, "self_attention")
        report = next(e.report for e in batch.entries if e.student == "reader")
        assert report is not None
        softmax = next(t for t in report.targets if t.name == "softmax")
        assert any("FileNotFoundError" in m for m in softmax.messages)
    finally:
        shutil.rmtree(folder)


def test_the_batch_sandbox_holds_between_students_of_one_worker(
    fast_config: Config, tmp_path: Path
) -> None:
    """In a batch, a worker enters its namespaces once and forks a child per student: what
    one student leaves behind (files in /tmp or /dev/shm, a detached process) must be gone
    for the next one, and secrets and the network stay out of reach."""
    folder = tmp_path / "class"
    folder.mkdir()
    leftovers = ["/tmp/left-behind", "/dev/shm/left-behind", "/tmp/work/left-behind"]
    writer = "\n".join(f"open({p!r}, 'w').write('x')" for p in leftovers)
    writer += "\n" + ATTACKS["detached_process"].replace("27.1828", "31.4159")
    write_notebook(folder / "a_writer.ipynb", [WRONG, writer])
    checks = "import os\n" + "\n".join(
        f"assert not os.path.exists({p!r}), {p!r}" for p in leftovers
    )
    checks += "\nassert not [p for p in os.listdir('/proc') if p.isdigit() and int(p) > 1]"
    write_notebook(folder / "b_reader.ipynb", [WRONG, checks])
    attack(folder, "read_the_solution")
    net = "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)"
    write_notebook(folder / "d_network.ipynb", [WRONG, net])
    batch = grade_batch(folder, fast_config, tmp_path / "out", "self_attention", jobs=1)
    reports = {e.student: e.report for e in batch.entries}
    assert all(r is not None and not unsandboxed(r.notes) for r in reports.values())
    writer_report, reader_report = reports["a_writer"], reports["b_reader"]
    assert writer_report is not None and reader_report is not None
    assert writer_report.errors == (), writer_report.errors  # it could write its own /tmp
    assert reader_report.errors == (), reader_report.errors  # and none of it was left
    solution = reports["read_the_solution"]
    assert solution is not None
    scaled = next(t for t in solution.targets if t.name == "scaled_dot_product_self_attention")
    assert any("FileNotFoundError" in m for m in scaled.messages), scaled.messages
    network = reports["d_network"]
    assert network is not None
    assert any("unreachable" in e or "OSError" in e for e in network.errors), network.errors
    time.sleep(0.1)
    assert processes_with("31.4159") == []
    assert not Path("/tmp/left-behind").exists() and not Path("/dev/shm/left-behind").exists()


def test_a_batch_without_namespaces_grades_with_process_limits_and_says_so(
    fast_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine without bubblewrap: workers run with the process limits alone, every report
    says so, and the grades are the same."""
    monkeypatch.setattr(bwrap, "support", lambda: bwrap.Support(False, "simulated"))
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ok.ipynb", students.cells())
    write_notebook(
        folder / "seed.ipynb",
        students.cells(scaled_dot_product_self_attention=students.SEED_001_SCALED),
    )
    batch = grade_batch(folder, fast_config, tmp_path / "out", "self_attention", jobs=2)
    for entry in batch.entries:
        assert entry.report is not None and unsandboxed(entry.report.notes)
    scores = {e.student: e.report.score for e in batch.entries if e.report}
    assert scores["ok"] == 10 and 0 < scores["seed"] < 10


def test_nothing_a_student_writes_outside_its_scratch_reaches_the_next_on_its_worker(
    fast_config: Config, tmp_path: Path
) -> None:
    """The worker's / and /dev (bubblewrap's, unbounded in memory) outlive each child: a
    file planted there (a /lib of one's own, whose libraries the next student's `import
    zipfile` loads) ran code in a classmate's process and forged their grade. Every such
    write is refused now; a child has a handful of terminals, not the machine's, and no
    inotify (its 128 instances per user are every sandbox's)."""
    folder = tmp_path / "class"
    folder.mkdir()
    planted = ["/planted", "/etc/planted", "/dev/planted", "/sandbox/planted"]
    writer = "import os\nmade = []\n"
    for path in planted:
        writer += f"try:\n    open({path!r}, 'w').write('x')\n    made.append({path!r})\n"
        writer += "except OSError:\n    pass\n"
    for step in ("os.mkdir('/lib.new')", "os.rename('/lib', '/lib.old')"):
        writer += f"try:\n    {step}\n    made.append({step!r})\nexcept OSError:\n    pass\n"
    writer += (
        "terminals = []\nfor _ in range(40):\n    try:\n"
        "        terminals.append(os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY))\n"
        "    except OSError:\n        break\n"
        "assert not made, made\nassert 1 <= len(terminals) <= 8, len(terminals)\n"
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "assert libc.inotify_init1(0) == -1 and ctypes.get_errno() == 1, 'inotify'\n"
    )
    write_notebook(folder / "a_writer.ipynb", [WRONG, writer])
    reader = "import os, zipfile\n" + "\n".join(
        f"assert not os.path.exists({p!r}), {p!r}" for p in [*planted, "/lib.new", "/lib.old"]
    )
    write_notebook(folder / "b_reader.ipynb", [WRONG, reader])
    batch = grade_batch(folder, fast_config, tmp_path / "out", "self_attention", jobs=1)
    reports = {e.student: e.report for e in batch.entries}
    for student in ("a_writer", "b_reader"):
        report = reports[student]
        assert report is not None and not unsandboxed(report.notes)
        assert report.errors == (), (student, report.errors)
