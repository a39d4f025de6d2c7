"""The data-set zoo: real data sets that ship inside installed packages, raw as shipped.

scikit-learn's bundled sets, river's bundled files (when river is installed) and the shared data directory's
farm-ads and MovieLens-100K (when present), and the bundled a9a. Nothing is downloaded and nothing is scaled: the
columns keep the units they ship with (counts, pixel values, dates, money), which is the point of the zoo.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ZOO", "ZooUnavailable", "load_zoo", "zoo_info", "zoo_names"]

BINARY, MULTICLASS, REGRESSION = "binary", "multiclass", "regression"


class ZooUnavailable(LookupError):
    """A zoo data set cannot be loaded here (its package or the shared data directory is missing).

    >>> from streamlearn.datasets import ZooUnavailable, load_zoo
    >>> try:
    ...     X, y, task = load_zoo("phishing")  # river's file: needs river installed
    ... except ZooUnavailable:
    ...     X = None  # skip this data set
    """


@dataclass(frozen=True)
class ZooEntry:
    """One zoo data set: its name, task, where it comes from and a one-line description."""

    name: str
    task: str
    source: str
    description: str
    loader: Callable[[], tuple[Any, Any]]


def _sklearn(fn, **kwargs):
    def load():
        import sklearn.datasets as skd

        X, y = getattr(skd, fn)(return_X_y=True, **kwargs)
        return np.asarray(X, dtype=np.float64), y

    return load


def _river(cls_name, target=None, drop=()):
    def load():
        try:
            from river import datasets as rd
        except ImportError:
            raise ZooUnavailable("needs river (pip install river; part of the 'benchmark' extra)") from None
        rows, ys = [], []
        keys = None
        for x, y in getattr(rd, cls_name)():
            if keys is None:
                keys = [k for k in x if k not in drop]
            rows.append([float(x[k]) for k in keys])
            ys.append(y if target is None else y[target])
        return np.asarray(rows, dtype=np.float64), np.asarray(ys)

    return load


def _a9a():
    from ._bundled import load_a9a

    X, y, _, _ = load_a9a()
    return X, y


def _shared(what):
    def load():
        from ._bundled import load_farm_ads

        try:
            if what == "farm-ads":
                return load_farm_ads()
            from ._movielens import load_movielens

            return load_movielens(split="all")
        except FileNotFoundError as exc:
            raise ZooUnavailable(f"shared data directory: {exc}") from None

    return load


ZOO = {
    e.name: e
    for e in [
        ZooEntry(
            "breast-cancer",
            BINARY,
            "scikit-learn",
            "Wisconsin diagnostic breast cancer, 569 x 30",
            _sklearn("load_breast_cancer"),
        ),
        ZooEntry("phishing", BINARY, "river", "phishing web pages, 1,250 x 9", _river("Phishing")),
        ZooEntry("bananas", BINARY, "river", "two-dimensional banana-shaped classes, 5,300 x 2", _river("Bananas")),
        ZooEntry(
            "shuttle",
            BINARY,
            "river",
            "Statlog shuttle, rare classes vs normal flow (skewed), 49,097 x 9",
            _river("Shuttle"),
        ),
        ZooEntry("a9a", BINARY, "streamlearn", "UCI Adult, binarised (LIBSVM a9a training file), 32,561 x 123", _a9a),
        ZooEntry("farm-ads", BINARY, "shared data", "UCI farm ads bag of words, 4,143 x 54,877", _shared("farm-ads")),
        ZooEntry("iris", MULTICLASS, "scikit-learn", "Fisher's iris, 3 classes, 150 x 4", _sklearn("load_iris")),
        ZooEntry("wine", MULTICLASS, "scikit-learn", "wine cultivars, 3 classes, 178 x 13", _sklearn("load_wine")),
        ZooEntry(
            "digits",
            MULTICLASS,
            "scikit-learn",
            "8x8 handwritten digits, 10 classes, 1,797 x 64",
            _sklearn("load_digits"),
        ),
        ZooEntry("segment", MULTICLASS, "river", "image segments, 7 classes, 2,310 x 18", _river("ImageSegments")),
        ZooEntry(
            "diabetes",
            REGRESSION,
            "scikit-learn",
            "diabetes progression (unscaled), 442 x 10",
            _sklearn("load_diabetes", scaled=False),
        ),
        ZooEntry(
            "trump-approval",
            REGRESSION,
            "river",
            "approval rating from five polls and the date, 1,001 x 6",
            _river("TrumpApproval"),
        ),
        ZooEntry(
            "chick-weights",
            REGRESSION,
            "river",
            "chick weight from time, chick and diet, 578 x 3",
            _river("ChickWeights"),
        ),
        ZooEntry(
            "movielens-100k",
            REGRESSION,
            "shared data",
            "MovieLens ratings, one-hot user and item, 100,000 x 2,625",
            _shared("movielens"),
        ),
    ]
}


def zoo_names(task: str | None = None) -> list[str]:
    """Names of the zoo's data sets (all of them, loadable here or not), optionally of one task.

    Parameters
    ----------
    task : {"binary", "multiclass", "regression", "classification"} or None
        ``"classification"`` is binary and multiclass.

    Examples
    --------
    >>> from streamlearn.datasets import zoo_names
    >>> len(zoo_names()) >= 12, "iris" in zoo_names("multiclass"), "diabetes" in zoo_names("classification")
    (True, True, False)
    """
    tasks = {"classification": (BINARY, MULTICLASS)}.get(task, (task,))  # type: ignore[arg-type]
    return [n for n, e in ZOO.items() if task is None or e.task in tasks]


def zoo_info(name: str) -> ZooEntry:
    """The :class:`ZooEntry` of ``name`` (task, source, description).

    >>> from streamlearn.datasets import zoo_info
    >>> zoo_info("iris").task, zoo_info("iris").source
    ('multiclass', 'scikit-learn')
    """
    try:
        return ZOO[name]
    except KeyError:
        raise ValueError(f"unknown zoo data set {name!r}; expected one of {', '.join(ZOO)}.") from None


def load_zoo(name: str) -> tuple[Any, np.ndarray, str]:
    """Load zoo data set ``name`` raw, as shipped: ``(X, y, task)``.

    ``X`` is a float64 ndarray (a CSR matrix for a9a, farm-ads and MovieLens), ``y`` the labels as
    shipped (any hashable values for classification, floats for regression) and ``task`` one of
    ``"binary"``, ``"multiclass"``, ``"regression"``. Rows are in the order they ship in.

    Raises
    ------
    ValueError
        Unknown name.
    ZooUnavailable
        river is not installed (river's sets) or the shared data directory lacks the file (farm-ads,
        MovieLens; see :func:`streamlearn.datasets.shared_data_path`).

    Examples
    --------
    >>> from streamlearn.datasets import load_zoo
    >>> X, y, task = load_zoo("wine")
    >>> X.shape, task, sorted(set(y))
    ((178, 13), 'multiclass', [np.int64(0), np.int64(1), np.int64(2)])
    """
    entry = zoo_info(name)
    X, y = entry.loader()
    y = np.asarray(y)
    if entry.task == REGRESSION:
        y = y.astype(np.float64)
    elif y.dtype == bool:
        y = y.astype(np.int64)
    return X, y, entry.task
