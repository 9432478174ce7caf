"""Calls on other threads, without `concurrent.futures` (which imports `logging`: about 5 ms
of every `grader check`). `in_background` runs one call on a daemon thread of its own;
a `Spawner` runs calls one at a time on one long-lived daemon thread."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Outcome(Generic[T]):
    """What a call on another thread returned or raised, once it has."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def _settle(self, call: Callable[[], T]) -> None:
        try:
            self._value = call()
        except BaseException as exc:  # result() raises it in the caller's thread
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> T:
        """Wait for the call; its value, or what it raised, raised here."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def in_background(call: Callable[[], T]) -> Outcome[T]:
    """`call` on a daemon thread of its own (which nothing waits for at exit)."""
    outcome: Outcome[T] = Outcome()
    threading.Thread(target=outcome._settle, args=(call,), daemon=True).start()
    return outcome


class Spawner:
    """Calls run in turn on one daemon thread that lives as long as the process, started at
    the first call (bubblewrap's --die-with-parent follows the thread that started it)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Outcome[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on the spawner's thread, waited for."""
        outcome: Outcome[T] = Outcome()
        self._calls.put((lambda: function(*args), outcome))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()
        return outcome.result()

    def _serve(self) -> None:
        while True:
            call, outcome = self._calls.get()
            outcome._settle(call)
