"""Shared fixtures: the repository's config, and notebooks written on the fly."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from grader.course.config import Config, load_config

REPO = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]
NotebookFactory = Callable[..., Path]


def canvas_students(text: str) -> list[dict[str, str]]:
    """The student rows of a Canvas export, once its second row is seen to be the
    `Points Possible` row Canvas's own export has there."""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows, text
    label, *blank, points = rows[0].values()
    assert label == "    Points Possible" and blank == ["", "", "", ""], rows[0]
    assert float(points) > 0, rows[0]
    return rows[1:]


def write_notebook(
    path: Path,
    code_cells: Sequence[str],
    metadata: dict[str, Any] | None = None,
    markdown: bool = True,
) -> Path:
    """A v4 notebook: a markdown title (so code cell k is notebook cell k + 1), then the code."""
    cells = [nbformat.v4.new_markdown_cell("# My attention homework")] if markdown else []
    cells += [nbformat.v4.new_code_cell(src) for src in code_cells]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata.update(metadata or {})
    path.write_text(nbformat.writes(notebook), encoding="utf-8")
    return path


OUT_OF_PROCESSES = "# the machine is out of processes for this one"


def no_worker_for_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, a notebook with a cell holding OUT_OF_PROCESSES gets the run of a worker
    that could not start (a grader fault); every other notebook runs as always."""
    from grader.run.workers import Workers, unstarted_run

    real = Workers.run

    def out_of_processes(self: Workers, cells: Sequence[Any], *args: Any, **kw: Any) -> Any:
        if any(OUT_OF_PROCESSES in cell.source for cell in cells):
            return unstarted_run("a grading worker could not start: out of processes")
        return real(self, cells, *args, **kw)

    monkeypatch.setattr(Workers, "run", out_of_processes)


def processes_with(marker: str) -> list[str]:
    """Command lines of running processes that contain `marker` (to find stray ones)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


@pytest.fixture(scope="session")
def config() -> Config:
    return load_config(REPO / "config.yaml")


@pytest.fixture
def notebook(tmp_path: Path) -> NotebookFactory:
    def make(code_cells: Sequence[str], name: str = "student", **kwargs: Any) -> Path:
        return write_notebook(tmp_path / f"{name}.ipynb", code_cells, **kwargs)

    return make


def repo_config_raw() -> dict[str, Any]:
    """The repository's config as a dict, its paths made absolute so it can move elsewhere."""
    raw: dict[str, Any] = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["cases"] = str(REPO / raw["cases"])
    for assignment in raw["assignments"].values():
        for key in ("solution", "exercise", "mistakes"):
            if key in assignment:
                assignment[key] = str(REPO / assignment[key])
    return raw


FAST_LIMITS = {"submission": 4, "cell": 1, "call": 0.5}


def write_fast_course(folder: Path, name: str = "config.yaml") -> Path:
    """A course folder of its own (what --course names): the real assignments with the short
    time limits of FAST_LIMITS, for the tests that wait on a limit; returns its config."""
    raw = repo_config_raw()
    raw["defaults"]["time_limit"] = dict(FAST_LIMITS)
    folder.mkdir(parents=True)
    path = folder / name
    path.write_text(json.dumps(raw))
    return path


@pytest.fixture
def fast_config(tmp_path: Path) -> Config:
    """The real assignments with short time limits, for the tests that wait on a limit."""
    # In a folder of its own: the grader refuses a config beside a notebook.
    return load_config(write_fast_course(tmp_path / "course", "fast.yaml"))


@pytest.fixture
def chromium() -> Iterator[Any]:
    """Headless Debian chromium driven by selenium, keeping the page's console log; the test
    fails (never skips) when chromium or its driver is missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    assert binary and driver_path, "chromium and chromium-driver are needed: run `make browser`"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A real PostgreSQL server for the session (tests/postgres_server.py); fails, never
    skips, without one."""
    from postgres_server import Server

    server = Server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: Any) -> str:
    """A fresh, empty PostgreSQL database of the session's server: its address."""
    return str(postgres_server.new_database())
