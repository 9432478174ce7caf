"""The notebook's working folder, as in Jupyter: it is first on the import path, so a
notebook imports a helper module the course lists (`files:`) and one its own `%%writefile`
cell wrote; the cell writes there as IPython would. In the sandbox and without one."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from grader.course.config import Mode, load_config
from grader.engine import grade_path

import students
from conftest import REPO, write_notebook

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ASSIGNED = {"grader": {"assignment": "self_attention"}}
HELPER = (
    "import numpy as np\n\ndef exp_shifted(z):\n"
    "    z = np.asarray(z, dtype=float)\n    return np.exp(z - z.max())\n"
)
SOFTMAX_FROM_HELPER = (
    "import numpy as np\nfrom course_helpers import exp_shifted\n\n"
    "def softmax(items_in):\n    e = exp_shifted(np.array(items_in, dtype=float).ravel())\n"
    "    return e / e.sum()"
)


@pytest.fixture(scope="module")
def course() -> Iterator[Path]:
    """The bundled course listing a helper module, readable by any user (bubblewrap runs as
    nobody for root)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-wf-"))
    try:
        shutil.copytree(REPO / "solutions", folder / "solutions")
        shutil.copy(REPO / "cases.py", folder / "cases.py")  # the course's case builders
        (folder / "course_helpers.py").write_text(HELPER)
        raw = yaml.safe_load((REPO / "config.yaml").read_text())
        spec = raw["assignments"]["self_attention"]
        spec.pop("exercise")
        spec["files"] = ["course_helpers.py"]
        raw["assignments"] = {"self_attention": spec}
        (folder / "config.yaml").write_text(json.dumps(raw))
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield folder
    finally:
        shutil.rmtree(folder)


def softmax_replaced(by: list[str]) -> list[str]:
    """The passing homework, its softmax cell replaced by `by`."""
    cells = students.cells()
    at = next(i for i, cell in enumerate(cells) if "def softmax(" in cell)
    return [*cells[:at], *by, *cells[at + 1 :]]


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_listed_helper_module_imports(course: Path, tmp_path: Path, mode: Mode) -> None:
    path = write_notebook(tmp_path / "hw.ipynb", softmax_replaced([SOFTMAX_FROM_HELPER]), ASSIGNED)
    report = grade_path(path, load_config(course / "config.yaml"), sandbox=mode)
    assert report.errors == ()
    assert report.score == report.max_score
    assert any("no sandbox" in n for n in report.notes) is (mode == "none")


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_writefile_then_import(course: Path, tmp_path: Path, mode: Mode) -> None:
    written = "%%writefile my_softmax.py\n" + SOFTMAX_FROM_HELPER
    cells = softmax_replaced([written, "from my_softmax import softmax"])
    path = write_notebook(tmp_path / "hw.ipynb", cells, ASSIGNED)
    report = grade_path(path, load_config(course / "config.yaml"), sandbox=mode)
    assert report.errors == ()
    assert report.score == report.max_score
    assert any("wrote my_softmax.py in the working folder" in n for n in report.notes)
    assert not (tmp_path / "my_softmax.py").exists()  # in the child's folder, not the class's
