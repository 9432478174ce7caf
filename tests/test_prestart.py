"""`grader check` starts its worker on a thread while it imports the judging side (issue 19):
the worker the engine then asks for is that one, already started."""

from __future__ import annotations

from pathlib import Path

from grader.course.config import Config
from grader.run import bwrap, prestart, workers

REPO = Path(__file__).resolve().parent.parent


def test_the_worker_is_started_for_the_notebooks_assignment(config: Config) -> None:
    spec = config.assignment("self_attention")
    key = (bwrap.choose("none"), tuple(spec.files), tuple(spec.preload))
    workers._SHARED.pop(key, None)
    prestart.begin_for(config, REPO / "solutions" / "self_attention.ipynb", None, "none")
    prestart.finish()
    started = workers._SHARED[key]
    assert all(w.alive() for w in started.all)


def test_nothing_is_started_for_a_notebook_that_cannot_be_read(
    config: Config, tmp_path: Path
) -> None:
    before = dict(workers._SHARED)
    prestart.begin_for(config, tmp_path / "absent.ipynb", None, "none")
    prestart.finish()
    assert before == workers._SHARED
