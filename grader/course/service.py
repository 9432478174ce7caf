"""The `serve:` section of config.yaml: what `grader serve` allows each student (the largest
upload, the number of attempts, the least time between two) and whether the students see
their hidden cases' feedback yet. Command-line options override the limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServeSettings:
    """The service's limits per student and the hidden cases' release (config `serve:`)."""

    max_kb: int = 2048
    max_attempts: int = 100
    min_interval: float = 10.0
    release_hidden: bool = False


def serve_settings(raw: Mapping[str, Any]) -> ServeSettings:
    """The settings a validated config's `serve:` section gives (defaults for what it leaves
    out)."""
    section = raw.get("serve", {})
    default = ServeSettings()
    return ServeSettings(
        max_kb=int(section.get("max_kb", default.max_kb)),
        max_attempts=int(section.get("max_attempts", default.max_attempts)),
        min_interval=float(section.get("min_interval", default.min_interval)),
        release_hidden=bool(section.get("release_hidden", default.release_hidden)),
    )
