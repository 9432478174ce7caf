"""`grader serve`'s settings from the course config (`serve:`): the limits per student and
per upload, each overridden by its command-line option, and the hidden cases' release."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import grader.serve.server
from grader.cli import main
from grader.course.config import load_config
from grader.errors import ConfigError
from grader.serve.checks import Limits

from conftest import repo_config_raw


def course_with_serve(tmp_path: Path, serve: dict[str, Any] | None) -> Path:
    """The bundled course's config with this `serve:` section (None: without one)."""
    raw = repo_config_raw()
    if serve is not None:
        raw["serve"] = serve
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(raw))
    return path


def test_the_limits_come_from_the_config_and_options_override_them(tmp_path: Path) -> None:
    config = load_config(course_with_serve(tmp_path, {"max_kb": 64, "max_attempts": 3}))
    assert config.serve.max_kb == 64 and config.serve.max_attempts == 3
    limits = Limits.from_settings(config.serve)
    assert (limits.max_kb, limits.max_attempts, limits.min_interval) == (64, 3, 10.0)
    assert limits.max_bytes == 64 * 1024
    overridden = Limits.from_settings(config.serve, max_attempts=7, min_interval=0)
    assert (overridden.max_kb, overridden.max_attempts, overridden.min_interval) == (64, 7, 0)
    assert load_config(course_with_serve(tmp_path, None)).serve.release_hidden is False


@pytest.mark.parametrize(
    ("serve", "words"),
    [({"max_kb": 0}, "serve.max_kb"), ({"max_atempts": 3}, "max_atempts"), ([], "serve")],
)
def test_a_bad_serve_section_is_a_config_error_naming_the_key(
    tmp_path: Path, serve: Any, words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(course_with_serve(tmp_path, serve))


def test_grader_serve_passes_the_configs_limits_and_the_options_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Limits] = []

    def serve(*args: Any, **kwargs: Any) -> None:
        seen.extend(a for a in args if isinstance(a, Limits))

    monkeypatch.setattr(grader.serve.server, "serve", serve)
    config = course_with_serve(tmp_path, {"max_kb": 5, "max_attempts": 2, "min_interval": 30})
    out = str(tmp_path / "out")
    base = ["serve", "--course", str(config.parent), "--sandbox", "auto", "--out", out]
    for extra in ([], ["--max-attempts", "9"]):
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code == 0, result.output
    assert [(s.max_kb, s.max_attempts, s.min_interval) for s in seen] == [(5, 2, 30), (5, 9, 30)]


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = course_with_serve(tmp_path, None)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        args = ["serve", "--course", str(config.parent), "--sandbox", "auto", "--port", port]
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


def test_a_port_in_use_or_a_bad_db_is_said_before_the_course_is_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The course's own check runs the solutions (about a second); the cheap refusals come first.
    import grader.judge.preflight

    ran: list[str] = []
    monkeypatch.setattr(grader.judge.preflight, "preflight_all", lambda *a: ran.append("ran"))
    config = course_with_serve(tmp_path, None)
    base = ["serve", "--course", str(config.parent), "--sandbox", "auto"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        in_use = CliRunner().invoke(main, [*base, "--port", port, "--out", str(tmp_path / "o")])
    bad_db = CliRunner().invoke(main, [*base, "--db", "mysql://nobody", "--port", "0"])
    assert (in_use.exit_code, bad_db.exit_code) == (2, 2), in_use.output + bad_db.output
    assert f"cannot listen on 127.0.0.1:{port}" in in_use.output
    assert "--db" in bad_db.output and "Traceback" not in bad_db.output
    assert ran == []


def test_a_gradebook_that_cannot_be_used_is_refused_before_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was found by the grading thread once the service was up: uploads were taken and
    # never graded, and the class page said "grading stopped (grader fault …)".
    import grader.judge.preflight

    served: list[str] = []
    monkeypatch.setattr(grader.judge.preflight, "preflight_all", lambda *a: None)
    monkeypatch.setattr(grader.serve.server, "serve", lambda *a, **k: served.append("served"))
    config = course_with_serve(tmp_path, None)
    out = tmp_path / "out"
    out.mkdir()
    (out / "gradebook.sqlite").write_text("a spreadsheet saved over it\n" * 10)
    args = ["serve", "--course", str(config.parent), "--sandbox", "auto", "--port", "0"]
    result = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert (result.exit_code, served) == (2, []), result.output
    assert result.stderr.splitlines()[-1] == (
        f"Error: {out / 'gradebook.sqlite'}: not a gradebook this grader can use (file is not "
        "a database); move it away, or write to another folder"
    )
