"""`time_zone:` works on a machine without the system's time zone database (a slim container
image has no /usr/share/zoneinfo): the grader depends on the `tzdata` package, which zoneinfo
falls back to. Before, `time_zone: Europe/Berlin` was refused there as no time zone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import repo_config_raw

READ = (
    "import sys\n"
    "from grader.course.config import load_config\n"
    "print(load_config(sys.argv[1]).zone())\n"
)


def _run(code: str, config: Path, zones: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter whose zoneinfo searches only the folder `zones`."""
    env = {**os.environ, "PYTHONTZPATH": str(zones)}
    return subprocess.run(
        [sys.executable, "-c", code, str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_course_time_zone_is_known_without_the_systems_database(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["time_zone"] = "Europe/Berlin"
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    empty = tmp_path / "no-zoneinfo"
    empty.mkdir()
    done = _run(READ, folder / "config.yaml", empty)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Europe/Berlin"
    # The folder really holds no zones: without the package the same config is refused.
    hidden = "import sys\nsys.modules['tzdata'] = None\n" + READ
    refused = _run(hidden, folder / "config.yaml", empty)
    assert refused.returncode != 0
    assert "is no time zone this machine knows" in refused.stderr
