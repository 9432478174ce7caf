"""Grading on Dask: speed-up from one worker process to two, and the scheduler's cost per task.

Usage: python bench/cluster_scaling.py [--submissions 300] [--noops 2000] [--repeat 2]
Grades one generated class (mixed quality, as bench/batch_throughput.py) four ways in this
process, each `--repeat` times, interleaved, the best kept: on the local pool with one
worker, on a LocalCluster of 1 and of 2 worker processes (one thread each), and on the local
pool with two workers. Throughput is the steady state, from the first graded submission to
the last (start-up and warm-up apart). It prints the speed-up of the second worker process
over the first (and as a fraction of linear), the client's CPU per submission (parsing,
judging, the gradebook, and here the scheduler too: a LocalCluster's scheduler lives in the
client's process), and the scheduler's round trip per task: `--noops` empty tasks through
the same cluster, and the cluster's extra time per submission against the local pool with
one worker. Every ratio is of numbers measured in the same run.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from distributed import Client, LocalCluster

from grader.batch.entries import Entry
from grader.batch.grade import grade_batch
from grader.course.cases import build_cases
from grader.course.config import Config, load_config

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from students import write_class  # noqa: E402

ASSIGNMENT = "self_attention"


def tree_cpu(roots: Sequence[int]) -> float:
    """CPU seconds of processes `roots` and all their descendants (the sandboxed workers, and
    through them their finished children), from /proc: machine load does not inflate it."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(v) for v in fields[11:15]) / tick  # u, s, cu, cs
    tree, grew = set(roots), True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(times.get(pid, 0.0) for pid in tree)


Measure = tuple[float, float, float]  # submissions/s, client CPU ms/sub, worker CPU ms/sub


def steady(
    run: Callable[[Callable[[Entry], None]], object], count: int, workers: Sequence[int] = ()
) -> Measure:
    """Submissions per second from the first graded to the last, the client's CPU per
    submission over the whole run, and the workers' CPU per submission from first to last."""
    stamps: list[float] = []
    cpu = [0.0, 0.0]

    def on_entry(entry: Entry) -> None:
        stamps.append(time.perf_counter())
        if workers and len(stamps) in (1, count):
            cpu[len(stamps) > 1] = tree_cpu(workers)

    client = time.process_time()
    run(on_entry)
    client = time.process_time() - client
    per_worker = (cpu[1] - cpu[0]) / (count - 1) * 1000
    return (len(stamps) - 1) / (stamps[-1] - stamps[0]), client / len(stamps) * 1000, per_worker


def on_cluster(folder: Path, config: Config, workers: int) -> Measure:
    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    ) as cluster:
        address = cluster.scheduler_address
        with Client(address) as client:
            pids = list(client.run(os.getpid).values())
        return steady(
            lambda on_entry: grade_batch(
                folder,
                config,
                None,
                ASSIGNMENT,
                on_entry=on_entry,
                keep_reports=False,
                cluster=address,
            ),
            len(list(folder.iterdir())),
            pids,
        )


def locally(folder: Path, config: Config, jobs: int) -> Measure:
    return steady(
        lambda on_entry: grade_batch(
            folder, config, None, ASSIGNMENT, jobs=jobs, on_entry=on_entry, keep_reports=False
        ),
        len(list(folder.iterdir())),
    )


def noop(value: int) -> int:
    return value


def round_trip(count: int) -> float:
    """Seconds per empty task through a scheduler and one worker process (submitted one by
    one and waited for together, as the batch does)."""
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
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
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the best is kept")
    parser.add_argument("--machines", type=int, default=10, help="for the capacity model")
    parser.add_argument("--cores", type=int, default=8, help="per machine, for the model")
    parser.add_argument("--size", type=int, default=100_000, help="submissions, for the model")
    args = parser.parse_args()
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # its shutdown chatter
    load = os.getloadavg()  # other work on the machine makes every ratio smaller
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
        runs: dict[str, list[Measure]] = {}
        for _ in range(args.repeat):  # interleaved: a busy spell of the machine hits each
            runs.setdefault("local 1 worker", []).append(locally(folder, config, 1))
            runs.setdefault("cluster 1 process", []).append(on_cluster(folder, config, 1))
            runs.setdefault("cluster 2 processes", []).append(on_cluster(folder, config, 2))
            runs.setdefault("local 2 workers", []).append(locally(folder, config, 2))
    best = {name: max(measures) for name, measures in runs.items()}
    for name, (rate, client, worker) in best.items():
        cpu = f"; workers' CPU {worker:5.2f} ms/sub" if worker else ""
        print(f"{name:>20}: {rate:6.1f} submissions/s; client CPU {client:5.2f} ms/sub{cpu}")
    one, c1, w1 = best["cluster 1 process"]
    two, c2, w2 = best["cluster 2 processes"]
    local1, local2 = best["local 1 worker"][0], best["local 2 workers"][0]
    print(
        f"speed-up 1 -> 2 worker processes, wall clock: {two / one:.2f}x ({two / one / 2:.2f} of "
        f"linear; the local pool's own on this machine now: {local2 / local1:.2f}x)"
    )
    print(
        f"speed-up with a core per worker process, from CPU per submission: {2 * w1 / w2:.2f}x "
        f"({w1 / w2:.2f} of linear)"
    )
    per_task = round_trip(args.noops)
    print(
        f"cluster's extra wall time per submission vs the local pool (1 worker): "
        f"{(1 / one - 1 / local1) * 1000:.2f} ms; scheduler round trip per empty task "
        f"({args.noops} tasks): {per_task * 1000:.2f} ms"
    )
    print(f"load average before / after: {load[0]:.1f} / {os.getloadavg()[0]:.1f}")
    model(args, max(w1, w2), max(c1, c2), per_task)


def model(args: argparse.Namespace, worker_ms: float, client_ms: float, task_s: float) -> None:
    """The capacity model of docs/cluster.md, from this run's numbers."""
    cores = args.machines * args.cores
    workers = cores / (worker_ms / 1000)
    client = 1000 / client_ms
    scheduler = 1 / task_s
    bound = min(workers, client, scheduler)
    print(
        f"model, {args.size} submissions on {args.machines} machines of {args.cores} cores: "
        f"workers {workers:.0f}/s, one client {client:.0f}/s, scheduler {scheduler:.0f}/s "
        f"-> {args.size / bound / 60:.1f} min with one client; "
        f"{args.size / min(workers, scheduler) / 60:.1f} min with "
        f"{-(-min(workers, scheduler) // client):.0f} clients on shards"
    )


if __name__ == "__main__":
    main()
