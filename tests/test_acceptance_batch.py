"""Issue 23's "done when", as an instructor meets it: one class folder holding every hostile
notebook of this suite (test_attacks.ATTACKS, the red team's probes, and three below that look
for secrets, host paths and a way to write outside) beside 20 honest notebooks of mixed quality,
graded by `python -m grader grade class --course course --out OUT` in a process of its own, on
an idle machine and again with every core busy.

The grader's process gets a secret in its environment and a HOME of its own; the only timing
asserted is the documented one: a batch finishes within the sum of its time limits.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_attacks import ATTACKS, WRONG
from test_redteam import red_team, said_by_walk

from grader.course.config import Config, load_config
from grader.engine import grade_path
from grader.report import Report
from grader.run import bwrap, view

import students
from conftest import REPO, write_fast_course, write_notebook

# A whole hostile class through the sandboxed pool: minutes, not the quick loop's seconds.
pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ASSIGNMENT = "self_attention"
HONEST = 20
SECRET = "GRADER_SECRET_TOKEN"
TARGETS = (
    "qkv_loop",
    "softmax",
    "attention_loop",
    "softmax_cols",
    "self_attention",
    "scaled_dot_product_self_attention",
)
CHUNK = 250  # a message keeps 300 characters: what a probe says goes out in pieces
# Paths of the course checkout that no output and no mount may name.
REPO_PATHS = tuple(str(REPO / p) for p in ("solutions", "tests", "exercises", "demo", ".git"))
ROOT_HOME = re.compile(r"(?<![\w.~-])/root(?![\w.-])")  # root's home, not /proc/self/root


def telling(what: str, expression: str) -> str:
    """A probe that works out the list `expression` in the child, prints it, and says it
    through the targets' error messages as <<what part/parts:[items]>>, whole items in each
    part (so that a path is never cut in two), at most CHUNK characters a part."""
    return (
        f"import os\nSEEN = list({expression})\nprint(SEEN)\nPARTS = [[]]\n"
        "for item in SEEN:\n"
        f"    if PARTS[-1] and len(repr(PARTS[-1] + [item])) > {CHUNK}:\n"
        "        PARTS.append([])\n"
        "    PARTS[-1].append(item)\n"
        "def _tell(part):\n"
        "    said = PARTS[part] if part < len(PARTS) else []\n"
        f'    raise ValueError("<<{what} %d/%d:%r>>" % (part, len(PARTS), said))\n'
    ) + "".join(f"def {name}(*args):\n    _tell({i})\n" for i, name in enumerate(TARGETS))


def heard(what: str, messages: Sequence[str]) -> list[Any]:
    """What a `telling` probe said, put together from its messages (fails when cut short)."""
    parts: dict[int, list[Any]] = {}
    count = -1
    for message in messages:
        if found := re.search(rf"<<{what} (\d+)/(\d+):(.*)>>", message):
            parts[int(found[1])], count = ast.literal_eval(found[3]), int(found[2])
    assert 0 < count <= len(TARGETS) and all(i in parts for i in range(count)), (what, messages)
    return [item for i in range(count) for item in parts[i]]


def writing(places: Sequence[Path], mark: str) -> str:
    """A probe that drops a file named `mark` into each place (spelt in hex, so that no page
    quoting its code names them), then says how many places it tried."""
    spelt = tuple(str(place).encode().hex() for place in places)
    return (
        f"TRIED = 0\nfor place in (bytes.fromhex(h).decode() for h in {spelt!r}):\n"
        "    TRIED += 1\n"
        "    try:\n"
        f"        open(place + '/' + {mark!r}, 'w').write('from a student')\n"
        "    except OSError:\n"
        "        pass\n"
        "def softmax(items_in):\n"
        '    raise ValueError("<<tried %d>>" % TRIED)\n'
    )


@dataclass(frozen=True)
class Run:
    """One `grader grade` of the class: how it ended, how long it took, what it wrote."""

    code: int
    seconds: float
    said: str
    out: Path
    grades: dict[str, dict[str, str]]


@dataclass(frozen=True)
class Outcome:
    """The class, its course, both runs, and what each notebook earns alone."""

    home: Path
    course: Path
    folder: Path
    mark: str
    secret: str
    budget: float
    honest: list[str]
    probes: dict[str, list[str]]
    solo: dict[str, Report]
    honest_work: dict[str, float]
    runs: dict[str, Run]
    before: dict[str, tuple[int, str]]
    after: dict[str, tuple[int, str]]


def snapshot(*folders: Path) -> dict[str, tuple[int, str]]:
    """Every file under `folders`: its size and content hash."""
    return {
        str(path): (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def grade_class(workspace: Path, out: str, env: dict[str, str]) -> Run:
    """`grader grade` as an instructor types it in their course's folder."""
    command = [sys.executable, "-m", "grader", "grade", "class", "--course", "course"]
    command += ["--assignment", ASSIGNMENT, "--out", out, "--sandbox", "required"]
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=workspace, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    seconds = time.monotonic() - started
    grades: dict[str, dict[str, str]] = {}
    if (workspace / out / "grades.csv").is_file():
        with (workspace / out / "grades.csv").open(encoding="utf-8") as handle:
            grades = {row["student"]: row for row in csv.DictReader(handle)}
    said = (done.stdout + done.stderr)[-4000:]
    return Run(done.returncode, seconds, said, workspace / out, grades)


def busy_cores() -> list[subprocess.Popen[bytes]]:
    """One spinning process per core this process may use, each ending when this one does
    (an interrupted suite's cleanup may never run: a spinner left behind slows what follows)."""
    code = "import os, sys\nwhile os.getppid() == int(sys.argv[1]):\n    sum(range(10**5))\n"
    spin = [sys.executable, "-c", code, str(os.getpid())]  # the parent's pid, as it is now
    return [subprocess.Popen(spin) for _ in os.sched_getaffinity(0)]


def hostile(workspace: Path, home: Path, mark: str) -> dict[str, list[str]]:
    """Every probe: the suite's attacks, the red team's, and this test's three."""
    forbidden = [str(workspace), str(home), *REPO_PATHS, str(REPO / "config.yaml")]
    probes = {name: [WRONG, code] for name, code in ATTACKS.items()}
    probes |= red_team(forbidden, walk_seconds=0.5)  # inside the cell's limit of a second
    probes["leak_environment"] = [WRONG, telling("environment", "sorted(os.environ.items())")]
    mounts = "[(f[3], f[4]) for f in (line.split() for line in open('/proc/self/mountinfo'))]"
    probes["leak_mounts"] = [WRONG, telling("mounts", mounts)]
    probes["write_outside"] = [WRONG, writing(outside(workspace, home), mark)]
    return probes


def outside(workspace: Path, home: Path) -> list[Path]:
    """Places beyond the sandbox a student would like to write to."""
    places = [workspace / name for name in ("course", "class", "out-idle", "out-busy")]
    return [*places, home, REPO, REPO / "solutions", *map(Path, ("/tmp", "/var/tmp", "/dev/shm"))]


def build(workspace: Path) -> Outcome:
    """The course, the class, the grader's environment; both runs; the solo grades."""
    home = workspace / f"home-{secrets.token_hex(6)}"
    home.mkdir()
    course, folder = workspace / "course", workspace / "class"
    config = load_config(write_fast_course(course))
    mark = f"acceptance-{secrets.token_hex(6)}"
    probes = hostile(workspace, home, mark)
    honest = [p.stem for p in students.write_class(folder, HONEST)]
    for name, cells in probes.items():
        write_notebook(folder / f"{name}.ipynb", cells)
    secret = secrets.token_hex(16)
    env = {**os.environ, SECRET: secret, "HOME": str(home)}
    # The grader's own cache of derived mistakes (judge/derived.py) is its one legitimate
    # write: kept beside the workspace, so the home below is watched for students' writes.
    env["GRADER_CACHE_DIR"] = str(workspace / "grader-cache")
    before = snapshot(course, folder, home)
    runs = {"idle": grade_class(workspace, "out-idle", env)}
    spinning = busy_cores()
    try:
        runs["busy"] = grade_class(workspace, "out-busy", env)
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    after = snapshot(course, folder, home)
    solo = {s: grade_path(folder / f"{s}.ipynb", config, ASSIGNMENT) for s in honest}
    budget = (len(honest) + len(probes)) * config.assignment(ASSIGNMENT).time_limit.submission
    work = honest_work(workspace, config, probes)
    return Outcome(
        home, course, folder, mark, secret, budget, honest, probes, solo, work, runs, before, after
    )


def honest_work(workspace: Path, config: Config, probes: dict[str, list[str]]) -> dict[str, float]:
    """Each probe's grade for its honest cells alone (WRONG, or nothing at all)."""
    alone: dict[tuple[str, ...], float] = {}
    work = {}
    for name, cells in probes.items():
        kept = tuple(cell for cell in cells if cell == WRONG) or ("pass",)
        if kept not in alone:
            path = write_notebook(workspace / f"honest-{len(alone)}.ipynb", kept)
            alone[kept] = grade_path(path, config, ASSIGNMENT).score
        work[name] = alone[kept]
    return work


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return build(tmp_path_factory.mktemp("acceptance"))


def test_the_batch_runs_to_the_end_within_the_sum_of_its_time_limits(outcome: Outcome) -> None:
    everyone = {*outcome.honest, *outcome.probes}
    for name, run in outcome.runs.items():
        assert run.code == 0, f"{name}: exit {run.code}\n{run.said}"  # never 3 for a student
        assert set(run.grades) == everyone, (name, everyone ^ set(run.grades))
        assert run.seconds <= outcome.budget, (name, run.seconds, outcome.budget)


def test_every_honest_grade_equals_its_solo_grade_idle_and_busy(outcome: Outcome) -> None:
    for name, run in outcome.runs.items():
        for student in outcome.honest:
            alone = outcome.solo[student]
            expected = {t.name: t.score for t in alone.targets} | {"total": alone.score}
            got = {key: float(run.grades[student][key]) for key in expected}
            assert got == expected, (name, student, alone.errors, run.grades[student])


def test_no_probe_earns_more_than_its_honest_work(outcome: Outcome) -> None:
    for name, run in outcome.runs.items():
        earned = {p: float(run.grades[p]["total"]) for p in outcome.probes}
        more = {p: e for p, e in earned.items() if e > outcome.honest_work[p]}
        assert more == {}, (name, more, outcome.honest_work)


def test_nothing_outside_the_sandbox_changes(outcome: Outcome) -> None:
    assert outcome.after == outcome.before  # the course, the class folder, the grader's home
    places = outside(outcome.course.parent, outcome.home)
    for name, run in outcome.runs.items():
        said = messages(run.out, "write_outside")
        assert any(f"<<tried {len(places)}>>" in m for m in said), (name, said)  # it ran
    assert [p for p in places if (p / outcome.mark).exists()] == []


def reports(out: Path) -> dict[str, str]:
    """Each student's rows of the gradebook (report, results, messages) as one text."""
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        rows = db.execute(
            "SELECT s.student, s.report, r.target, r.status, r.mistakes, r.messages "
            "FROM submissions s JOIN results r ON r.submission = s.id"
        ).fetchall()
    text: dict[str, str] = {}
    for student, *fields in rows:
        text[student] = text.get(student, "") + "\n".join(map(str, fields))
    return text


def messages(out: Path, student: str) -> list[str]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        rows = db.execute(
            "SELECT r.messages FROM results r JOIN submissions s ON r.submission = s.id "
            "WHERE s.student = ?",
            (student,),
        ).fetchall()
    return [m for (text,) in rows for m in json.loads(text)]


def staged(root: str) -> bool:
    """Whether a mount's source is a folder the grader staged (view.py): a fresh name in a
    temporary folder, naming nothing of this machine."""
    places = "|".join(re.escape(p) for p in (tempfile.gettempdir(), "/var/tmp"))
    return re.fullmatch(rf"(?:{places})/{view.PREFIX}[\w]+(?:/lib)?", root) is not None


def named_by(source: str, forbidden: Sequence[str]) -> list[str]:
    """The paths a notebook names itself that lie on a forbidden one: a page that quotes the
    student's own code or error leaks nothing the student did not know."""
    paths = re.findall(r"/[\w.+-]+(?:/[\w.+-]+)*", source)
    return [p for p in paths if any(p.startswith(f) for f in forbidden)]


def leaks(text: str, forbidden: Sequence[str], known: Sequence[str]) -> list[str]:
    """The forbidden strings in `text`, once what the student knew is taken out."""
    for path in sorted(known, key=len, reverse=True):
        text = text.replace(path, "")
    found = [f for f in forbidden if f in text]
    return found + ROOT_HOME.findall(text)


def outputs(out: Path) -> Iterator[tuple[str, Path]]:
    """Every file `grader grade --out` wrote, with the student it belongs to ('' for all)."""
    for path in sorted(out.rglob("*")):
        if path.is_file():
            yield (path.stem if path.parent.name == "feedback" else ""), path


def test_no_secret_and_no_host_path_in_any_output(outcome: Outcome) -> None:
    forbidden = [str(outcome.course.parent), str(outcome.home), *REPO_PATHS, str(REPO)]
    sources = {s: (outcome.folder / f"{s}.ipynb").read_text() for s in outcome.probes}
    sources |= {s: (outcome.folder / f"{s}.ipynb").read_text() for s in outcome.honest}
    known = {s: named_by(text, forbidden) for s, text in sources.items()}
    anyone = sorted({p for paths in known.values() for p in paths})
    assert known["read_the_solution"]  # the scan below sees what a student named
    for name, run in outcome.runs.items():
        assert outcome.secret not in run.said and outcome.home.name not in run.said
        for student, path in outputs(run.out):
            data = path.read_bytes()
            assert outcome.secret.encode() not in data, (name, path)
            text = data.decode("utf-8", errors="replace")
            mine = known.get(student, anyone)
            assert leaks(text, forbidden, mine) == [], (name, path)
        for student, text in reports(run.out).items():
            assert outcome.secret not in text
            assert leaks(text, forbidden, known[student]) == [], (name, student)
        said = subprocess.run(
            [sys.executable, "-m", "grader", "report", str(run.out), "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert outcome.secret not in said and leaks(said, forbidden, anyone) == []


def test_the_childs_mount_table_and_environment_name_nothing_of_the_host(
    outcome: Outcome,
) -> None:
    host = [str(outcome.course.parent), str(outcome.home), str(REPO), *REPO_PATHS, "/root"]
    forbidden = [*host, sys.prefix, os.path.realpath(sys.prefix), str(Path.home())]
    system = ("/usr", "/etc/", "/lib", "/bin", "/sbin")
    for name, run in outcome.runs.items():
        table = heard("mounts", messages(run.out, "leak_mounts"))
        assert ("/usr", "/usr") in table, table  # the probe reads the real table
        assert any(staged(root) for root, _ in table), table  # and sees the staged files
        for root, point in table:
            device = point.startswith("/dev/") and root == "/" + point.rsplit("/", 1)[1]
            same = root == point and point.startswith(system)  # a system path, as it is
            assert root in {"/", "/newroot"} or device or same or staged(root), (root, point)
            assert not any(p.startswith(f) for p in (root, point) for f in forbidden), (root, point)
        env = dict(heard("environment", messages(run.out, "leak_environment")))
        assert env["PATH"] == bwrap.ENVIRONMENT["PATH"], env
        assert SECRET not in env and outcome.secret not in repr(env), (name, env)
        assert str(outcome.home) not in repr(env) and not ROOT_HOME.findall(repr(env)), env


def test_the_red_team_walk_finds_nothing_in_a_batch(outcome: Outcome) -> None:
    for name, run in outcome.runs.items():
        found, _env, mounts, roots = said_by_walk(messages(run.out, "redteam_walk"))
        assert (found, mounts, roots) == ([], [], []), name
