"""Where one submission's time goes, part by part, against the batch budget.

Usage: python bench/where_time_goes.py [--students 200]
Measures, in this one run and on this machine, the CPU time per submission of each part of
batch grading, for generated submissions of mixed quality (as bench/batch_throughput.py):

  fork      fork and exit of a process holding what a worker holds (no student code)
  own code  the submission's cells and every call of every case (52 calls for
            self_attention, of which 26 probe calls), in this process, with nothing of
            the grader around them: no grader that runs all the cases could do less
  student   the same, as the child runs it (inputs copied for each call, answers
            encoded, probes digested, outputs captured), without fork or sandbox
  child     the same, in a sandboxed child forked by a warmed, jailed worker (what a
            batch really does: fork, namespaces, limits, the cells and calls, exit); the
            worker's and its children's CPU read from /proc
  empty     an empty notebook through the same worker (sandboxed, and without the sandbox):
            the child's process creation alone, the floor of this design
  judge     decoding the child's answers, comparing, diagnosing: in this process
  floor     bench/lean_floor.py: a process that imported numpy and nothing else forks a
            child per submission that runs its cells and calls, and exits (three times:
            with every call, with the main cases only, and on empty notebooks, its own
            process creation: the floor less that is the cells and calls as they cost in a
            fresh child, where the pages they write are copied first)
  best      empty + the cells and calls as they cost in the floor's fresh child + one
            numpy.allclose (or ==) per main case: what a sandboxed child per student and
            its judging cost with no grader overhead at all (the floor of this design)

and prints each one as milliseconds of CPU and as a share of the issue's budget: 1/50 of a
bare `python -c "import numpy"` start per submission, on all cores together, and child +
judge against the floor (issue 19's target: at most 1.5 times), met or not.
Must run as root for the sandbox part (as the grader's own batch does).
"""

from __future__ import annotations

import argparse
import ast
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from batch_throughput import bare_numpy, generate  # noqa: E402
from lean_floor import compiled, run_own_code  # noqa: E402

from grader.course.cases import build_cases  # noqa: E402
from grader.course.config import load_config  # noqa: E402
from grader.course.notebook import CodeCell, Submission, load_submission  # noqa: E402
from grader.engine import finish  # noqa: E402
from grader.judge.expected import build_expected  # noqa: E402
from grader.run import bwrap, child  # noqa: E402
from grader.run.sandbox import ChildRun  # noqa: E402
from grader.run.workers import Workers, shared_workers  # noqa: E402

TARGET = 1.5  # issue 19: child + judging CPU per submission, against the floor in this run


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_usage(pid: int) -> tuple[float, int]:
    """CPU seconds and minor page faults of a live process and all its descendants, their
    reaped children included (read from /proc: a sandboxed worker's processes are not this
    process's children, and killing bubblewrap never reaps them here, so RUSAGE_CHILDREN
    would miss them). A child's minor faults are mostly the worker's pages it copies on
    write or touches first."""
    tick = os.sysconf("SC_CLK_TCK")
    table: dict[int, tuple[int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            faults = int(fields[7]) + int(fields[8])  # minflt, cminflt
            table[int(entry)] = (int(fields[1]), cpu, faults)
    wanted, grew = {pid}, True
    while grew:
        more = {p for p, (parent, _, _) in table.items() if parent in wanted} - wanted
        grew = bool(more)
        wanted |= more
    cpu = sum(table[p][1] for p in wanted if p in table)
    return cpu / tick, sum(table[p][2] for p in wanted if p in table)


def least_compare(answer: Any, reference: Any) -> bool:
    """One comparison of an answer with its reference, as the least a grader must do."""
    if isinstance(answer, numpy.ndarray):
        return bool(numpy.allclose(answer, reference))
    if isinstance(answer, tuple | list):
        return all(least_compare(a, r) for a, r in zip(answer, reference, strict=False))
    return bool(answer == reference)


def in_a_worker(task: Callable[[], Any]) -> Any:
    """Run `task` in a forked process (it may enter namespaces); return what it reports (a
    number, or a tuple of them)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reported through the pipe
        try:
            os.write(write_fd, repr(task()).encode())
        except BaseException as exc:
            os.write(write_fd, f"{exc!r}".encode()[:100])
        finally:
            os._exit(0)
    os.close(write_fd)
    answer = os.read(read_fd, 100)
    os.waitpid(pid, 0)
    os.close(read_fd)
    try:
        return ast.literal_eval(answer.decode())
    except (ValueError, SyntaxError):
        raise SystemExit(f"{task.__name__} failed: {answer.decode(errors='replace')}") from None


def lean_floor(subs: list[Submission], plan: Any) -> float:
    """bench/lean_floor.py on these submissions' cells and calls, in a fresh interpreter."""
    calls = [(name, [case.fresh_args() for case in cases]) for name, cases in plan]
    return lean_run([([cell.source for cell in submission.cells], calls) for submission in subs])


def lean_empty(count: int) -> float:
    """bench/lean_floor.py on `count` empty notebooks (one cell, `pass`, no call): the floor's
    own process creation, which the floor less this leaves the student's code and calls as
    they cost in a fresh child."""
    return lean_run([(["pass"], [])] * count)


def lean_run(data: list[Any]) -> float:
    """CPU per notebook of bench/lean_floor.py on `data`, in a fresh interpreter."""
    with tempfile.NamedTemporaryFile(suffix=".pickle") as handle:
        pickle.dump(data, handle)
        handle.flush()
        script = str(REPO / "bench" / "lean_floor.py")
        result = subprocess.run(
            [sys.executable, script, handle.name], capture_output=True, text=True, check=False
        )
    try:
        return float(result.stdout)
    except ValueError:
        raise SystemExit(f"lean_floor.py failed: {result.stderr[-500:]}") from None


def own_code_cpu(subs: list[Submission], plan: Any) -> float:
    """CPU per submission of its cells and every call, with nothing of the grader around."""
    null = open(os.devnull, "w")  # noqa: SIM115 - closed when the worker exits
    saved = sys.stdout
    spent = 0.0
    for submission in subs:
        codes = compiled([cell.source for cell in submission.cells])
        calls = [(name, [c.fresh_args() for c in cases]) for name, cases in plan]
        before = time.process_time()
        sys.stdout = null
        run_own_code(codes, calls)
        sys.stdout = saved
        spent += time.process_time() - before
    return spent / len(subs)


def worker_cpu(
    subs: list[Submission], plan: Any, spec: Any, support: bwrap.Support, empty: bool
) -> tuple[float, float]:
    """CPU of the grader, its worker and the children, per student, and the worker's and
    its children's minor page faults per student; `empty`: a notebook of one cell, `pass`,
    and no call (the cost of the child's process alone)."""
    workers = Workers(1, support, [plan])
    pid = workers.all[0].process.pid
    nothing = [CodeCell(1, "pass", "pass")]
    cpu, faults = tree_usage(pid)
    before = cpu + time.process_time()
    for submission in subs:
        if empty:
            workers.run(nothing, [], spec.time_limit)
        else:
            workers.run(submission.cells, plan, spec.time_limit)
    cpu, after = tree_usage(pid)
    spent = cpu + time.process_time() - before  # the worker, its children
    workers.close()
    return spent / len(subs), (after - faults) / len(subs)


def least_judge(expected: Any, count: int) -> float:
    """CPU per submission of the least judging: one comparison per main case's answer."""
    outputs = [out for reference in expected.references.values() for out in reference.outputs]
    before = time.process_time()
    for _ in range(count):
        for out in outputs:
            least_compare(out, out)
    return (time.process_time() - before) / count


def design_best(students: int) -> tuple[float, float]:
    """(CPU per notebook, the empty sandboxed child's part of it) of the best this design
    could reach, measured here on `students` generated notebooks: an empty sandboxed child,
    the notebook's own code as it costs in a fresh child (bench/lean_floor.py's, less its
    run on empty notebooks) and judging at its least (no grader overhead at all)."""
    config = load_config(REPO / "config.yaml")
    spec = config.assignment("self_attention")
    case_set = build_cases(spec)
    plan = case_set.plan(spec)
    with tempfile.TemporaryDirectory() as scratch:
        generate(Path(scratch) / "class", students)
        subs = [load_submission(p) for p in sorted((Path(scratch) / "class").iterdir())]
    support = bwrap.support()
    if not support.sandboxed:
        raise SystemExit(f"the sandbox is needed for this measurement: {support.reason}")
    empty = in_a_worker(lambda: worker_cpu(subs, plan, spec, support, True)[0])
    own = lean_floor(subs, plan) - lean_empty(len(subs))
    expected = build_expected(spec, case_set, shared_workers(support))
    return empty + own + least_judge(expected, len(subs)), empty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    bare = bare_numpy()
    budget = bare / 50 * cores  # CPU seconds per submission, all cores together
    config = load_config(REPO / "config.yaml")
    spec = config.assignment("self_attention")
    case_set = build_cases(spec)
    plan = case_set.plan(spec)
    with tempfile.TemporaryDirectory() as scratch:
        generate(Path(scratch) / "class", args.students)
        subs = [load_submission(p) for p in sorted((Path(scratch) / "class").iterdir())]
    count = len(subs)

    def forks() -> float:
        before = children_cpu() + time.process_time()
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        return (children_cpu() + time.process_time() - before) / count

    def student_work() -> float:
        null = os.open(os.devnull, os.O_WRONLY)
        signal.signal(signal.SIGALRM, child._alarm)
        saved = sys.stdout
        spent = 0.0
        for submission in subs:
            before = time.process_time()
            runner = child.Runner(null, 5.0, 5.0)
            sys.stdout = runner.out
            for cell in submission.cells:
                runner.run_cell(cell)
            for name, cases in plan:
                runner.run_target(name, cases)
            sys.stdout = saved
            spent += time.process_time() - before
        return spent / count

    def own_code() -> float:
        return own_code_cpu(subs, plan)

    runs: list[ChildRun] = []

    def on_worker(support: bwrap.Support, empty: bool) -> tuple[float, float]:
        return worker_cpu(subs, plan, spec, support, empty)

    def sandboxed() -> tuple[float, float]:
        """CPU per student of the sandboxed run (bubblewrap)."""
        return on_worker(bwrap.support(), empty=False)

    def sandboxed_empty() -> tuple[float, float]:
        """CPU per empty notebook, sandboxed: the sandbox's process creation alone."""
        return on_worker(bwrap.support(), empty=True)

    def plain_empty() -> tuple[float, float]:
        """CPU per empty notebook on a worker without the sandbox (fork and limits)."""
        return on_worker(bwrap.Support(False, "bench"), empty=True)

    fork_cpu = in_a_worker(forks)
    floor_cpu = lean_floor(subs, plan)
    main_only = [(name, [c for c in cases if not c.probe]) for name, cases in plan]
    floor_main_cpu = lean_floor(subs, main_only)
    floor_empty_cpu = lean_empty(count)
    own_cpu = in_a_worker(own_code)
    student_cpu = in_a_worker(student_work)
    if not bwrap.support().sandboxed:
        raise SystemExit(f"the sandbox is needed for this measurement: {bwrap.support().reason}")
    child_cpu, child_faults = in_a_worker(sandboxed)
    empty_cpu, empty_faults = in_a_worker(sandboxed_empty)
    plain_empty_cpu, _ = in_a_worker(plain_empty)
    plain = Workers(1, bwrap.Support(False, "bench"))
    for submission in subs:  # the answers the parent judges (no sandbox: same frames)
        runs.append(plain.run(submission.cells, plan, spec.time_limit))
    plain.close()
    expected = build_expected(spec, case_set, shared_workers(bwrap.support()))
    least_judge_cpu = least_judge(expected, count)
    judged: list[tuple[Submission, ChildRun]] = list(zip(subs, runs, strict=True))
    before = time.process_time()
    for submission, run in judged:
        finish(submission, spec, case_set, expected, run, 0.0)
    judge_cpu = (time.process_time() - before) / count

    print(f"bare `python -c 'import numpy'`: {bare * 1000:.1f} ms; {cores} cores")
    print(f"budget per submission (1/50 of that, on {cores} cores): {budget * 1000:.2f} ms CPU")
    print(f"{'part':<9} {'ms CPU':>7} {'of budget':>10}")
    for name, value in (
        ("fork", fork_cpu),
        ("own code", own_cpu),
        ("student", student_cpu),
        ("child", child_cpu),
        ("judge", judge_cpu),
    ):
        print(f"{name:<9} {value * 1000:>7.2f} {value / budget:>9.1f}x")
    print(
        f"floor: {floor_cpu * 1000:.2f} ms CPU per submission ({floor_cpu / budget:.1f}x the "
        "budget) for a process holding numpy alone to fork a child per submission that runs "
        "its cells and calls and nothing else: no grader that gives every student a fresh "
        "process and makes these calls can spend less here"
    )
    print(
        f"       {floor_main_cpu * 1000:.2f} ms CPU ({floor_main_cpu / budget:.1f}x) with the "
        "main cases only (no probe calls), before any answer is sent back or judged"
    )
    total = child_cpu + judge_cpu
    ratio = total / floor_cpu
    verdict = "target met" if ratio <= TARGET else "target not met"
    print(
        f"child + judge / floor: {ratio:.2f} (issue 19's target: <= {TARGET}): {verdict}; "
        f"the fork alone is {fork_cpu / floor_cpu:.2f} of the floor"
    )
    print(
        f"floor of this design: an empty notebook (one cell, `pass`, no call) costs "
        f"{empty_cpu * 1000:.2f} ms CPU through the sandboxed worker "
        f"({empty_cpu / floor_cpu:.2f}x the floor) and {plain_empty_cpu * 1000:.2f} ms "
        f"({plain_empty_cpu / floor_cpu:.2f}x) through a worker without the sandbox: the "
        "child's process creation, before any cell, call or judging"
    )
    fresh = child_cpu - empty_cpu - student_cpu
    print(
        f"in a fresh child: the sandboxed child takes {child_faults:.0f} minor page faults per "
        f"submission, the empty one {empty_faults:.0f} (the worker's pages it copies on write "
        f"or touches first); its cells and calls cost {(child_cpu - empty_cpu) * 1000:.2f} ms "
        f"there beyond the empty child, against {student_cpu * 1000:.2f} ms in a warm process: "
        f"{fresh * 1000:.2f} ms per submission is the fresh copy of the worker (those faults, "
        "cold caches)"
    )
    fresh_own = floor_cpu - floor_empty_cpu
    print(
        f"the floor's own process creation (its child run on an empty notebook): "
        f"{floor_empty_cpu * 1000:.2f} ms; so the cells and calls cost {fresh_own * 1000:.2f} "
        f"ms in the floor's fresh child, against {own_cpu * 1000:.2f} ms in a warm process"
    )
    # A child that costs what an empty one does, plus the code as it costs in any fresh
    # child (the floor's, less the floor's own process creation), plus the least judging.
    best = empty_cpu + fresh_own + least_judge_cpu
    print(
        f"best this design could reach: the empty sandboxed child, the submission's own "
        f"code as it costs in the floor's fresh child, no grader overhead, and judging at its "
        f"least (one numpy.allclose or == per main case: {least_judge_cpu * 1000:.2f} ms): "
        f"{best * 1000:.2f} ms CPU, {best / floor_cpu:.2f}x the floor "
        + (
            f"(above the target {TARGET}: out of reach while every student gets a fresh "
            "sandboxed process)"
            if best / floor_cpu > TARGET
            else f"(within the target {TARGET})"
        )
    )
    print(
        f"child + judge: {total * 1000:.2f} ms CPU per submission -> at best "
        f"{total / cores * 1000:.2f} ms per submission on {cores} cores, "
        f"{bare / (total / cores):.1f}x a bare numpy start"
    )


if __name__ == "__main__":
    main()
