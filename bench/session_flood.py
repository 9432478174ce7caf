"""What bounding the service's sessions costs, and that it holds under a flood.

Usage: python bench/session_flood.py [--limit N] [--flood F] [--samples S]
Two stores (serve.sqlite in a temporary folder): one flooded with F sessions without a
cookie (F > N, N = the anonymous limit), one empty; then S new sessions in each, taken in
turns. Prints the median time of one new session in each, their ratio (the price of pruning
at the limit, measured in this run) and the rows left after the flood.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from grader.serve import store as store_module
from grader.serve.store import Store


def _timed(store: Store) -> float:
    started = time.perf_counter()
    store.new_session(None)
    return time.perf_counter() - started


def main() -> None:
    """Measure, then print one line per measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=store_module.ANONYMOUS_LIMIT)
    parser.add_argument("--flood", type=int, default=0, help="[2 × the limit]")
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    store_module.ANONYMOUS_LIMIT = args.limit
    flood = args.flood or 2 * args.limit
    with tempfile.TemporaryDirectory() as folder:
        empty, full = Store(Path(folder) / "empty"), Store(Path(folder) / "full")
        for _ in range(flood):
            full.new_session(None)
        # Interleaved, so that the disk's and the machine's moods weigh on both alike.
        spent: tuple[list[float], list[float]] = ([], [])
        for _ in range(args.samples):
            spent[0].append(_timed(empty))
            spent[1].append(_timed(full))
        rows = full.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        empty.close()
        full.close()
    small, large = (statistics.median(s) * 1e3 for s in spent)
    print(f"new session, empty store: {small:.3f} ms (median of {args.samples}, interleaved)")
    print(f"new session, at the limit of {args.limit}: {large:.3f} ms; ratio {large / small:.2f}")
    print(f"sessions after a flood of {flood}: {rows} (limit {args.limit})")


if __name__ == "__main__":
    main()
