"""Batch grading throughput and memory, against a bare `python -c "import numpy"` start.

Usage: python bench/batch_throughput.py [--sizes 100 1000 5000] [--jobs N]
For each size, generates that many submissions of mixed quality (correct, the seed
mistakes, broken cells, stubs), grades them with `grader grade --out` in a fresh process
(start-up, gradebook, feedback pages, CSV and report.html included), and prints seconds per
submission, its ratio to a bare numpy start measured in the same run, and the peak resident
memory of the largest grader process. With two sizes or more it also prints the marginal
cost of one more submission (the slope between the smallest and the largest size) and the
fixed cost of a run, both against the issue's budget of 1/50 of a bare numpy start, and
whether the run stays flat (issue 19): from the second largest size to the largest, the time
per submission and the peak memory grow by at most FLAT (25%).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from students import write_class as generate  # noqa: E402

FLAT = 1.25  # issue 19: most growth of time per submission and of memory, size to size


def compile_grader() -> None:
    """The grader's bytecode compiled, as installing the package does. From an editable
    checkout under PYTHONDONTWRITEBYTECODE (set in many container images) every start would
    otherwise compile about a hundred of its modules again (some 0.16 s here), a cost no
    installed grader pays."""
    command = [
        sys.executable,
        "-m",
        "compileall",
        "-q",
        str(Path(__file__).parent.parent / "grader"),
    ]
    subprocess.run(command, check=True, capture_output=True)


def bare_numpy(repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def grade(folder: Path, out: Path, jobs: int) -> tuple[float, float]:
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--out", str(out)]
    command += ["--assignment", "self_attention", "--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    peak_kb = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return seconds, peak_kb / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    jobs = args.jobs or len(__import__("os").sched_getaffinity(0))
    compile_grader()
    bare = bare_numpy()
    print(f"bare `python -c 'import numpy'`: {bare * 1000:.1f} ms (median of 7); jobs={jobs}")
    columns = [("submissions", 11), ("total s", 8), ("ms/sub", 7), ("subs/s", 7)]
    columns += [("bare/sub", 8), ("peak MB", 7)]
    print("  ".join(f"{name:>{width}}" for name, width in columns))
    measured: list[tuple[int, float]] = []
    peaks: dict[int, float] = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "class"
            generate(folder, size)
            seconds, peak = grade(folder, Path(scratch) / "out", jobs)
        measured.append((size, seconds))
        peaks[size] = peak
        per = seconds / size
        print(
            f"{size:>11}  {seconds:>8.2f}  {per * 1000:>7.2f}  {size / seconds:>7.1f}  "
            f"{bare / per:>8.1f}  {peak:>7.0f}",
            flush=True,
        )
    print(f"budget (1/50 of a bare numpy start): {bare / 50 * 1000:.2f} ms per submission")
    if len(measured) >= 2:
        (small, t_small), (big, t_big) = min(measured), max(measured)
        if big > small:
            slope = (t_big - t_small) / (big - small)
            fixed = t_small - small * slope
            print(
                f"marginal: {slope * 1000:.2f} ms per submission ({bare / slope:.1f}x faster than "
                f"a bare numpy start); fixed cost of a run: {fixed:.2f} s"
            )
        (before, t_before), (last, t_last) = sorted(measured)[-2:]
        if last > before:
            time_growth = (t_last / last) / (t_before / before)
            memory_growth = peaks[last] / peaks[before]
            flat = time_growth <= FLAT and memory_growth <= FLAT
            print(
                f"from {before} to {last}: time per submission x{time_growth:.2f}, peak memory "
                f"x{memory_growth:.2f} (flat: both <= {FLAT}): "
                f"{'target met' if flat else 'target not met'}"
            )


if __name__ == "__main__":
    main()
