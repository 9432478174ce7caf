"""IPython-only syntax is neutralised line for line; valid Python is never touched."""

from __future__ import annotations

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
