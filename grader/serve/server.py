"""Run the service: the store, the grader and the pages, on uvicorn. SIGTERM (or Ctrl-C)
stops taking requests, lets the uploads being graded finish for a grace period, and leaves
the rest queued in the store for the next start."""

from __future__ import annotations

import csv
import fcntl
import os
import socket
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TextIO

from grader.batch.gradebook import Gradebook
from grader.batch.records import MOST_NAMED, save_roster, stored_roster
from grader.course import cache_prune
from grader.course.config import Config, Mode
from grader.errors import UsageError
from grader.render.escape import folded, spreadsheet_row
from grader.run import bwrap, collector
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.roster import Student, read_roster
from grader.serve.store import Person, Store


def serve(
    config: Config,
    out: Path,
    host: str,
    port: int,
    jobs: int,
    support: bwrap.Support,
    limits: Limits,
    secure_cookies: bool = False,
    grace: float = 10.0,
    database: str | None = None,
    cluster: str | None = None,
    mode: Mode = "required",
    listening: socket.socket | None = None,
) -> None:
    """Serve until SIGTERM or Ctrl-C; every accepted upload is graded, now or at the next
    start. `database`: PostgreSQL instead of OUT's SQLite files (replicas share it);
    `cluster`: a Dask scheduler whose workers run the notebooks, sandboxed as `mode` says;
    `listening`: a socket already bound by `listen` (else host:port is bound here)."""
    # Listening first: while a restarted server loads, its students' uploads wait in the
    # socket's backlog instead of being refused.
    if listening is None:
        listening = listen(host, port)
    store = Store(out, database)
    grading = Grading(config, store, support, jobs, cluster, mode)
    grading.announce = _say
    # The workers warm up (their own processes) while the web side is imported: a restarted
    # server grades its backlog sooner.
    grading.start()
    import uvicorn

    service = Service(store, limits, grading, secure_cookies, grace, config)
    collector.resume_usual()  # loaded: it serves for days, collecting as any Python does
    course = config.path.parent.resolve()
    print(f"serving {course} on http://{host}:{port} (data in {out})", flush=True)
    done = threading.Event()
    cache_prune.keep_pruning(done)  # the cache folder pruned once a day while it serves
    try:
        settings = uvicorn.Config(
            make_app(service),
            log_level="warning",
            proxy_headers=True,  # X-Forwarded-Proto from a TLS proxy on this machine
            timeout_graceful_shutdown=int(grace) + 5,
        )
        uvicorn.Server(settings).run(sockets=[listening])
    finally:
        done.set()
        listening.close()
        if grading.thread.is_alive():  # uvicorn never started its lifespan (a port in use)
            grading.stop(grace)
        store.close()


def usable(out: Path, database: str | None) -> None:
    """Open the service's data and its gradebook once (migrating them): one that cannot be
    used is a UsageError now (exit 2), not a service that takes uploads it never grades."""
    store = Store(out, database)
    try:
        Gradebook(store.gradebook()).close()
    finally:
        store.close()


def hold(out: Path, database: str | None) -> IO[str] | None:
    """OUT for this server alone while it runs (its SQLite files and its queue: a second
    server would take the first's uploads back while it grades them); the lock goes with
    the process. UsageError (exit 2) when another `grader serve` holds it. Replicas on
    PostgreSQL (`database`) share the queue by design, each with its own fault log: no lock."""
    if database is not None:
        return None
    try:
        out.mkdir(parents=True, exist_ok=True)
        held = open(out / "serve.lock", "a+", encoding="utf-8")  # noqa: SIM115 (kept open)
    except OSError as exc:
        raise UsageError(f"{out}: cannot be used ({exc.strerror or exc})") from None
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        held.seek(0)
        who = held.read(200).strip() or "another process"
        held.close()
        raise UsageError(
            f"{out}: another grader serve is using it ({who}); stop that one first, or give "
            "this one another --out"
        ) from None
    held.seek(0)
    held.truncate()
    held.write(f"process {os.getpid()} on {socket.gethostname()}\n")
    held.flush()
    return held


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port; UsageError (exit 2) when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listening = socket.socket(family, kind, proto)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(2048)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listening


def _say(line: str) -> None:
    print(line, flush=True)


def issue_tokens(
    out: Path,
    roster: Path | None,
    instructors: Sequence[str],
    base_url: str,
    into: TextIO | None = None,
    database: str | None = None,
    only: Sequence[str] = (),
) -> int:
    """New tokens for the roster's students (`only`: those of these ids alone, the others'
    tokens left as they are) and the named instructors, written as CSV (id, name, role,
    token, link) to `into` (default stdout); returns how many. `database`: the service's
    PostgreSQL database, when it runs on one."""
    everyone = read_roster(roster) if roster is not None else []
    students = _students(everyone, only)
    store = Store(out, database)
    try:
        staff = [Student(name, name) for name in instructors]
        # A role clash is refused before any token changes (the students' would be issued
        # and their old links dead, with no CSV written to hand out the new ones).
        ids = {folded(s.id) for s in students}
        for name in instructors:
            known = store.person(name)
            if folded(name) in ids or (known is not None and known.role != "instructor"):
                raise UsageError(f"{name} is a student, not an instructor: give another id")
        if roster is not None:  # the class the exports cover; first: a gradebook that
            _keep_roster(store, everyone, grow=bool(only))  # cannot be written stops this
        issued = [(s, t, "student") for s, t in store.issue(students, "student")]
        issued += [(s, t, "instructor") for s, t in store.issue(staff, "instructor")]
    finally:
        store.close()
    writer = csv.writer(into or sys.stdout)
    writer.writerow(["id", "name", "role", "token", "link"])
    for person, token, role in issued:
        link = f"{base_url.rstrip('/')}/t/{token}"
        writer.writerow(spreadsheet_row([person.id, person.name, role, token, link]))
    return len(issued)


def revoke_tokens(out: Path, ids: Sequence[str], database: str | None = None) -> list[Person]:
    """Revoke these people's tokens in the service's data (`Store.revoke`): whom it revoked."""
    store = Store(out, database)
    try:
        return store.revoke(ids)
    finally:
        store.close()


def _keep_roster(store: Store, roster: list[Student], grow: bool = False) -> None:
    """The roster, each id spelled as its account's, as the served class's gradebook's: its
    report and exports (`grader report`, `grader export --results OUT`) then cover exactly
    the roster, a student who never uploaded with "no submission", as a batch's do.
    `grow` (tokens for some students only): the file's students are added to the class's
    roster, or their rows replaced, and no one is taken off it (a file of the new students
    alone must not cut the class). Otherwise the file is the class: those it leaves out
    are named on standard error (their uploads stay; a roster naming them brings them back)."""
    kept = []
    for student in roster:
        account = store.person(student.id)
        kept.append(replace(student, id=account.id) if account is not None else student)
    book = Gradebook(store.gradebook())
    try:
        before = stored_roster(book) or []
        if grow:
            given = {folded(s.id): s for s in kept}
            kept = [given.pop(folded(s.id), s) for s in before] + list(given.values())
        save_roster(book, kept)
    finally:
        book.close()
    left = {folded(s.id) for s in kept}
    dropped = [s.id for s in before if folded(s.id) not in left]
    if dropped:
        named = ", ".join(dropped[:MOST_NAMED]) + (", …" if len(dropped) > MOST_NAMED else "")
        print(
            f"note: the class's roster now leaves out {len(dropped)} student"
            f"{'s' if len(dropped) > 1 else ''} it had ({named}): the report and exports "
            "no longer list them; their uploads are kept, and a --roster naming them again "
            "brings them back (--student ID issues one student's token and keeps the class)",
            file=sys.stderr,
        )


def _students(students: list[Student], only: Sequence[str] = ()) -> list[Student]:
    if not only:
        return students
    wanted = {folded(i): i for i in only}
    missing = sorted(set(wanted) - {folded(s.id) for s in students})
    if missing:
        raise UsageError(f"--student {wanted[missing[0]]}: not on the roster")
    return [s for s in students if folded(s.id) in wanted]
