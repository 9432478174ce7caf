"""The sandboxed worker: a fresh interpreter, exec'd inside bubblewrap, that forks one child
per student and hands back the child's raw bytes.

It is started by the grader (workers.py) and talks to it over its standard input and output:

    grader → worker   message: 4-byte length, JSON header   (init, then one per job)
                      a job's payload follows its header; the *child* reads it, never the worker
    worker → grader   message: 4-byte length, JSON header, then `size` raw bytes (the frames)

So the worker holds numpy, the child runner and the cases' inputs (and sees, read-only, the
course data files its assignments list), and nothing of any student: no source, no compiled
cell, no syntax tree. It never holds a reference solution, the gradebook, or a lock or queue
shared with the batch; whatever a child does to its own copy of the worker's memory is gone
when it exits.
"""

from __future__ import annotations

import gc
import importlib
import os
import pickle
import signal
import sys
from typing import Any

from grader.run.collector import START_THRESHOLD
from grader.run.pipes import encode_message, read_exact, read_message, write_all


def _init(fd: int, header: dict[str, Any]) -> list[Any]:
    """Import what the class's cells will (once, here), then warm up on the cases; return
    the plans, kept for the jobs that name one (their children inherit it, none unpickles
    it again)."""
    from grader.run.warmup import warm_up

    # Importing numpy makes objects, not garbage: about 40 collections (10-25 ms of CPU) at
    # Python's usual threshold, before "ready" (as the grader's own start, grader/run/collector.py).
    usual = gc.get_threshold()
    gc.set_threshold(START_THRESHOLD, *usual[1:])
    # The child seeds numpy's global generator before any cell (child.py): its module is
    # loaded once, here, before "ready", not after every fork, on the notebook's own time.
    importlib.import_module("numpy.random")
    for name in header.get("preload", []):
        try:
            importlib.import_module(name)
        except Exception:  # not installed: the students' own cells will say so
            continue
    plans = pickle.loads(read_exact(fd, int(header["size"])))  # the grader's own cases
    for plan in plans if header.get("warm", True) else ():  # not for one notebook's worker
        warm_up(plan)
    gc.collect()
    gc.freeze()  # what the worker holds now is never traversed again by a child's collector
    gc.set_threshold(*usual)  # the children collect as any Python does
    return list(plans)


def _job(header: dict[str, Any], isolated: bool, plans: list[Any], out: int) -> bool:
    """Fork the student's child (it reads the payload), collect it, describe how it ended,
    and send that and its frames to the grader on `out`; return whether the child took its
    whole payload (else the job stream is out of step). A job that names one of `plans` by
    its index carries the cells alone. The frames never enter this process's heap, whose
    freed memory the next child is a copy of (output.py)."""
    from grader.run.sandbox import Child, Limits

    limits = Limits(**{k: float(v) for k, v in header["limits"].items()})
    files = [(str(source), str(name)) for source, name in header.get("files", [])]
    plan = plans[int(header["plan"])] if "plan" in header else None
    child = Child(int(header["size"]), limits, isolated, files, plan)
    run, frames = child.collect_output()
    reply = {
        "kind": "done",
        "finished": run.finished,
        "timed_out": run.timed_out,
        "went_silent": run.went_silent,
        "exit_description": run.exit_description,
        "ending": run.ending,
        "wire_error": run.wire_error,
        "seconds": run.seconds,
        "isolated": run.isolated,
    }
    try:
        write_all(out, encode_message({**reply, "size": len(frames)}))
        write_all(out, frames)
    finally:
        frames.release()
        child.close_output()
    return child.took_payload


def main() -> None:
    """Serve jobs until the grader closes the pipe. Any fault of ours ends the worker: the
    grader replaces it with a fresh one."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the grader handles Ctrl-C
    isolated = os.environ.get("GRADER_SANDBOX") == "bwrap"
    out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)  # nothing printed by an import or a warm-up can corrupt the replies
    os.dup2(null, 2) if not os.environ.get("GRADER_DEBUG") else None
    try:
        first = read_message(0)
        plans = _init(0, first)
        write_all(out, encode_message({"kind": "ready", "isolated": isolated}))
        while True:
            header = read_message(0)
            if not _job(header, isolated, plans, out):
                return  # the child did not take its whole payload: the stream is lost
    except EOFError:
        return
    except BaseException:
        if os.environ.get("GRADER_DEBUG"):
            import traceback

            traceback.print_exc()
        raise
    finally:
        sys.stdout.flush()
        os._exit(0)
