"""How fast a broken course is refused, and what the course check costs once it has passed.

Usage: python bench/preflight.py
For three broken copies of the bundled course's self_attention (a wrong solution path, a
solution that crashes, a catalogued mistake the cases do not catch), times `grader grade` of a
one-notebook class from start to its exit 2 (a fresh cache each time: cold). Then, in this
process, times the check of the intact course cold (workers started, the course's code run)
and warm (remembered by content hash), and prints the ratio.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from conftest import repo_config_raw  # noqa: E402

MISTAKES = REPO / "solutions" / "self_attention_mistakes.py"
UNCAUGHT = """
@CATALOGUE.mistake("softmax", "same_as_solution", "is right after all", hint="none")
def softmax__same_as_solution(items_in):
    weights = np.exp(np.asarray(items_in, dtype=float) - np.max(items_in))
    return weights / np.sum(weights)
"""


def course(folder: Path, **changes: str) -> Path:
    """The bundled course's self_attention alone, with `changes` to its keys."""
    raw = repo_config_raw()
    raw["assignments"] = {"self_attention": {**raw["assignments"]["self_attention"], **changes}}
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def crashing(folder: Path) -> Path:
    """The solution notebook with a last cell that raises."""
    notebook = json.loads((REPO / "solutions" / "self_attention.ipynb").read_text())
    notebook["cells"].append(
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "raise RuntimeError('broken')"}
    )  # fmt: skip
    path = folder / "crashing.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def refused(root: Path, name: str, folder: Path) -> None:
    """Time one `grader grade` of a broken course, cold."""
    submissions = root / "class"
    if not submissions.exists():
        submissions.mkdir()
        shutil.copy(REPO / "demo" / "submissions" / "ada.ipynb", submissions)
    env = {**os.environ, "GRADER_CACHE_DIR": str(root / f"cache-{name}")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(submissions), "--course", str(folder)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = done.stderr.strip().splitlines()
    print(f"{name:<22} exit {done.returncode}, {len(lines)} line(s) on stderr, {seconds:.2f} s")


def remembered(root: Path) -> None:
    """The intact course's check, cold and then warm, in this process."""
    os.environ["GRADER_CACHE_DIR"] = str(root / "cache-intact")
    from grader.course.config import load_config
    from grader.engine import require
    from grader.judge.preflight import preflight_all
    from grader.run.workers import shared_workers

    config = load_config(course(root / "intact") / "config.yaml")
    specs = list(config.assignments.values())

    def workers(spec: object) -> object:
        return shared_workers(require("auto"), specs[0].files, specs[0].preload)

    times = []
    for _ in range(2):
        started = time.perf_counter()
        preflight_all(config, specs, workers)  # type: ignore[arg-type]
        times.append(time.perf_counter() - started)
    cold, warm = times
    print(f"intact course check: cold {cold:.3f} s (workers started), warm {warm * 1000:.2f} ms;")
    print(f"  warm / cold = {warm / cold:.4f}")


def main() -> None:
    """Print the times."""
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        catalogue = root / "uncaught.py"
        catalogue.write_text(MISTAKES.read_text() + UNCAUGHT)
        (root / "solutions").mkdir()
        broken = {
            "wrong solution path": course(root / "a", solution="solutions/nope.ipynb"),
            "solution that crashes": course(root / "b", solution=str(crashing(root))),
            "mistake not caught": course(root / "c", mistakes=str(catalogue)),
        }
        for label, folder in broken.items():
            refused(root, label, folder)
        remembered(root)


if __name__ == "__main__":
    main()
