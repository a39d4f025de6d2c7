"""Bundled demo data (a9a, see data/README.md for licence) and the shared-data locator."""

import os
from importlib import resources
from pathlib import Path
from typing import Any

from .._typing import FloatArray, PathLike
from ._svmlight import load_svmlight

__all__ = ["A9A_N_FEATURES", "FARM_ADS_N_FEATURES", "bundled_path", "load_a9a", "load_farm_ads", "shared_data_path"]

A9A_N_FEATURES = 123
FARM_ADS_N_FEATURES = 54_877
_BUNDLED = ("a9a.xz", "a9a.t.xz")
_ENV = "STREAMLEARN_SHARED_DATA"


def bundled_path(name: str) -> Path:
    """Path of a data file shipped inside the package (``"a9a.xz"`` or ``"a9a.t.xz"``).

    Parameters
    ----------
    name : {"a9a.xz", "a9a.t.xz"}
        The file: a9a training (32,561 rows) or test (16,281 rows) part, xz-compressed LIBSVM text.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> from streamlearn.datasets import bundled_path
    >>> bundled_path("a9a.xz").name
    'a9a.xz'
    """
    if name not in _BUNDLED:
        raise ValueError(f"bundled_path: unknown bundled file {name!r}; expected one of {_BUNDLED}.")
    return Path(str(resources.files(__package__).joinpath("data", name)))


def load_a9a() -> tuple[Any, FloatArray, Any, FloatArray]:
    """Return ``(X_train, y_train, X_test, y_test)`` of the bundled a9a (CSR float64, labels -1/+1).

    32,561 training and 16,281 test rows, 123 binary features (the test file never uses feature 123, so
    both are read with ``n_features=123``). Read by :func:`streamlearn.datasets.load_svmlight`
    (one-based indices, int32).

    Returns
    -------
    X_train : scipy.sparse.csr_matrix of shape (32561, 123)
    y_train : ndarray of shape (32561,)
    X_test : scipy.sparse.csr_matrix of shape (16281, 123)
    y_test : ndarray of shape (16281,)

    Examples
    --------
    >>> from streamlearn.datasets import load_a9a
    >>> X, y, X_test, y_test = load_a9a()
    >>> X.shape, X_test.shape
    ((32561, 123), (16281, 123))
    >>> sorted(set(y))
    [np.float64(-1.0), np.float64(1.0)]
    """
    out = []
    for name in _BUNDLED:
        X, y = load_svmlight(bundled_path(name), n_features=A9A_N_FEATURES, zero_based=False)
        out += [X, y]
    return tuple(out)


def shared_data_path(name: str) -> Path:
    """Locate a file of the team's shared data directory (a9a, farm-ads, movielens, ...).

    The directory is ``$STREAMLEARN_SHARED_DATA`` when that environment variable is set, else
    ``../shared/data`` next to the repository holding this package (``/work/shared/data`` for a
    checkout in ``/work/main``).

    Parameters
    ----------
    name : str
        Path of the file relative to the data directory, e.g. ``"farm-ads/farm-ads-vect.xz"``.

    Returns
    -------
    pathlib.Path
        The existing file.

    Raises
    ------
    FileNotFoundError
        When the file is not there; the message says which directory was searched and how to point
        the search elsewhere.

    Examples
    --------
    >>> from streamlearn.datasets import shared_data_path
    >>> try:
    ...     path = shared_data_path("a9a/a9a.xz")
    ... except FileNotFoundError:
    ...     path = None  # no shared data on this machine
    """
    env = os.environ.get(_ENV)
    if env:
        root, how = Path(env), f"${_ENV}"
    else:
        root = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
        how = f"../shared/data relative to the repository ({_ENV} is not set)"
    path = root / name
    if path.is_file():
        return path
    raise FileNotFoundError(
        f"shared data file {name!r} not found: looked for {os.path.normpath(path)} "
        f"(data directory from {how}). Set {_ENV}=/path/to/shared/data to use another location."
    )


def load_farm_ads(path: PathLike | None = None) -> tuple[Any, FloatArray]:
    """Load UCI Farm Ads (``farm-ads-vect``, LIBSVM format): ``(X, y)``, 4,143 rows, 54,877 features.

    Binary bag-of-words of farm-animal related ads, label +1 (accepted by the site owner) or -1.
    Not bundled (about 0.6 MB compressed); read from the shared data directory by default.

    Parameters
    ----------
    path : str, os.PathLike or None, default=None
        The file (plain or compressed). ``None``: ``shared_data_path("farm-ads/farm-ads-vect.xz")``.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (4143, 54877)
    y : ndarray of shape (4143,), labels -1.0 / 1.0

    Raises
    ------
    FileNotFoundError
        ``path=None`` and the shared data directory has no farm-ads file (see :func:`shared_data_path`).

    Examples
    --------
    >>> from streamlearn.datasets import load_farm_ads
    >>> try:
    ...     X, y = load_farm_ads()
    ... except FileNotFoundError:
    ...     X = None  # shared data absent
    >>> X is None or X.shape == (4143, 54877)
    True
    """
    if path is None:
        path = shared_data_path("farm-ads/farm-ads-vect.xz")
    return load_svmlight(path, n_features=FARM_ADS_N_FEATURES, zero_based=False)
