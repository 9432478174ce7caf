"""The same notebooks graded by this grader and by nbgrader's `autograde`, side by side.

Usage: python bench/nbgrader_side_by_side.py [--students 20] [--venv /tmp/nbgrader-venv]
Installs nbgrader into its own virtual environment (once), writes an nbgrader course whose
assignment has the six self_attention functions as solution cells and one autograded test
cell per function, fills the same student code into both formats, and times
`nbgrader autograde` against `grader grade` (after one untimed run that caches the
course's references, as any run after the first finds them, with the grader's bytecode
compiled as installing it does; the median of three). Prints
seconds per notebook, the ratio against issue 19's targets (>= 100x on 20 notebooks, >= 300x
on 300) and the best ratio any grader that starts Python with numpy could reach here:
nbgrader's time over a bare numpy start, and over two side by side (a grader and its
sandboxed worker), and the least this design could take (bench/where_time_goes.py's best
per notebook, measured in this run on 50 generated notebooks, on every core, after that
start).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from batch_throughput import bare_numpy, compile_grader  # noqa: E402
from where_time_goes import design_best  # noqa: E402

import students  # noqa: E402
from conftest import write_notebook  # noqa: E402
from students import VARIANTS  # noqa: E402

# One autograded test per function: a check in the style an nbgrader course would write.
TESTS = {
    "qkv_loop": "q, k, v = qkv_loop(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v)\n"
    "assert np.allclose(q[0], omega_q @ all_x[0] + beta_q)",
    "softmax": "w = np.exp(np.array([1.0, 2.0, 3.0]))\n"
    "assert np.allclose(np.squeeze(softmax([1.0, 2.0, 3.0])), w / w.sum())",
    "attention_loop": "out = attention_loop(*qkv_loop(all_x, omega_q, omega_k, omega_v, "
    "beta_q, beta_k, beta_v))\nassert len(out) == N",
    "softmax_cols": "m = np.arange(6.0).reshape(2, 3)\n"
    "assert np.allclose(softmax_cols(m).sum(axis=0), 1)",
    "self_attention": "assert self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, "
    "beta_k).shape == (D, N)",
    "scaled_dot_product_self_attention": "assert scaled_dot_product_self_attention(X, omega_v, "
    "omega_q, omega_k, beta_v, beta_q, beta_k).shape == (D, N)",
}


TARGETS = {20: 100.0, 300: 300.0}  # issue 19: notebooks -> least ratio to nbgrader


def meta(grade_id: str, *, solution: bool = False, points: int = 0) -> dict[str, object]:
    cell: dict[str, object] = {
        "grade": points > 0,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points:
        cell["points"] = points
    return {"nbgrader": cell}


def course_notebook(functions: dict[str, str]) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(students.SETUP, metadata=meta("setup"))]
    for name, source in functions.items():
        cells.append(nbformat.v4.new_code_cell(source, metadata=meta(name, solution=True)))
        test = "import numpy as np\n" + TESTS[name]
        cells.append(nbformat.v4.new_code_cell(test, metadata=meta(f"test_{name}", points=1)))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return notebook


def install(venv: Path) -> Path:
    nbgrader = venv / "bin" / "nbgrader"
    if not nbgrader.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "-q", "nbgrader", "numpy"]
        subprocess.run(pip, check=True)
    return nbgrader


def run(course: Path, nbgrader: Path, *args: str) -> None:
    env = {**os.environ, "PATH": f"{nbgrader.parent}:{os.environ['PATH']}"}  # alembic, kernel
    command = [str(nbgrader), *args]
    result = subprocess.run(command, cwd=course, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")


def two_numpy_starts(repeat: int = 7) -> float:
    """Median wall time of two `python -c "import numpy"` run side by side (the trusted
    grader and its sandboxed worker, which both import numpy, at the least)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        running = [subprocess.Popen([sys.executable, "-c", "import numpy"]) for _ in range(2)]
        for process in running:
            process.wait()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "nbgrader-venv")
    args = parser.parse_args()
    nbgrader = install(args.venv)
    with tempfile.TemporaryDirectory() as scratch:
        course = Path(scratch) / "course"
        (course / "source" / "sa").mkdir(parents=True)
        (course / "nbgrader_config.py").write_text(
            "c = get_config()\nc.CourseDirectory.course_id = 'bench'\n"
        )
        nbformat.write(course_notebook(students.CORRECT), course / "source" / "sa" / "sa.ipynb")
        run(course, nbgrader, "generate_assignment", "sa", "--force")
        ours = Path(scratch) / "ours"
        ours.mkdir()
        for i in range(args.students):
            functions = {**students.CORRECT, **VARIANTS[i % len(VARIANTS)]}
            folder = course / "submitted" / f"s{i:03d}" / "sa"
            folder.mkdir(parents=True)
            nbformat.write(course_notebook(functions), folder / "sa.ipynb")
            write_notebook(ours / f"s{i:03d}.ipynb", students.cells(**VARIANTS[i % len(VARIANTS)]))
        started = time.perf_counter()
        run(course, nbgrader, "autograde", "sa", "--create", "--force")
        theirs = (time.perf_counter() - started) / args.students
        graded = len(list((course / "autograded").glob("*/sa/sa.ipynb")))
        command = [sys.executable, "-m", "grader", "grade", str(ours)]
        command += ["--assignment", "self_attention"]
        # The course's references cached, as after any first run (nbgrader's generate step
        # is not timed either); then the median of three runs, each grading every notebook.
        warm = ["--out", str(Path(scratch) / "warm")]
        compile_grader()  # its bytecode, as an installed grader has it
        subprocess.run([*command, *warm], check=True, capture_output=True)
        times = []
        for attempt in range(3):
            out = ["--out", str(Path(scratch) / f"out{attempt}")]
            started = time.perf_counter()
            subprocess.run([*command, *out], check=True, capture_output=True)
            times.append(time.perf_counter() - started)
        mine = statistics.median(times) / args.students
        two = two_numpy_starts()
    best, empty = design_best(50)
    cores = len(os.sched_getaffinity(0))
    print(json.dumps({"notebooks": args.students, "nbgrader_autograded": graded}))
    print(f"nbgrader autograde: {theirs:.3f} s per notebook")
    print(f"grader grade:       {mine:.3f} s per notebook")
    ratio = theirs / mine
    print(f"ratio: {ratio:.0f}× (both include their process start, in the same run)")
    bare = bare_numpy()
    target = TARGETS.get(args.students)
    if target is not None:
        verdict = "target met" if ratio >= target else "target not met"
        print(f"issue 19's target for {args.students} notebooks: >= {target:.0f}×: {verdict}")
    print(
        f"floor: a grader that starts one Python with numpy and grades in no time at all "
        f"would be {theirs * args.students / bare:.0f}× nbgrader here"
    )
    print(
        f"floor with a sandbox: a grader and one sandboxed worker that import numpy side by "
        f"side take {two:.2f} s before any notebook runs: at most "
        f"{theirs * args.students / two:.0f}× nbgrader here"
    )
    least = two + args.students * best / cores
    reach = theirs * args.students / least
    print(
        f"this design's least for {args.students} notebooks: a grader and its sandboxed "
        f"worker starting side by side ({two:.2f} s), then {best * 1000:.2f} ms CPU per "
        f"notebook on {cores} cores (an empty sandboxed child {empty * 1000:.2f} ms, the "
        f"notebook's own code and judging at its least, no grader overhead): {least:.2f} s, "
        f"{reach:.0f}× nbgrader"
        + (
            f": the target {target:.0f}× is out of reach while every notebook gets a fresh "
            "sandboxed process"
            if target is not None and reach < target
            else ""
        )
    )
    wanted = target or 100.0
    print(
        f"{wanted:.0f}× would mean all {args.students} notebooks in "
        f"{theirs * args.students / wanted:.2f} s ({theirs / wanted * 1000:.1f} ms each); "
        f"ours took {mine * args.students:.2f} s, of which a bare `python -c 'import numpy'` "
        f"is {bare:.2f} s"
    )


if __name__ == "__main__":
    main()
