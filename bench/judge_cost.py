"""CPU per submission of judging alone: `engine.finish` on recorded runs.

Usage: python bench/judge_cost.py [--students 200] [--repeat 3] [--dump FILE] [--profile N]
Generates `students` submissions of mixed quality (as bench/batch_throughput.py), runs each
once on a worker without the sandbox (the same answers a sandboxed child sends), builds the
expected outputs once, then times `engine.finish` (the cells parsed beforehand, as loading
a submission parses them; decoding, comparing, diagnosing, static
hints, the report) over all of them, `repeat` times, and prints the median and each run in
milliseconds of CPU per submission, against one numpy.allclose per main case measured in
the same run (the least a grader must do). `--dump FILE` writes every report (seconds
aside, all fields as repr) as JSON, so that two versions of the grader can be checked to
judge alike; `--profile N` prints the N costliest functions of one more pass under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from batch_throughput import generate  # noqa: E402
from where_time_goes import least_judge  # noqa: E402

from grader.course.cases import build_cases  # noqa: E402
from grader.course.config import load_config  # noqa: E402
from grader.course.notebook import load_submission  # noqa: E402
from grader.engine import finish  # noqa: E402
from grader.judge.expected import build_expected  # noqa: E402
from grader.run import bwrap  # noqa: E402
from grader.run.workers import Workers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--profile", type=int, default=0)
    args = parser.parse_args()
    spec = load_config(REPO / "config.yaml").assignment("self_attention")
    case_set = build_cases(spec)
    plan = case_set.plan(spec)
    with tempfile.TemporaryDirectory() as scratch:
        folder = scratch
        generate(Path(scratch) / "class", args.students)
        subs = [load_submission(p) for p in sorted((Path(scratch) / "class").iterdir())]
    plain = Workers(1, bwrap.Support(False, "bench"))
    try:
        runs = [plain.run(s.cells, plan, spec.time_limit) for s in subs]
        expected = build_expected(spec, case_set, plain)
    finally:
        plain.close()
    judged = list(zip(subs, runs, strict=True))

    def one_pass() -> float:
        for submission, _ in judged:  # parsed as loading parses them (finish forgets them)
            for cell in submission.cells:
                submission.tree(cell.index)
        before = time.process_time()
        for submission, run in judged:
            finish(submission, spec, case_set, expected, run, 0.0)
        return (time.process_time() - before) / len(judged)

    one_pass()  # warm: imports and caches the first submission fills
    times = [one_pass() for _ in range(args.repeat)]
    least = least_judge(expected, len(judged))
    median = statistics.median(times)
    each = ", ".join(f"{t * 1000:.3f}" for t in times)
    print(f"finish: {median * 1000:.3f} ms CPU per submission (median of {args.repeat}: {each})")
    print(f"one numpy.allclose per main case: {least * 1000:.3f} ms; ratio {median / least:.1f}")
    if args.dump:
        reports = []
        for submission, run in judged:
            report = replace(finish(submission, spec, case_set, expected, run, 0.0), seconds=0)
            reports.append(repr(report).replace(folder, "CLASS"))  # every field, any type
        args.dump.write_text(json.dumps(reports, indent=1))
        print(f"reports written to {args.dump}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_pass()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
