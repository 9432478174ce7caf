"""IPython-only syntax is neutralised line for line; valid Python is never touched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.course.ipython import neutralise


@pytest.mark.parametrize(
    ("source", "expected", "note"),
    [
        ("%matplotlib inline\nx = 1", "pass\nx = 1", "IPython magic"),
        ("!pip install numpy\nx = 1", "pass\nx = 1", "shell command"),
        ("for i in range(2):\n    !echo hi\n", "for i in range(2):\n    pass\n", "shell command"),
        ("files = !ls\nx = 1", "files = None\nx = 1", "IPython syntax"),
        ("np.exp?\nx = 1", "pass\nx = 1", "help request"),
        ("%%time\nx = 1", "\nx = 1", "body was run"),
        ("%%bash\necho hi", "", "not Python"),
    ],
    ids=["line-magic", "shell", "indented", "assign", "help", "time-cell", "bash-cell"],
)
def test_ipython_syntax(source: str, expected: str, note: str) -> None:
    runnable, notes = neutralise(source)
    assert runnable == expected
    assert notes and note in notes[0][1]
    assert runnable.count("\n") in (source.count("\n"), 0)


def test_valid_python_is_left_alone() -> None:
    source = 'x = 5 % 3\ny = x != 2\ns = """\n!not a command\n"""'
    assert neutralise(source) == (source, [])


def test_writefile_writes_its_body_line_for_line(tmp_path: Path) -> None:
    source = "%%writefile helper.py\ndef f():\n    return '''x'''\n"
    runnable, notes = neutralise(source)
    assert runnable.count("\n") == source.count("\n")
    assert "wrote helper.py" in notes[0][1]
    exec(compile(runnable, "cell", "exec"), {"__builtins__": __builtins__, "open": _in(tmp_path)})
    assert (tmp_path / "helper.py").read_text() == "def f():\n    return '''x'''\n"
    more, notes = neutralise('%%writefile -a "helper.py"\n# more')
    assert "appended to helper.py" in notes[0][1]
    exec(compile(more, "cell", "exec"), {"open": _in(tmp_path)})
    assert (tmp_path / "helper.py").read_text().endswith("'''\n# more")


def test_writefile_without_one_file_name_is_skipped() -> None:
    for line in ("%%writefile", "%%writefile a.py b.py", "%%writefile 'unclosed"):
        runnable, notes = neutralise(f"{line}\nx = 1")
        assert runnable == "" and "skipped" in notes[0][1]


def _in(folder: Path) -> Callable[..., Any]:
    """open() with relative names inside `folder` (the child's working folder)."""
    return lambda name, *args, **kwargs: open(folder / name, *args, **kwargs)
