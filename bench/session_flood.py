"""What bounding the service's sessions costs, and that it holds under a flood.

Usage: python bench/session_flood.py [--limit N] [--flood F] [--samples S]
Starts a store (serve.sqlite in a temporary folder), then: S sign-in forms' sessions made in
an empty store; a flood of F sessions without a cookie (F > N, N = the anonymous limit); S
more made at the limit. Prints the median time of one new session in each, their ratio (the
price of pruning at the limit, measured in this run) and the rows left after the flood.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from grader.serve import store as store_module
from grader.serve.store import Store


def _median_ms(store: Store, samples: int) -> float:
    spent = []
    for _ in range(samples):
        started = time.perf_counter()
        store.new_session(None)
        spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1e3


def main() -> None:
    """Measure, then print one line per measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=store_module.ANONYMOUS_LIMIT)
    parser.add_argument("--flood", type=int, default=0, help="[2 × the limit]")
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    store_module.ANONYMOUS_LIMIT = args.limit
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder))
        empty = _median_ms(store, args.samples)
        for _ in range(args.flood or 2 * args.limit):
            store.new_session(None)
        full = _median_ms(store, args.samples)
        rows = store.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        store.close()
    print(f"new session, empty store: {empty:.3f} ms (median of {args.samples})")
    print(f"new session, at the limit of {args.limit}: {full:.3f} ms; ratio {full / empty:.2f}")
    print(f"sessions after a flood of {args.flood or 2 * args.limit}: {rows} (limit {args.limit})")


if __name__ == "__main__":
    main()
