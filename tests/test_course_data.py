"""course.data finds the course's data files from the package, whatever the working directory."""

import pytest

from course.data import data_path


def test_the_sonnets_are_found_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = data_path("sonnets.txt")
    assert path.is_absolute()
    assert path.read_text(encoding="utf-8").startswith("Eighteen sonnets by William Shakespeare")


def test_a_missing_data_file_is_named_with_what_there_is():
    with pytest.raises(FileNotFoundError, match=r"no data file 'sonnet.txt' .*sonnets\.txt"):
        data_path("sonnet.txt")
