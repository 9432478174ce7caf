"""A target's fingerprints with its pairs of mutations kept apart and read only when a
diagnosis first needs them (no single one matched): there are many pairs, and reading them
at every start would cost more than the rest of the cache together."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from grader.judge.fingerprints import Fingerprint

Loader = Callable[[], list[Fingerprint]]


class Prints(list[Fingerprint]):
    """A list of fingerprints (catalogued and single derived ones) and, on demand, the
    pairs of mutations of the same target."""

    def __init__(self, items: Iterable[Fingerprint] = (), loader: Loader | None = None) -> None:
        super().__init__(items)
        self.loader = loader
        self._pairs: list[Fingerprint] | None = None

    def pairs(self) -> list[Fingerprint]:
        """The pairs of mutations, read the first time they are asked for."""
        if self._pairs is None:
            self._pairs = self.loader() if self.loader else []
        return self._pairs


def pairs_of(prints: Sequence[Fingerprint]) -> list[Fingerprint]:
    """The pairs of mutations of a target's fingerprints (those kept among them, if any)."""
    kept = [f for f in prints if f.also]
    return [*kept, *prints.pairs()] if isinstance(prints, Prints) else kept


def with_pairs(items: Iterable[Fingerprint], pairs: Sequence[Fingerprint]) -> Prints:
    """Fingerprints, holding back the pairs of mutations as a list read on demand."""
    held = list(pairs)
    return Prints(items, lambda: held)
