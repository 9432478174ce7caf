"""Red-team of the session d3722e8..bef7448 (r15): a `time_zone:` naming a folder of the zone
database, and a batch's `.py` scripts left out when the batch settles its assignment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.grade import _recognised
from grader.cli import main
from grader.course.config import Config, load_config
from grader.errors import ConfigError

import students
from conftest import repo_config_raw


def _course(folder: Path, **top: object) -> Path:
    raw = repo_config_raw()
    raw.update(top)
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder / "config.yaml"


@pytest.mark.parametrize("name", ["America", "Europe", "a" * 300])
def test_a_time_zone_naming_a_folder_or_too_long_is_one_line(tmp_path: Path, name: str) -> None:
    """`time_zone: America` (a folder of the zone database, a likely slip for
    America/New_York) or an over-long name was an IsADirectoryError / OSError traceback."""
    config = _course(tmp_path / "course", time_zone=name)
    with pytest.raises(ConfigError, match="is no time zone this machine knows"):
        load_config(config)
    other = _course(tmp_path / "cli", time_zone=name)
    result = CliRunner().invoke(main, ["cache", "--config", str(other)])
    assert "Traceback" not in result.output and not isinstance(result.exception, OSError)


def test_a_script_submission_counts_when_the_batch_settles(config: Config, tmp_path: Path) -> None:
    """A batch takes `.py` scripts (submissions.SUFFIXES), but _recognised read every file as
    JSON first: a script never counted, so a class of scripts with one notebook of another
    assignment was settled as that notebook's, and every script graded as the wrong one."""
    script = tmp_path / "ada.py"
    script.write_text("\n\n".join(students.cells()))
    assert _recognised(script, config) == "self_attention"


def test_serve_matches_an_extension_as_grade_does_without_a_roster(tmp_path: Path) -> None:
    """Without roster.csv, `grader grade` now matches `extensions.csv`'s `ADA` to the
    submission `ada` (CourseExtensions.matched: case and Unicode form aside, as
    docs/instructor.md says); `grader serve` still looks the uploader's id up exactly, so the
    same student has the extension in the batch's gradebook and not on the service."""
    from grader.serve.semester import upload_late

    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(
        due="2026-03-01T12:00:00+00:00", late={"percent": 10, "per": "hour"}
    )
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    (folder / "extensions.csv").write_text("student,hours\nADA,48\n")
    spec = load_config(folder / "config.yaml").assignments["self_attention"]
    from grader.batch.lateness import read_course_extensions

    assert read_course_extensions(folder).matched(["ada"]) == {"ada": 48.0}
    a_day_late = 1772366400.0 + 24 * 3600  # 2026-03-02T12:00Z
    late = upload_late(folder, spec, "ada", a_day_late)
    assert late is not None and late.percent == 0.0, late


def test_blake_falls_back_where_the_builtin_blake2_is_missing() -> None:
    """course/blake.py says an interpreter without `_blake2` gets hashlib's blake2b, "the
    same function"; but hashlib never takes BLAKE2 from OpenSSL (its
    __block_openssl_constructor), so without `_blake2` hashlib has no blake2b at all: the
    fallback raises ImportError and every command that keys the cache folder fails."""
    import subprocess
    import sys

    probe = (
        "import sys; sys.modules['_blake2'] = None\n"
        "from grader.course.blake import blake2b\n"
        "import grader.batch.grade, grader.serve.app  # html.py's stamp, feedback, service\n"
        "print(blake2b(b'x', digest_size=20).hexdigest())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-400:]
    assert len(done.stdout.strip()) == 40


def test_a_students_other_notebooks_do_not_outvote_the_class(
    config: Config, tmp_path: Path
) -> None:
    """With `keep: best` each of a student's other notebooks is a Job of its own
    (grade._others, key `student\\x1fN`), and _settle counted every Job: aaron, handing in
    four notebooks of the easier udl_12_1, outvotes three classmates and the whole class is
    graded as udl_12_1 (the attack test_batch_settled guards against, by another door).
    A student should count once."""
    import shutil

    from grader.batch.grade import _settle
    from grader.batch.keep import alt_key
    from grader.batch.pool import Job

    from conftest import REPO

    class_jobs = []
    for name in ("ada", "bruno", "chen"):
        shutil.copy(REPO / "demo" / "submissions" / f"{name}.ipynb", tmp_path)
        class_jobs.append(Job(name, tmp_path / f"{name}.ipynb"))
    other = REPO / "solutions" / "udl_12_1.ipynb"
    aaron = [Job("aaron", other), *(Job(alt_key("aaron", n), other) for n in (1, 2, 3))]
    assert _settle([*class_jobs, *aaron], config, tmp_path) == "self_attention"
