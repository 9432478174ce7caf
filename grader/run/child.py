"""What runs inside the student's process: execute each cell on its own, call the targets.

Everything here executes after the fork, in the untrusted child. It reports through
`wire.encode_frame` only, and never returns into the caller: `serve` ends with `os._exit`.
"""

from __future__ import annotations

import ast
import builtins
import dis
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Sequence
from types import CodeType, FrameType, TracebackType
from typing import Any

import numpy as np

from grader.course.cases import Case, probe_base
from grader.course.notebook import CodeCell
from grader.run import student_call, wire
from grader.run.caught import CAUGHT_EXIT, CAUGHT_MARK, CAUGHT_SHARE
from grader.run.compat import restore_removed_names
from grader.run.cpu_wait import QueueWait, charged
from grader.run.default_signals import end_by
from grader.run.recursion import cap_recursion_limit
from grader.run.scalars import SHIM_NAME, ScalarShim, rewrite_scalar_calls
from grader.run.wire import (
    MAX_ELEMENTS,
    MAX_TEXT,
    digest,
    encode_frame,
    plain_text,
    type_name,
)

MAX_OUTPUT = 8192
FLUSH_SECONDS = 0.2
MAX_ARRAY = MAX_ELEMENTS  # the parent refuses larger arrays anyway


class TimeLimitReached(BaseException):
    """Raised by SIGALRM; a BaseException so `except Exception` in student code lets it pass.

    `where` is the student's place when the limit struck (`{"cell": C, "line": L}`, ints
    only), sampled from the interrupted frame: the line the code was stuck on, not the call
    that entered it."""

    def __init__(self, where: dict[str, int] | None = None, caught: bool = False) -> None:
        super().__init__()
        self.where = where or {}
        self.caught = caught  # raised again at the next line of code that had caught it


class _CappedOutput:
    """Stands in for stdout/stderr: keeps the first bytes, counts the rest."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        # An exact str: a subclass of the notebook's may slice or measure itself as it
        # likes, and what is kept is joined by the grader, outside any time limit.
        text = plain_text(text if issubclass(type(text), str) else str(text))
        if self.size < MAX_OUTPUT:
            self.kept.append(text[: MAX_OUTPUT - self.size])
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _NoIPython:
    """`get_ipython()` in exported scripts: every magic is a no-op."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _check_while_grading(*args: Any, **kwargs: Any) -> str:
    """What `from grader import check; check()` (the last cell of every exercise) finds in
    the graded process: the real one would import what the sandbox hides, and grade again."""
    return "check() does nothing while the grader itself runs this notebook."


def compile_cell(cell: CodeCell) -> CodeType:
    """Compile a cell in the child itself: the worker holds no student's code, compiled or
    not, so nothing of one student is left in the memory the next one is forked from."""
    return _compile(cell)


def _compile(cell: CodeCell) -> CodeType:
    """Compile a cell; the float()/int() rewrite only when the cell calls one of them."""
    name = f"<cell {cell.index}>"
    if "float(" not in cell.source and "int(" not in cell.source:
        return compile(cell.source, name, "exec")
    return compile(rewrite_scalar_calls(ast.parse(cell.source), cell.index), name, "exec")


# Where the code is stuck is sampled SAMPLES times over the last SAMPLED share of a limit,
# and the place seen most often is reported: one sample alone may catch the loop's own test
# or jump instead of the line that takes the time.
SAMPLES = 8
SAMPLED = 0.2
# Past the limit, its exception is raised again at each tick (SAMPLED / SAMPLES of the
# limit) while the notebook's code goes on catching it; after GIVE_UP ticks the process
# ends with CAUGHT_EXIT (the parent says why), as no exception can stop such code.
# CAUGHT_SHARE (0.6) of the limit: a finite loop of such retries mostly ends first; the
# parent's watchdog waits that long before it calls the child silent.
GIVE_UP = round(CAUGHT_SHARE * SAMPLES / SAMPLED)
# From this many ticks past the limit the exception is raised at the code's next line as
# well (_unwind): a retry loop whose `except:` swallowed it raises it again from the
# handler's first line, which that `try` does not catch, and the cell or call ends there
# with the rest of the notebook still graded. Deeper nests of such handlers end at GIVE_UP.
UNWIND = 2
# A SIGALRM this soon after this timer was stopped is a tick of it the kernel delivered just
# before, not the notebook's own alarm (seconds).
STALE = 0.005


class _Sampler:
    """The places seen since the time limit's alarm was armed, and how many alarms are left;
    and the notebook's own alarm while the limit's takes the timer (the same ITIMER_REAL)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []
        self.left = 0  # alarms before the limit; below 0: ticks after it, the code going on
        self.armed = False
        self.over = 0  # the limit's exception raised again in the notebook's code, past it
        self.disarmed = 0.0  # when arm(0) last stopped this timer while it ran (monotonic)
        self.step = 0.0
        self.theirs: tuple[float, float] = (0.0, 0.0)  # when due (monotonic), and its interval
        # The limit's own clock: when armed, for how long, and the run-queue wait then (the
        # time waited for a CPU behind other processes is not charged: cpu_wait.py).
        self.queue: QueueWait | None = None  # serve opens it, before any student code
        self.began = self.limit = self.waited = 0.0
        self.handed_back = False  # arm(0) gave the timer back to an alarm of the notebook's

    def arm(self, seconds: float) -> None:
        """Start over: the first sample at (1 - SAMPLED) of `seconds`, the last at the limit,
        where the alarm stops the code (0 disarms, and gives the notebook back its alarm)."""
        self.seen.clear()
        if self.over > UNWIND:
            sys.settrace(None)  # _unwind's trace function, if it has not fired
        mine, step, self.left, first = self.armed, self.step, 0, 0.0
        self.armed, self.over, self.handed_back = seconds > 0, 0, False
        if seconds > 0:
            self.began, self.limit = time.monotonic(), seconds
            self.waited = self.queue.seconds() if self.queue is not None else 0.0
            self.left = SAMPLES + 1
            # Whole microseconds (what the timer keeps), never none: `ours` knows it by them.
            self.step = max(round(seconds * SAMPLED / SAMPLES, 6), 1e-6)
            first = max(seconds - self.step * SAMPLES, 1e-6)
        old = signal.setitimer(signal.ITIMER_REAL, first, self.step if first else 0)
        if mine and not seconds:
            self.disarmed = time.monotonic()
        if old[0] > 0 and not (mine and abs(old[1] - step) < 5e-7):
            self.theirs = (time.monotonic() + old[0], old[1])  # set by a cell, not yet due
        elif mine and old[0] == 0:
            self.theirs = (0.0, 0.0)  # the cell cancelled the timer (`signal.alarm(0)`)
        if self.theirs[0]:
            self._keep_theirs(first)

    def _keep_theirs(self, first: float) -> None:
        """The notebook's alarm kept: due before the limit's first sample, it takes the
        timer's first expiry (`_alarm` ends the notebook then); disarmed, the timer is its."""
        now = time.monotonic()
        due, interval = self.theirs
        if due <= now:  # it came while the limit's timer stood in for it
            due = due + interval * (1 + (now - due) // interval) if interval else 0.0
            self.theirs = (due, interval)
        if due and not first:
            self.theirs, self.handed_back = (0.0, 0.0), True
            signal.setitimer(signal.ITIMER_REAL, due - now, interval)
        elif due and due - now < first:
            signal.setitimer(signal.ITIMER_REAL, max(due - now, 1e-6), self.step)

    def ours(self) -> bool:
        """Whether the SIGALRM just come is this timer's, and not the notebook's alarm: armed,
        still repeating at its step (a cell's own `signal.alarm` or `setitimer` replaces it),
        and no alarm of the notebook's from an earlier cell due."""
        interval = signal.getitimer(signal.ITIMER_REAL)[1]
        due = self.theirs[0]
        if due and time.monotonic() >= due - 1e-3:
            return False
        return self.armed and abs(interval - self.step) < 5e-7

    def starved(self) -> bool:
        """Whether the code, at its limit on the clock, spent some of that time waiting for a
        CPU behind other processes, so that what the limit charges is still under it."""
        if self.queue is None:
            return False
        waited = self.queue.seconds() - self.waited
        return charged(time.monotonic() - self.began, waited) < self.limit

    def stale(self) -> bool:
        """Whether the SIGALRM just come is a tick of this timer that the kernel delivered
        before `arm(0)` disarmed it: nothing is armed and no alarm of the notebook's is kept
        (it would be its own, to end the process). However late its handler runs (a process
        starved of the CPU runs it long after), unless the timer was given back to an alarm
        of the notebook's: then only within STALE of the disarming."""
        if self.armed or self.theirs[0]:
            return False
        if self.handed_back and time.monotonic() - self.disarmed > STALE:
            return False
        return signal.getitimer(signal.ITIMER_REAL)[0] == 0

    def most_seen(self) -> dict[str, int]:
        """The place sampled most often (the latest of equals), as cell and line."""
        if not self.seen:
            return {}
        counts: dict[tuple[int, int], int] = {}
        for place in self.seen:
            counts[place] = counts.get(place, 0) + 1
        cell, line = max(reversed(self.seen), key=lambda place: counts[place])
        return {"cell": cell, "line": line}


_SAMPLER = _Sampler()


def _alarm(signum: int, frame: FrameType | None) -> None:
    if _SAMPLER.stale():
        return
    if not _SAMPLER.ours():
        end_by(signum)  # the notebook's own alarm, at its default action: it ends the process
    where = stuck_at(frame)
    if where:
        _SAMPLER.seen.append((where["cell"], where["line"]))
    if _SAMPLER.left == 1 and _SAMPLER.starved():
        return  # at the limit on the clock, not in what it charges: the next tick looks again
    _SAMPLER.left -= 1
    if _SAMPLER.left > 0 or (frame is not None and frame.f_code.co_filename == __file__):
        # A sample before the limit: the code goes on. Or this module's own code, past the
        # limit (the exception has left the notebook's code and is being read): never
        # interrupted there, it disarms the timer next.
        return
    _SAMPLER.over += 1
    if _SAMPLER.over > GIVE_UP:
        if _OUT:  # the frames queued are lost with the process; the mark says why it ended
            os.write(_OUT[0], CAUGHT_MARK)
        os._exit(CAUGHT_EXIT)
    if _SAMPLER.over > UNWIND:
        _unwind(frame)
    # The timer keeps its step: code that catches this exception and goes on is stopped
    # again at the next tick, and ended after GIVE_UP of them.
    raise TimeLimitReached(_SAMPLER.most_seen() or where)


_OUT: list[int] = []  # the frame pipe, for the mark written before ending (serve sets it)

_HANDLER_ENTRY = dis.opmap["PUSH_EXC_INFO"]


def _next_line(frame: FrameType, event: str, arg: Any) -> Any:
    """The trace function of `_unwind`: the limit's exception at the next line of the
    notebook's own cells, never at the entry of an `except`, a `finally` or a `with`'s exit
    on an exception (a `with` would not call its `__exit__`: a `mock.patch` left applied
    would fail the functions graded after), nor in a library's code (that `__exit__`'s own).
    CPython drops a trace function that raises: it fires once."""
    if event != "line" or _cell_of(frame.f_code) is None:
        return _next_line
    code = frame.f_code.co_code
    if 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _HANDLER_ENTRY:
        return _next_line
    raise TimeLimitReached(_SAMPLER.most_seen(), caught=True)


def _unwind(frame: FrameType | None) -> None:
    """Past the limit, with the code catching its exception: make the next line it runs
    raise it too (see UNWIND), on the cells' frames now running and on any they call."""
    while frame is not None:
        if _cell_of(frame.f_code) is not None:
            frame.f_trace = _next_line
            frame.f_trace_lines = True
        frame = frame.f_back
    sys.settrace(_next_line)


def _cell_of(code: CodeType) -> int | None:
    """The cell a code object was compiled from (its file is named `<cell N>`, compile_cell),
    None for any other code: a library's, the grader's, or the notebook's own `exec` under a
    name of its choosing (`<cell x>` too)."""
    name = code.co_filename
    if name.startswith("<cell ") and name.endswith(">") and name[6:-1].isdigit():
        return int(name[6:-1])
    return None


def stuck_at(frame: FrameType | None) -> dict[str, int]:
    """The deepest student frame (a `<cell N>` file) of the stack the signal interrupted, as
    the cell and line it was running: where a loop that never ends spends its time. A
    function caught as it starts (still on its `def` line, where a signal is often taken) is
    passed over for its caller, the loop that calls it again and again (r52: a `while True`
    cell was placed on a helper's `def` line)."""
    entered: dict[str, int] = {}
    while frame is not None:
        if (cell := _cell_of(frame.f_code)) is not None:
            line = int(frame.f_lineno or 0)
            if line != frame.f_code.co_firstlineno or frame.f_code.co_name == "<module>":
                return {"cell": cell, "line": line}
            entered = entered or {"cell": cell, "line": line}
        frame = frame.f_back
    return entered


def _student_line(tb: TracebackType | None, default_cell: int | None = None) -> dict[str, int]:
    """The deepest traceback entry inside a student cell (files are named `<cell N>`)."""
    where: dict[str, int] = {}
    while tb is not None:  # not traceback.extract_tb: it reads every file's source lines
        cell = _cell_of(tb.tb_frame.f_code)
        if cell is not None and tb.tb_lineno is not None:
            where = {"cell": cell, "line": tb.tb_lineno}
        tb = tb.tb_next
    if not where and default_cell is not None:
        where = {"cell": default_cell, "line": 0}
    return where


def _error(exc: BaseException, cell: int | None = None) -> dict[str, Any]:
    """What the frame says of an exception the notebook's code raised; called with the time
    limit's timer disarmed (its message may run the notebook's code: `_message`)."""
    return {
        "type": type_name(exc),
        "message": _message(exc),
        # Read as BaseException keeps it: a class of the notebook's may redefine the name.
        "where": _student_line(_TRACEBACK.__get__(exc, BaseException), cell),
    }


_TRACEBACK = BaseException.__dict__["__traceback__"]

# How long an exception's own __str__ may take: it is the notebook's code, and may loop.
# A class whose __str__ ran past it once is not read again (each case would pay it anew).
MESSAGE_LIMIT = 0.2
MESSAGE_TOO_LONG = f"(its message could not be read: str() ran past {MESSAGE_LIMIT} s)"
_UNREADABLE: dict[int, type] = {}


def _message(exc: BaseException) -> str:
    """str(exc), under a time limit of its own and never raising: an exception class of the
    notebook's may define a __str__ that loops or fails, and neither may end the process
    (the other cells and functions are still to be graded)."""
    cls = type(exc)
    if id(cls) in _UNREADABLE:  # by id: a metaclass of the notebook's may define __hash__
        return MESSAGE_TOO_LONG
    _SAMPLER.arm(MESSAGE_LIMIT)
    try:
        return plain_text(str(exc))[:MAX_TEXT]
    except TimeLimitReached:
        _UNREADABLE[id(cls)] = cls  # kept: its id is not another class's while it lives
        return MESSAGE_TOO_LONG
    except BaseException as failed:  # anything the notebook's __str__ raises
        return f"(its message could not be read: str() raised {type_name(failed)})"
    finally:
        _SAMPLER.arm(0)


# What a TimeLimit error says when the code caught the exception that stops it and went on.
CAUGHT = (
    "its code caught the exception that stops it at the time limit (a bare `except:` or "
    "`except BaseException:`) and went on"
)


def _caught_then(
    caught: dict[str, Any], exc: BaseException, cell: int | None = None
) -> dict[str, Any]:
    """The TimeLimit error of code that caught the exception that stops it and then raised
    an error of its own (`except BaseException: raise ValueError(...)`): the limit is what
    ended it, and its own error is said too (without it, the message said it "went on")."""
    own = _error(exc, cell)
    raised = f"{own['type']}: {own['message']}" if own["message"] else own["type"]
    message = CAUGHT.removesuffix(" and went on") + f" and raised {raised} instead"
    return {**caught, "message": message}


# What a TimeLimit error says when the code caught the exception that stops it, and was
# stopped at its next line all the same (UNWIND).
STOPPED_AFTER_CATCHING = (
    "its code caught the exception that stops it at the time limit (a bare `except:` or "
    "`except BaseException:`) and went on, and was stopped at its next line; write `except "
    "Exception:`, which lets the limit through"
)

# How long reading a result may take (its digest, its encoding, the last __del__): a value
# of the notebook's may run its own code then (a list subclass's __iter__, an array-like's
# __array__), and may loop or raise; the grader's own reading takes milliseconds.
READ_LIMIT = 1.0
READ_TOO_LONG = f"reading it took longer than {READ_LIMIT:g} s"


def _read_failure(exc: BaseException) -> str:
    """Why a value could not be read: the encoder's own refusal (too large, nested too
    deeply, a list holding itself), or what the notebook's code raised while it was read."""
    tb = _TRACEBACK.__get__(exc, BaseException)
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or tb.tb_frame.f_code.co_filename == wire.__file__:
        return "it is too large, or nested too deeply, to send"
    return f"reading it raised {type_name(exc)}"


def _unencodable(header: dict[str, Any], why: str) -> None:
    """The case's frame when its value could not be read: said so and why, with none of it."""
    header.pop("digest", None)
    header.update(status="error", error={"type": "Unencodable", "message": why, "where": {}})


def _bounded(value: Any) -> Any:
    """Refuse to ship absurdly large arrays: the parent would reject the frame anyway."""
    size = getattr(value, "size", 0)
    if isinstance(size, int) and size > MAX_ARRAY:
        return f"array of {size} numbers (too large to compare)"
    return value


class Runner:
    """The student's side of a run: executes cells and calls targets in one namespace, and sends
    each answer to the parent as a frame on `write_fd`."""

    def __init__(self, write_fd: int, cell_limit: float, call_limit: float) -> None:
        self.fd = write_fd
        self.cell_limit = cell_limit
        self.call_limit = call_limit
        self.shim = ScalarShim()
        self.pending: list[bytes] = []
        self.flushed = time.monotonic()
        self.probe_base: dict[str, int] = {}  # target → index of the case its probes perturb
        self.out = _CappedOutput()
        self.namespace: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": builtins,
            SHIM_NAME: self.shim,
            "get_ipython": _NoIPython,
        }

    def send(self, header: dict[str, Any], values: dict[str, Any] | None = None) -> None:
        """Queue a frame; `flush` writes them (one write per cell or target, not per call)."""
        self.pending.append(encode_frame(header, values or {}))

    def flush(self) -> None:
        """Write every queued frame to the parent, in one write as far as the pipe allows."""
        self.flushed = time.monotonic()
        view = memoryview(b"".join(self.pending))
        self.pending.clear()
        while view:
            written = os.write(self.fd, view)
            view = view[written:]

    def timed(self, seconds: float) -> None:
        """Arm the alarm that interrupts student code after `seconds`, sampling where it is
        shortly before (0 disarms it)."""
        _SAMPLER.arm(seconds)

    def untimed(self) -> dict[str, Any] | None:
        """Disarm the limit's timer: the TimeLimit error to report when the limit ran out
        and the code went on all the same (it caught the exception that stops it: a bare
        `except:` or `except BaseException:`), else None."""
        caught = _SAMPLER.armed and _SAMPLER.left <= 0
        where = _SAMPLER.most_seen() if caught else {}
        self.timed(0)
        return {"type": "TimeLimit", "message": CAUGHT, "where": where} if caught else None

    def run_cell(self, cell: CodeCell, left: float | None = None) -> None:
        """Run one cell within the cell time limit and send its frame: any parse error, exception or
        timeout, and the scalar fixes made. `left`: what is left of the cells' time together
        (cells_budget), when less than a cell's limit: the cell gets that, and a limit
        reached says so."""
        header: dict[str, Any] = {"kind": "cell", "cell": cell.index}
        limit = self.cell_limit if left is None else min(self.cell_limit, left)
        cut = "" if limit >= self.cell_limit else BUDGET_SPENT
        try:
            code = compile_cell(cell)
        # A cell nested too deeply to compile (RecursionError, or MemoryError) is that
        # cell's error, as in Jupyter: the next cells still run.
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            where = {"cell": cell.index, "line": getattr(exc, "lineno", 0) or 0}
            msg = getattr(exc, "msg", str(exc))
            header["error"] = {"type": type_name(exc), "message": msg, "where": where}
            self.send(header)
            return
        caught = None
        try:
            try:
                self.timed(limit)
                student_call.run_cell(code, self.namespace)
            finally:
                # Before the error is read: the limit ending while a deep traceback is
                # walked, or while the notebook's own __str__ runs, would escape from the
                # handler below and end the process (every function of the notebook lost).
                # Ending here, it replaces the cell's exception: the limit was reached.
                caught = self.untimed()
        except TimeLimitReached as stop:
            where = stop.where or {"cell": cell.index}
            said = STOPPED_AFTER_CATCHING if stop.caught else cut
            header["error"] = {"type": "TimeLimit", "message": said, "where": where}
        except BaseException as exc:  # student code may raise anything, SystemExit included
            header["error"] = (
                _caught_then(caught, exc, cell.index) if caught else _error(exc, cell.index)
            )
        else:
            if caught is not None:
                header["error"] = caught
        header["scalar_fixes"] = self.shim.take()
        self.send(header)

    def skip_cell(self, cell: CodeCell) -> None:
        """Send a cell's frame saying it was not run: the cells' time together was spent."""
        error = {"type": NOT_RUN, "message": BUDGET_SPENT, "where": {"cell": cell.index}}
        self.send({"kind": "cell", "cell": cell.index, "error": error, "scalar_fixes": []})

    def run_case(self, fn: Any, case: Case) -> bool:
        """Call one case; False when the target timed out and its other cases are pointless."""
        header: dict[str, Any] = {"kind": "result", "target": case.target, "case": case.index}
        args: Any = case.fresh_args()
        value: Any = None
        caught = None
        try:
            try:
                self.timed(self.call_limit)
                value = student_call.call(fn, args)
            finally:
                caught = self.untimed()  # before the error is read, as in run_cell
            header["status"] = "ok" if caught is None else "timeout"
            if caught is not None:
                header["error"] = caught
        except TimeLimitReached as stop:
            header["status"] = "timeout"
            said = STOPPED_AFTER_CATCHING if stop.caught else ""
            header["error"] = {"type": "TimeLimit", "message": said, "where": stop.where}
        except BaseException as exc:
            header["status"] = "error" if caught is None else "timeout"
            header["error"] = _caught_then(caught, exc) if caught else _error(exc)
        header["scalar_fixes"] = self.shim.take()
        if header["status"] != "ok":
            self.send(header)
            return bool(header["status"] != "timeout")
        digested = case.probe or case.index == self.probe_base.get(case.target)

        def read(held: dict[str, Any]) -> dict[str, Any]:
            if digested:
                header["digest"] = digest(_bounded(held["value"]))
            # Whole: the encoder sends an array too large for the parent as its size
            # ("ndarray of N numbers (too large to send)"), never its numbers; with the
            # inputs as the call left them (the grader judges whether it changed any).
            return {} if case.probe else {"value": held["value"], "args": list(held["args"])}

        held = {"value": value, "args": args}
        value = args = None  # `deliver` holds the last references, and drops them in its limit
        why = self.deliver(header, read, held)
        # A value that took too long to read once would again: the target's other cases
        # are not called (each would cost the limit), as after a call's time limit.
        return why != READ_TOO_LONG

    def deliver(
        self,
        header: dict[str, Any],
        read: Callable[[dict[str, Any]], dict[str, Any]],
        held: dict[str, Any],
    ) -> str:
        """Queue a result frame with the values `read` makes of `held` (the last references
        to the notebook's objects), under READ_LIMIT: reading may run the notebook's code (a
        list subclass's __iter__, an array-like's __array__, a __del__ when `held` is
        dropped), which may loop or raise. What cannot be read is sent as Unencodable, and
        why is returned ("" when the values were sent)."""
        why = ""
        try:
            try:
                self.timed(READ_LIMIT)
                self.send(header, read(held))
            finally:
                held.clear()  # a __del__ runs here, in the limit (Python swallows what it raises)
        except TimeLimitReached:
            why = READ_TOO_LONG
        except BaseException as exc:
            why = _read_failure(exc)
        finally:
            if self.untimed() is not None and not why:  # the limit ran out in a __del__
                why = READ_TOO_LONG
                self.pending.pop()  # its frame was queued before that __del__ ran on
        if why:
            _unencodable(header, why)
            self.send(header)
        return why

    def run_variable(self, name: str) -> None:
        """Send a top-level variable's value as the result of case 0, "missing" when it is not
        defined, or an error when it cannot be encoded."""
        if name not in self.namespace:
            self.send({"kind": "missing", "target": name, "found": "absent"})
            return
        header: dict[str, Any] = {"kind": "result", "target": name, "case": 0, "status": "ok"}
        self.deliver(header, lambda _: {"value": _bounded(self.namespace[name])}, {})

    def run_target(self, name: str, cases: Sequence[Case]) -> None:
        """Call one target on its cases, sending a result frame for each (a variable target is read,
        not called), or "missing" when the notebook does not define it as a function."""
        main = [c for c in cases if not c.probe]
        if main:
            self.probe_base[name] = probe_base(tuple(main)).index
        if cases and cases[0].variable:
            self.run_variable(name)
            return
        try:  # a key of the notebook's in its globals may compare itself with the name
            fn, there = self.namespace.get(name), name in self.namespace
        except BaseException:
            fn, there = None, False
        if not callable(fn):
            kind = "absent" if fn is None and not there else type_name(fn)
            self.send({"kind": "missing", "target": name, "found": kind})
            return
        for case in cases:
            going_on = self.run_case(fn, case)
            # Often enough for the parent's watchdog to hear the child is alive, without a
            # write (and a wake-up of the reader) per call.
            if time.monotonic() - self.flushed > FLUSH_SECONDS:
                self.flush()
            if not going_on:
                break


RANDOM_SEED = 0


def _same_random_numbers() -> None:
    """Seed Python's and numpy's global generators: a notebook that draws without seeding
    gets the same numbers under `grader check`, in a batch's child (whose worker's state it
    would otherwise inherit) and on CI, so its grade cannot depend on where it ran."""
    random.seed(RANDOM_SEED)
    np.random.seed(RANDOM_SEED)


# The notebook's cells together may take this share of the submission's time limit: what
# is left is the functions' to be called in. Demo cells that each run to the cell limit
# (a `while True:` of a plot) would otherwise spend it all, and every function was lost.
CELLS_SHARE = 0.75
NOT_RUN = "NotRun"  # a cell's error type: the cells' time together was spent before it
BUDGET_SPENT = (
    "the notebook's cells had used the time they may take together "
    f"({CELLS_SHARE:.0%} of the submission's limit; the rest is for calling its functions)"
)


def cells_budget(submission: float, cell_limit: float) -> float:
    """Seconds the cells may take together: CELLS_SHARE of the submission's limit, and at
    least one cell's limit."""
    return max(submission * CELLS_SHARE, cell_limit)


def serve(
    cells: Sequence[CodeCell],
    plan: Sequence[tuple[str, Sequence[Case]]],
    write_fd: int,
    cell_limit: float,
    call_limit: float,
    budget: float | None = None,
) -> None:
    """Run the whole submission and exit the process; never returns. `budget`: the seconds
    the cells may take together (cells_budget); a cell after it is spent is not run (its
    frame says so) and the functions are called all the same."""
    code = 0
    try:
        runner = Runner(write_fd, cell_limit, call_limit)
        _OUT.append(write_fd)
        signal.signal(signal.SIGALRM, _alarm)
        restore_removed_names()
        cap_recursion_limit()
        _same_random_numbers()
        if "grader" in sys.modules:
            sys.modules["grader"].check = _check_while_grading  # type: ignore[attr-defined]
        sys.stdout = sys.stderr = runner.out
        queue = _SAMPLER.queue = QueueWait()
        started, waited = time.monotonic(), queue.seconds()
        for cell in cells:
            spent = charged(time.monotonic() - started, queue.seconds() - waited)
            left = None if budget is None else budget - spent
            if left is not None and left <= 0:
                runner.skip_cell(cell)
            else:
                runner.run_cell(cell, left if left is not None and left < cell_limit else None)
            runner.flush()
        runner.send({"kind": "cells_done", "output": "".join(runner.out.kept)})
        for name, cases in plan:
            runner.run_target(name, cases)
            runner.flush()
        runner.send({"kind": "done"})
        runner.flush()
    except BaseException:
        code = 70
    finally:
        os._exit(code)
