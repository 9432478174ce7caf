"""`grader serve` under a class's load, on loopback: uploads at a steady rate from many
students, each followed until its feedback is ready, then the same with the server killed
outright (SIGKILL) halfway and started again.

Usage: python bench/serve_load.py [--uploads 300] [--students 100] [--rate 5] [--jobs N]
       [--only plain|kill]
Prints, for each run: p50 and p95 seconds from the start of an upload to its feedback being
ready (as a polling browser would see it, every 50 ms), the uploads accepted, lost (accepted
but never graded: must be 0) and graded more than once (must be 0), and for the kill run the
uploads the dead server refused (the client tried again: a refused upload is not accepted).
For the kill run it also prints where the restart's time goes: after the kill, when the new
server accepted uploads again, when its grading workers were ready (its own log line), and
when the uploads that came while it was down or starting were all graded. Stops by itself:
each run ends within two minutes of its last upload.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from grader.serve.roster import Student  # noqa: E402
from grader.serve.store import Store  # noqa: E402

import students  # noqa: E402

VARIANTS = [
    {},
    {"scaled": students.SCALE_HARDCODED},
    {"softmax_cols": students.SOFTMAX_COLS_WRONG_AXIS},
    {"qkv_loop": students.ELEMENTWISE},
]
POLL = 0.05
DRAIN_SECONDS = 120


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    refused: int = 0
    stored: int = 0
    twice: int = 0
    ungraded: int = 0
    spans: list[tuple[float, float]] = field(default_factory=list)  # (upload began, graded)
    killed: float = 0.0
    accepting: float = 0.0
    workers: float = 0.0


def notebook(number: int) -> bytes:
    """A student notebook, different bytes for each upload."""
    import nbformat

    cells = students.cells(**VARIANTS[number % len(VARIANTS)])
    cells[0] = f"# upload {number}\n{cells[0]}"
    return nbformat.writes(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    ).encode()


def start(out: Path, port: int, jobs: int, log: Path) -> subprocess.Popen[bytes]:
    """The server, as `grader serve` starts it, its output in `log`."""
    command = [sys.executable, "-m", "grader", "serve", "--out", str(out), "--port", str(port)]
    options = ["--jobs", str(jobs), "--min-interval", "0", "--max-attempts", "1000"]
    with log.open("wb") as sink:
        return subprocess.Popen(
            [*command, *options], stdout=sink, stderr=subprocess.STDOUT, cwd=REPO
        )


async def watch_restart(base: str, log: Path, run: Run) -> None:
    """After the kill: when the new server answers, and when it says its workers are ready."""
    async with httpx.AsyncClient(base_url=base) as client:
        gives_up = time.monotonic() + 60
        while not (run.accepting and run.workers) and time.monotonic() < gives_up:
            await asyncio.sleep(0.01)
            if not run.workers and b"grading workers ready" in log.read_bytes():
                run.workers = time.monotonic()
            if not run.accepting:
                try:
                    await client.get("/", timeout=1)
                    run.accepting = time.monotonic()
                except httpx.TransportError:
                    pass


async def until_up(base: str) -> None:
    async with httpx.AsyncClient(base_url=base) as client:
        for _ in range(600):
            try:
                await client.get("/")
                return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise SystemExit("the server did not start in a minute")


async def sign_in(base: str, token: str) -> tuple[httpx.AsyncClient, str]:
    client = httpx.AsyncClient(base_url=base, timeout=30)
    confirm = await client.get(f"/t/{token}")  # the link's page; its button posts the token
    shown = re.search(r'name="csrf" value="([^"]+)"', confirm.text)
    assert shown, confirm.text[:200]
    data = {"csrf": shown.group(1), "token": token}
    page = await client.post("/login", data=data, follow_redirects=True)
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text[:200]
    return client, found.group(1)


async def one_upload(
    session: tuple[httpx.AsyncClient, str], data: bytes, run: Run, deadline: float
) -> None:
    """Upload (again while the server is down), then poll until graded."""
    client, csrf = session
    started = time.monotonic()
    while True:
        try:
            answer = await client.post(
                "/upload", data={"csrf": csrf}, files={"notebook": ("hw.ipynb", data)}
            )
            break
        except httpx.TransportError:  # not accepted: the server is down; a student retries
            run.refused += 1
            await asyncio.sleep(0.2)
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    where = answer.headers["location"]
    run.accepted.append(where)
    while time.monotonic() < deadline:
        try:
            state = (await client.get(f"{where}/status")).json()["state"]
        except httpx.TransportError:
            state = "down"
        if state in ("graded", "problem"):
            run.latencies.append(time.monotonic() - started)
            run.spans.append((started, time.monotonic()))
            return
        await asyncio.sleep(POLL)


async def load(args: argparse.Namespace, kill: bool) -> Run:
    run = Run()
    with tempfile.TemporaryDirectory(prefix="serve-load-") as folder:
        out = Path(folder) / "out"
        store = Store(out)
        roster = [Student(f"s{n:03d}", f"Student {n}") for n in range(args.students)]
        tokens = [token for _, token in store.issue(roster, "student")]
        store.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        log = Path(folder) / "server.log"
        server = start(out, port, args.jobs, log)
        watcher = None
        try:
            await until_up(base)
            sessions = [await sign_in(base, token) for token in tokens]
            warm = Run()  # one upload first: the workers are warm before the clock starts
            await one_upload(sessions[0], notebook(-1), warm, time.monotonic() + 120)
            bodies = [notebook(n) for n in range(args.uploads)]
            deadline = time.monotonic() + args.uploads / args.rate + DRAIN_SECONDS
            tasks = []
            began = time.monotonic()
            for n in range(args.uploads):
                await asyncio.sleep(max(0.0, began + n / args.rate - time.monotonic()))
                if kill and n == args.uploads // 2:
                    server.send_signal(signal.SIGKILL)
                    server.wait()
                    run.killed = time.monotonic()
                    server = start(out, port, args.jobs, log)
                    watcher = asyncio.create_task(watch_restart(base, log, run))
                session = sessions[n % len(sessions)]
                tasks.append(asyncio.create_task(one_upload(session, bodies[n], run, deadline)))
            await asyncio.gather(*tasks, *([watcher] if watcher else []))
            for client, _ in sessions:
                await client.aclose()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
        db = sqlite3.connect(out / "serve.sqlite")
        rows = db.execute("SELECT status, recorded FROM uploads WHERE id > 1").fetchall()
        run.stored = len(rows)
        run.twice = sum(r[1] > 1 for r in rows)
        run.ungraded = sum(r[0] not in ("graded", "problem") for r in rows)
    return run


def report(name: str, run: Run, args: argparse.Namespace) -> None:
    lat = sorted(run.latencies)
    p50 = statistics.median(lat) if lat else float("nan")
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")
    lost = len(run.accepted) - len(lat)
    print(
        f"{name:>5}: {args.uploads} uploads from {args.students} students at {args.rate:g}/s; "
        f"accepted {len(run.accepted)}, stored {run.stored}, lost {lost + run.ungraded}, "
        f"graded twice {run.twice}; upload→feedback p50 {p50:.3f} s, p95 {p95:.3f} s, "
        f"max {lat[-1] if lat else float('nan'):.3f} s"
        + (f"; connections refused while down {run.refused} (retried)" if run.refused else "")
    )


def restart_report(run: Run) -> None:
    """Where the restart's time went, in seconds after the kill."""
    if not run.killed:
        return
    # The uploads that began before the new server accepted: those the restart delayed.
    hit = [done for began, done in run.spans if run.killed - 1.0 <= began <= run.accepting]
    ready = f"{run.workers - run.killed:.2f} s" if run.workers else "(not said)"
    print(
        f"       restart: accepting uploads {run.accepting - run.killed:.2f} s after the kill, "
        f"workers ready {ready}, the {len(hit)} uploads sent "
        f"meanwhile all graded {max(hit, default=run.killed) - run.killed:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=300)
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--rate", type=float, default=5.0, help="uploads per second")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--only", choices=["plain", "kill"], default=None)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {args.jobs} grading workers")
    for name in ("plain", "kill"):
        if args.only in (None, name):
            run = asyncio.run(load(args, kill=name == "kill"))
            report(name, run, args)
            restart_report(run)


if __name__ == "__main__":
    main()
