"""Each target's fingerprints, made the first time that target's are read: judging a
notebook whose targets all pass reads none of them, one that fails a target reads that
target's only (a course's cache holds thousands of arrays; decoding them all at every start
would cost more than judging)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

from grader.judge.fingerprints import Fingerprint


class LazyPrints(Mapping[str, list[Fingerprint]]):
    """Target name -> fingerprints, each target's made by `make(name)` on its first read
    and kept; made once also when judges on several threads (a batch, the service) read it
    at the same time."""

    def __init__(self, names: Iterable[str], make: Callable[[str], list[Fingerprint]]) -> None:
        self._names = tuple(dict.fromkeys(names))
        self._make = make
        self._made: dict[str, list[Fingerprint]] = {}
        self._lock = threading.RLock()

    def __getitem__(self, name: str) -> list[Fingerprint]:
        """The target's fingerprints, made now if they were not read before."""
        made = self._made.get(name)
        if made is not None:
            return made
        if name not in self._names:
            raise KeyError(name)
        with self._lock:
            if name not in self._made:
                self._made[name] = self._make(name)
            return self._made[name]

    def __iter__(self) -> Iterator[str]:
        """The target names, in the assignment's order."""
        return iter(self._names)

    def __len__(self) -> int:
        """How many targets."""
        return len(self._names)

    def __repr__(self) -> str:
        """As the dict of every target's fingerprints (all made now)."""
        return repr({name: self[name] for name in self._names})

    @property
    def made(self) -> tuple[str, ...]:
        """The targets whose fingerprints have been made so far."""
        return tuple(self._made)
