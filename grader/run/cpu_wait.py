"""The time a student's process spent waiting for a CPU behind other processes, which its
time limits do not count.

A limit measured on the clock alone makes a grade depend on the machine's load: a correct
function that needs a third of its limit times out when other programs (an instructor's
build, a CI neighbour, or a hostile classmate's processes in the same batch) hold the CPUs.
The kernel counts, per thread, the time it was ready to run but waited on a run queue
(`/proc/<tid>/schedstat`, second field, nanoseconds). A limit charges the clock's time less
that wait: the code's own running, sleeping and reading all count; waiting for a CPU does
not. So that a starved run still ends, the clock never runs past STRETCH times the limit.

Where schedstat cannot be read (a kernel without it), the wait reads as 0 and every limit is
the clock's, as before.
"""

from __future__ import annotations

import os

# A limit of L seconds charges at least the clock's time / STRETCH: it ends by STRETCH * L on
# the clock however long the code waited for a CPU.
STRETCH = 3.0
OWN = "/proc/thread-self/schedstat"


class QueueWait:
    """The run-queue wait of one thread, read on demand from its open schedstat file."""

    def __init__(self, path: str = OWN) -> None:
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = -1

    def seconds(self) -> float:
        """Seconds the thread has waited for a CPU since it started (0.0 when unreadable)."""
        if self.fd < 0:
            return 0.0
        try:
            return int(os.pread(self.fd, 64, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self) -> None:
        """Close the schedstat file (a later `seconds` reads 0.0)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def charged(elapsed: float, waited: float) -> float:
    """The seconds a limit counts of `elapsed` on the clock, `waited` of them for a CPU:
    the clock's time less the wait, and never less than the clock's time / STRETCH."""
    return max(elapsed - max(waited, 0.0), elapsed / STRETCH)
