"""The catalogue of known mistakes: small wrong variants of the reference, with words for them.

An assignment's catalogue is a Python file in `solutions/` executed in (a copy of) the
namespace of its solution notebook, so variants can call the reference's own helpers and read
its globals (`D`, `N`) exactly as a student's code would. It fills the `CATALOGUE` it is given:

    @CATALOGUE.mistake("softmax_cols", "softmax_wrong_axis",
                       "normalises each row instead of each column",
                       hint="sum with axis=0", locate=r"axis\\s*=\\s*(1|-1)")
    def softmax_cols(data_in): ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

# Static hints a mistake can require before it is named (see static.py).
STATIC_KINDS = ("discarded", "global", "literal_divisor", "truthiness")


@dataclass(frozen=True)
class Mistake:
    id: str
    target: str
    message: str
    hint: str
    variant: Callable[..., Any]
    requires: str | None = None
    locate: str | None = None


@dataclass
class Catalogue:
    mistakes: list[Mistake] = field(default_factory=list)

    def mistake(
        self,
        target: str,
        mistake_id: str,
        message: str,
        *,
        hint: str,
        requires: str | None = None,
        locate: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        if requires is not None and requires not in STATIC_KINDS:
            raise ConfigError(f"mistake {mistake_id}: requires must be one of {STATIC_KINDS}")

        def register(variant: Callable[..., Any]) -> Callable[..., Any]:
            self.mistakes.append(
                Mistake(mistake_id, target, message, hint, variant, requires, locate)
            )
            return variant

        return register

    def for_target(self, target: str) -> list[Mistake]:
        return [m for m in self.mistakes if m.target == target]


def load_catalogue(path: Path, solution: Mapping[str, Any]) -> Catalogue:
    """Execute a catalogue file in a copy of the solution's namespace (trusted code)."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read mistake catalogue {path}: {exc}") from None
    catalogue = Catalogue()
    namespace = {**solution, "CATALOGUE": catalogue, "__name__": "__mistakes__"}
    try:
        exec(compile(source, str(path), "exec"), namespace)
    except Exception as exc:
        raise ConfigError(f"mistake catalogue {path} fails to load: {exc!r}") from exc
    return catalogue
