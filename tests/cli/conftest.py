"""Fixtures of the command-line tests."""

import pytest

from streamlearn.datasets import write_click_log


@pytest.fixture(scope="session")
def clicks(tmp_path_factory):
    """A folder with a synthetic click log in VW text: ``train.vw`` (3,000 rows) and ``test.vw.gz`` (500 rows)."""
    d = tmp_path_factory.mktemp("clicks")
    write_click_log(d / "train.vw", 3000, seed=1)
    write_click_log(d / "test.vw.gz", 500, seed=2)
    return d
