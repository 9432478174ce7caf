"""Grading on Dask: speed-up from one worker process to two, and the scheduler's cost per task.

Usage: python bench/cluster_scaling.py [--submissions 300] [--noops 2000]
Grades one generated class (mixed quality, as bench/batch_throughput.py) four times in this
process: on the local pool with one worker, then on a LocalCluster of 1 and of 2 worker
processes (one thread each), then on the local pool with two workers. Throughput is the
steady state, from the first graded submission to the last (start-up and warm-up apart). It
prints the speed-up of the second worker process over the first (and as a fraction of
linear), the client's CPU per submission (parsing, judging, the gradebook, and here the
scheduler too: a LocalCluster's scheduler lives in the client's process), and the scheduler's
round trip per task: `--noops` empty tasks through the same cluster, and the cluster's extra
time per submission against the local pool with one worker. Every ratio is of numbers
measured in the same run.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from distributed import Client, LocalCluster

from grader.batch.grade import Entry, grade_batch
from grader.course.cases import build_cases
from grader.course.config import Config, load_config

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from students import write_class  # noqa: E402

ASSIGNMENT = "self_attention"


def steady(run: Callable[[Callable[[Entry], None]], object]) -> tuple[float, float]:
    """Submissions per second from the first graded to the last, and the client's CPU
    seconds per submission over the whole run."""
    stamps: list[float] = []
    cpu = time.process_time()
    run(lambda entry: stamps.append(time.perf_counter()))
    cpu = time.process_time() - cpu
    return (len(stamps) - 1) / (stamps[-1] - stamps[0]), cpu / len(stamps)


def on_cluster(folder: Path, config: Config, workers: int) -> tuple[float, float]:
    with LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        return steady(
            lambda on_entry: grade_batch(
                folder,
                config,
                None,
                ASSIGNMENT,
                on_entry=on_entry,
                keep_reports=False,
                cluster=address,
            )
        )


def locally(folder: Path, config: Config, jobs: int) -> tuple[float, float]:
    return steady(
        lambda on_entry: grade_batch(
            folder, config, None, ASSIGNMENT, jobs=jobs, on_entry=on_entry, keep_reports=False
        )
    )


def noop(value: int) -> int:
    return value


def round_trip(count: int) -> float:
    """Seconds per empty task through a scheduler and one worker process (submitted one by
    one and waited for together, as the batch does)."""
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.gather([client.submit(noop, -1, pure=False)])  # connections made
        started = time.perf_counter()
        futures = [client.submit(noop, i, pure=False) for i in range(count)]
        client.gather(futures)
        return (time.perf_counter() - started) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--noops", type=int, default=2000)
    args = parser.parse_args()
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # its shutdown chatter
    config = load_config(REPO / "config.yaml")
    spec = config.assignment(ASSIGNMENT)
    plan_bytes = len(pickle.dumps(build_cases(spec).plan(spec)))
    print(
        f"cores this process may use: {len(os.sched_getaffinity(0))}; "
        f"{args.submissions} submissions; a task's case plan: {plan_bytes / 1024:.1f} KiB"
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "class"
        write_class(folder, args.submissions)
        local1, local_cpu = locally(folder, config, 1)
        one, cpu1 = on_cluster(folder, config, 1)
        two, cpu2 = on_cluster(folder, config, 2)
        local2, _ = locally(folder, config, 2)
    per_task = round_trip(args.noops)
    print(
        f"local pool, 1 worker:      {local1:7.1f} submissions/s "
        f"(client CPU {local_cpu * 1000:.2f} ms/sub)"
    )
    print(f"local pool, 2 workers:     {local2:7.1f} submissions/s")
    print(
        f"cluster, 1 worker process: {one:7.1f} submissions/s (client CPU {cpu1 * 1000:.2f} ms/sub)"
    )
    print(
        f"cluster, 2 worker processes:{two:6.1f} submissions/s "
        f"(client CPU {cpu2 * 1000:.2f} ms/sub)"
    )
    print(
        f"speed-up 1 -> 2 worker processes: {two / one:.2f}x ({two / one / 2:.2f} of linear; "
        f"the local pool's own: {local2 / local1:.2f}x)"
    )
    print(
        f"added time per submission on the cluster vs the local pool (1 worker): "
        f"{(1 / one - 1 / local1) * 1000:.2f} ms"
    )
    print(f"scheduler round trip per empty task ({args.noops} tasks): {per_task * 1000:.2f} ms")


if __name__ == "__main__":
    main()
