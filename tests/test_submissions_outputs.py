"""The output folder and what the grader writes there are passed over in a class folder's
listing, through links too, and at a cost that does not grow with the class: the output
folder and the class folder are resolved once per listing, an entry only when it is a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.batch import submissions
from grader.batch.submissions import find_submissions


def test_a_link_in_the_class_folder_to_the_output_folder_is_passed_over(tmp_path: Path) -> None:
    klass, out = tmp_path / "class", tmp_path / "elsewhere" / "out"
    klass.mkdir()
    (out / "feedback").mkdir(parents=True)
    (klass / "ada.ipynb").write_text("{}")
    (tmp_path / "bo.ipynb").write_text("{}")
    (klass / "bo.ipynb").symlink_to(tmp_path / "bo.ipynb")  # the instructor's: followed
    (klass / "results").symlink_to(out)
    (klass / "also-results").symlink_to(klass / "results")  # a link to the link

    found = find_submissions(klass, None, out)
    said = "\n".join(found.problems)
    assert [s for s, _ in found.submissions] == ["ada", "bo"]
    assert "results" not in said
    # Without `out`, the linked folder is an entry like any other: the check is not a no-op.
    unaware = "\n".join(find_submissions(klass, None).problems)
    assert "results/: no notebook inside" in unaware and "also-results/" in unaware


def test_out_named_through_a_link_to_the_class_folder_passes_over_its_outputs(
    tmp_path: Path,
) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "ada.ipynb").write_text("{}")
    (klass / "grades.csv").write_text("")
    (klass / "feedback").mkdir()
    (tmp_path / "out").symlink_to(klass)
    found = find_submissions(klass, None, tmp_path / "out")
    assert [s for s, _ in found.submissions] == ["ada"] and found.problems == []
    assert "grades.csv: not a notebook" in "\n".join(find_submissions(klass, None).problems)


def test_the_listing_resolves_no_more_paths_for_a_larger_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    real = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        calls.append(self)
        return real(self, strict)

    monkeypatch.setattr(submissions.Path, "resolve", counted)
    resolved = []
    for size in (10, 40):
        klass = tmp_path / f"class{size}"
        klass.mkdir()
        for i in range(size):
            (klass / f"s{i:02d}.ipynb").write_text("{}")
        calls.clear()
        found = find_submissions(klass, None, tmp_path / "out")
        assert len(found.submissions) == size
        resolved.append(len(calls))
    assert resolved[0] == resolved[1], resolved
