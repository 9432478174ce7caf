"""`grader check` starts its worker on a thread while it imports the judging side (issue 19):
the worker the engine then asks for is that one, already started."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.run import bwrap, prestart, workers

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def no_early_run_left() -> Iterator[None]:
    """Each test starts without an early run another test left untaken."""
    prestart.drop_early()
    yield
    prestart.drop_early()


def test_the_worker_is_started_for_the_notebooks_assignment(config: Config) -> None:
    spec = config.assignment("self_attention")
    key = (bwrap.choose("none"), tuple(spec.files), tuple(spec.preload))
    workers._SHARED.pop(key, None)
    prestart.begin_for(config, REPO / "solutions" / "self_attention.ipynb", None, "none")
    prestart.finish()
    started = workers._SHARED[key]
    assert all(w.alive() for w in started.all)
    # it holds the assignment's cases from its start (a job is the cells alone), and is not
    # warmed up on them first (ready sooner: one notebook gains nothing from a warm-up)
    assert started.plans == [build_cases(spec).plan(spec)] and not started.warm
    assert b'"warm": false' in started.all[0].sent_init
    plain = workers.Worker(bwrap.choose("none"), [], [])  # as a batch's: warmed up
    plain.kill()
    assert b'"warm"' not in plain.sent_init


def test_nothing_is_started_for_a_notebook_that_cannot_be_read(
    config: Config, tmp_path: Path
) -> None:
    before = dict(workers._SHARED)
    prestart.begin_for(config, tmp_path / "absent.ipynb", None, "none")
    prestart.finish()
    assert before == workers._SHARED


def _counting_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    made: list[list[str]] = []
    real = workers.Workers.run

    def run(self: workers.Workers, cells: Any, *args: Any, **kw: Any) -> Any:
        made.append([c.source for c in cells])
        return real(self, cells, *args, **kw)

    monkeypatch.setattr(workers.Workers, "run", run)
    return made


def test_the_notebooks_run_started_early_is_the_one_graded(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting_runs(monkeypatch)
    notebook = REPO / "demo" / "submissions" / "bruno.ipynb"
    alone = grade_path(notebook, config, "self_attention", sandbox="none")
    cells = [c.source for c in load_submission(notebook).cells]
    assert made.count(cells) == 1
    prestart.begin_for(config, notebook, "self_attention", "none")
    (early,) = prestart._EARLY
    assert early.done.wait(30) and made.count(cells) == 2  # run before the engine asks
    report = grade_path(notebook, config, "self_attention", sandbox="none")
    assert made.count(cells) == 2, "the engine ran the notebook again"
    assert replace(report, seconds=0) == replace(alone, seconds=0)


def test_an_early_run_of_another_notebook_is_not_taken(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting_runs(monkeypatch)
    started = REPO / "demo" / "submissions" / "bruno.ipynb"
    graded = REPO / "demo" / "submissions" / "ada.ipynb"
    alone = grade_path(graded, config, "self_attention", sandbox="none")
    prestart.begin_for(config, started, "self_attention", "none")
    report = grade_path(graded, config, "self_attention", sandbox="none")
    assert made.count([c.source for c in load_submission(graded).cells]) == 2
    assert replace(report, seconds=0) == replace(alone, seconds=0)
    assert prestart._EARLY == []


def test_no_early_run_for_a_students_own_inputs(config: Config) -> None:
    prestart.begin_for(config, REPO / "demo" / "submissions" / "ada.ipynb", None, "none", "s1")
    prestart.finish()
    assert prestart._EARLY == []


def test_an_early_run_a_failed_grade_did_not_take_is_forgotten(
    config: Config, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    import grader.engine as engine_module
    from grader.cli import main
    from grader.errors import ConfigError

    def refuse(*args: Any) -> None:
        raise ConfigError("the course's solution fails (as a test says)")

    monkeypatch.setattr(engine_module, "preflight", refuse)
    notebook = REPO / "demo" / "submissions" / "bruno.ipynb"
    result = CliRunner().invoke(main, ["check", str(notebook), "--course", str(REPO)])
    assert result.exit_code == 2 and "solution fails" in result.output
    assert prestart._EARLY == []  # not left for a later grade in this process
