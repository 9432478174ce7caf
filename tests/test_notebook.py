"""Loading submissions: notebook versions, scripts, bad files, cell numbering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.course.notebook import load_submission
from grader.errors import SubmissionError
from grader.report import Location

from conftest import write_notebook


def test_code_cells_keep_their_notebook_position(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "a.ipynb", ["x = 1", "def f():\n    return x"])
    submission = load_submission(path)
    assert [c.index for c in submission.cells] == [2, 3]
    assert submission.definitions() == {"x": Location(2, 1), "f": Location(3, 1)}


def test_metadata_names_the_assignment(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "a.ipynb", ["x = 1"], {"grader": {"assignment": "demo"}})
    assert load_submission(path).assignment_hint == "demo"


def test_nbformat_3_is_upgraded_with_a_note(tmp_path: Path) -> None:
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "markdown", "source": ["# hi"], "metadata": {}},
                    {
                        "cell_type": "code",
                        "input": ["def f():\n", "    return 1"],
                        "language": "python",
                        "outputs": [],
                        "metadata": {},
                    },
                ]
            }
        ],
    }
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(v3))
    submission = load_submission(path)
    assert submission.cells[0].source == "def f():\n    return 1"
    assert submission.cells[0].index == 2
    assert any("nbformat 3" in n for n in submission.notes)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"cells": [', "invalid JSON at line 1, column 12"),
        # r44: a text file was asked whether it was "saved while being written"
        (b"my answers:\nsoftmax = ...", "JSON that begins with `{`, and this file begins with 'my"),
        (b"", "the file is empty: save the notebook again from Jupyter"),
        (b" \n\n", "the file is empty (only blank space): save"),
        (b'{"cells": []}', "no 'nbformat' field"),
        (b'{"nbformat": 2, "nbformat_minor": 0}', "nbformat 2 is not supported"),
        (b"[1, 2]", "no 'nbformat' field"),
        ('{"nbformat": 4, "x": "caf\xe9"}'.encode("latin-1"), "not UTF-8 text (byte 0xe9"),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 7}',
            "malformed notebook structure",
        ),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"source": ""}]}',
            "malformed notebook structure: cell 1 is not a cell",
        ),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
            b'"cells": [{"cell_type": "code", "source": 12}]}',
            "cell 1: 'source' is neither text nor a list of lines",
        ),
        (
            b'{"nbformat": 4, "nbformat_minor": 5, "metadata": [], "cells": []}',
            "'metadata' is not a mapping",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
    ids=[
        "truncated",
        "text",
        "empty",
        "blank",
        "no-version",
        "v2",
        "not-object",
        "latin-1",
        "bad-cells",
        "cell-type",
        "source",
        "metadata",
        "deep",
    ],
)
def test_unreadable_notebooks_get_a_clear_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_bytes(content)
    with pytest.raises(SubmissionError) as info:
        load_submission(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="no such file"):
        load_submission(tmp_path / "absent.ipynb")
    with pytest.raises(SubmissionError, match="not a file"):
        load_submission(tmp_path)


def test_script_cells_split_on_percent_markers(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text("import numpy as np\n\n# %%\ndef f():\n    return 1\n# In[3]:\nf()\n")
    submission = load_submission(path)
    assert len(submission.cells) == 3
    assert submission.definitions()["f"] == Location(2, 2)


def test_magics_are_noted_with_cell_and_line(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "m.ipynb", ["import numpy as np\n!pip install numpy"])
    submission = load_submission(path)
    assert submission.cells[0].source == "import numpy as np\npass"
    assert submission.cells[0].original.endswith("!pip install numpy")
    assert submission.notes == (
        "cell 2, line 2: `!pip install numpy` is a shell command; the grader skipped it",
    )


def test_function_in_a_cell_that_does_not_parse_is_still_located(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "s.ipynb", ["x = 1", "\n\ndef g(a):\n    return (a"])
    assert load_submission(path).definitions()["g"] == Location(3, 3)


def test_a_file_this_user_may_not_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A solution notebook left chmod 000 was a PermissionError traceback (r24, as nobody).
    path = tmp_path / "locked.ipynb"
    path.write_text("{}")

    def refused(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refused)
    with pytest.raises(SubmissionError) as caught:
        load_submission(path)
    assert str(caught.value) == f"{path}: cannot be read (Permission denied)"
