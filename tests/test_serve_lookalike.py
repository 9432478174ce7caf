"""Student ids that differ but look alike (a Cyrillic `а` for a Latin `a`, fullwidth
letters, an invisible character) would be two accounts that look the same on the class
page: the roster that holds two is refused in one line (exit 2) before any token is issued,
and so is a new id that looks like someone's already issued. Ordinary ids, accents
included, are not touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.cli import main
from grader.serve.lookalike import skeleton
from grader.serve.roster import read_roster
from grader.serve.store import Store


def _tokens(out: Path, roster: Path) -> Result:
    return CliRunner().invoke(main, ["serve", "tokens", "--out", str(out), "--roster", str(roster)])


@pytest.mark.parametrize(
    "other",
    [
        "\u0430lice",  # Cyrillic small a
        "\uff41lice",  # fullwidth a
        "al\u200bice",  # a zero-width space inside
        "\u0391lice",  # Greek capital alpha
    ],
)
def test_a_roster_with_two_ids_that_look_alike_is_refused(tmp_path: Path, other: str) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name\nalice,Alice\n{other},Mallory\n", encoding="utf-8")
    result = _tokens(tmp_path / "out", roster)
    assert result.exit_code == 2, result.output
    said = result.stderr
    assert said.startswith(f"Error: {roster}: ids 'alice' and {other!a} look alike")
    assert len(said.strip().splitlines()) == 1
    store = Store(tmp_path / "out")
    try:
        assert store.people("student") == []  # nothing issued
    finally:
        store.close()


def test_an_id_that_looks_like_one_issued_already_is_refused(tmp_path: Path) -> None:
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("id,name\nalice,Alice\n")
    second.write_text("id,name\n\u0430lice,Mallory\n", encoding="utf-8")
    assert _tokens(tmp_path / "out", first).exit_code == 0
    result = _tokens(tmp_path / "out", second)
    assert result.exit_code == 2 and "look alike" in result.stderr and "'alice'" in result.stderr
    store = Store(tmp_path / "out")
    try:
        assert [p.id for p in store.people("student")] == ["alice"]
    finally:
        store.close()


def test_ordinary_ids_are_not_refused(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    ids = ["jose", "josé", "zoe", "zoë", "s101", "s1o1", "sl01", "ivan", "иван", "ωmega"]
    roster.write_text("id,name\n" + "".join(f"{i},N\n" for i in ids), encoding="utf-8")
    assert [s.id for s in read_roster(roster)] == ids
    assert len({skeleton(i) for i in ids}) == len(ids)
    assert _tokens(tmp_path / "out", roster).exit_code == 0


def test_an_instructor_id_that_looks_like_a_student_s_is_refused(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada\n")
    args = ["serve", "tokens", "--out", str(tmp_path / "out"), "--roster", str(roster)]
    result = CliRunner().invoke(main, [*args, "--instructor", "\u0430da"])
    assert result.exit_code == 2 and "look alike" in result.stderr


@pytest.mark.parametrize(
    ("ordinary", "other"),
    [
        ("bob", "b\u0585b"),  # Armenian small oh
        ("kim", "k\u0131m"),  # Latin small dotless i
        ("sam", "s\u0251m"),  # Latin small alpha
        ("wu", "\u13b3u"),  # Cherokee letter la, shaped as W
        ("greg", "\u0261reg"),  # Latin small script g
    ],
)
def test_look_alikes_beyond_cyrillic_and_greek_are_refused(
    tmp_path: Path, ordinary: str, other: str
) -> None:
    # Unicode's confusables list (the serve extra's confusable_homoglyphs), not only the
    # letters of two scripts picked by hand.
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name\n{ordinary},A\n{other},B\n", encoding="utf-8")
    result = _tokens(tmp_path / "out", roster)
    assert result.exit_code == 2, result.output
    assert f"ids {ordinary!a} and {other!a} look alike" in result.stderr


def test_grader_serve_without_its_extra_says_what_to_install(tmp_path: Path) -> None:
    import subprocess
    import sys

    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n")
    # starlette not installed (as after `pip install attention-grader` without [serve])
    code = "import sys; sys.modules['starlette'] = None; from grader.cli import main; main()"
    for command in (["tokens", "--out", str(tmp_path / "out"), "--roster", str(roster)], []):
        done = subprocess.run(
            [sys.executable, "-c", code, "serve", *command],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith("Error: grader serve needs its extra")
        assert lines[0].endswith("pip install 'attention-grader[serve]'")
