import numpy as np
import pytest

from streamlearn.datasets import ZooUnavailable, load_zoo, zoo_info, zoo_names


def test_names_tasks_and_sklearn_sets_load_raw():
    names = zoo_names()
    assert len(names) >= 12
    assert set(zoo_names("classification")) == set(zoo_names("binary")) | set(zoo_names("multiclass"))
    assert {"binary", "multiclass", "regression"} == {zoo_info(n).task for n in names}
    X, y, task = load_zoo("breast-cancer")
    assert X.shape == (569, 30) and task == "binary" and set(np.unique(y)) == {0, 1}
    assert X.max() > 1000  # raw: the area columns are in the thousands, nothing rescaled
    X, y, task = load_zoo("diabetes")
    assert task == "regression" and y.dtype == np.float64 and X[:, 1].max() == 2  # unscaled sex column (1/2)


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="unknown zoo data set 'nope'"):
        load_zoo("nope")


def test_shared_data_sets_are_skipped_clearly_when_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMLEARN_SHARED_DATA", str(tmp_path))
    with pytest.raises(ZooUnavailable, match="farm-ads"):
        load_zoo("farm-ads")
    with pytest.raises(ZooUnavailable, match="movielens"):
        load_zoo("movielens-100k")


def test_river_sets_need_river(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "river", None)
    with pytest.raises(ZooUnavailable, match="needs river"):
        load_zoo("phishing")


def test_river_sets_load_when_installed():
    pytest.importorskip("river", reason="river's data sets load only when river is installed")
    X, y, task = load_zoo("segment")
    assert X.shape == (2310, 18) and task == "multiclass" and len(np.unique(y)) == 7
