"""Signals that end a process by default, made to end the student's process in the sandbox too.

The sandboxed student's process is the first process (PID 1) of its PID namespace, and the
kernel delivers no signal to a namespace's first process whose action is the default one,
unless it is SIGKILL, SIGSTOP or a fault of its own (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
SIGSYS). So a notebook's `signal.alarm(1)`, `os.kill(os.getpid(), signal.SIGTERM)` or the
CPU-time limit's SIGXCPU would be ignored there, where a normal Python ends.

Such a process cannot make itself end "by a signal" either, so the child, before any of the
notebook's code, takes each such signal still at its default action with a handler that ends
the process the only way left: it writes a mark naming the signal on its frame pipe and exits
with ENDED_BY_SIGNAL. The worker (sandbox.py) reads the two together as the wait status of a
process ended by that signal, and drops the mark, so that the grader gets the same bytes and
the same ending as from a process without the namespace. A notebook that installs its own
handler replaces the child's, as it would the default action. Anything the mark could claim
the notebook could also do for real, so it gains nothing by forging one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from typing import TYPE_CHECKING, NoReturn

from grader.run.wire import encode_frame

if TYPE_CHECKING:
    from grader.run.output import Output

ENDED_BY_SIGNAL = 74

# Those whose default action is to end the process (or dump core), but for: SIGKILL and
# SIGSTOP (delivered anyway), the faults (delivered anyway when the process's own; a handler
# of Python's would loop on a real one), SIGINT (Python's KeyboardInterrupt), SIGPIPE and
# SIGXFSZ (Python ignores them). By name: not every system has them all (SIGSTKFLT, SIGPWR).
NAMES = (
    "SIGHUP SIGQUIT SIGABRT SIGUSR1 SIGUSR2 SIGALRM SIGTERM SIGSTKFLT SIGXCPU SIGVTALRM "
    "SIGPROF SIGIO SIGPWR"
)
TERMINATING: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in NAMES.split() if hasattr(signal, name)
)

# Made once in the worker: the handler writes bytes, it builds nothing.
MARKS: dict[int, bytes] = {
    int(sig): encode_frame({"kind": "ended_by", "signal": int(sig)}, {}) for sig in TERMINATING
}
_PIPE: list[int] = []
_ENDING = itertools.count()  # next() is atomic: the first caller gets 0


def end_by(signum: int) -> NoReturn:
    """End this process as `signum`'s default action would: for real where the kernel
    delivers it, else (the first process of a PID namespace) by the mark and ENDED_BY_SIGNAL
    on the frame pipe given to `take_default_actions`."""
    with contextlib.suppress(ValueError):  # called in a thread (os.abort): the kill ends it
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)  # ends any process but a PID namespace's first
    if next(_ENDING):  # another thread is ending it already: one mark, the first
        while True:
            signal.pause()
    if _PIPE and signum in MARKS:
        os.write(_PIPE[0], MARKS[signum])
    os._exit(ENDED_BY_SIGNAL)


def _handle(signum: int, frame: object) -> None:
    end_by(signum)


def _abort() -> NoReturn:
    """os.abort() in the namespace's first process: the C library's abort() would end it by
    SIGSEGV instead (its SIGABRT ignored, it falls back on a faulting instruction)."""
    end_by(signal.SIGABRT)


def take_default_actions(write_fd: int) -> None:
    """In the sandboxed child, before any student code: every TERMINATING signal still at its
    default action ends the process through `end_by`, marked on `write_fd`; os.abort too."""
    _PIPE[:] = [write_fd]
    for sig in TERMINATING:
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _handle)
    os.abort = _abort


def marked_signal(buffer: bytes | bytearray | Output, status: int) -> int | None:
    """The signal a child says it ended by: the mark that ends `buffer`, when the process
    exited with ENDED_BY_SIGNAL; None otherwise."""
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != ENDED_BY_SIGNAL:
        return None
    for signum, mark in MARKS.items():
        if buffer.endswith(mark):
            return signum
    return None
