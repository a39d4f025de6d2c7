"""MovieLens 100K (GroupLens) as a sparse rating stream: one-hot user + one-hot item (+ optional attributes).

Never bundled (the GroupLens licence forbids redistribution); read from the shared data directory or a path.
"""

import lzma
import os
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._typing import PathLike
from ._bundled import shared_data_path

__all__ = ["load_movielens", "MOVIELENS_SPLITS"]

MOVIELENS_SPLITS = ("u1", "u2", "u3", "u4", "u5", "ua", "ub")
_N_USERS = 943
_N_ITEMS = 1682
#: age buckets (lower bounds) of the one-hot age attribute, as in MovieLens 1M
_AGE_BOUNDS = (0, 18, 25, 35, 45, 50, 56)
_OCCUPATIONS = (
    "administrator",
    "artist",
    "doctor",
    "educator",
    "engineer",
    "entertainment",
    "executive",
    "healthcare",
    "homemaker",
    "lawyer",
    "librarian",
    "marketing",
    "none",
    "other",
    "programmer",
    "retired",
    "salesman",
    "scientist",
    "student",
    "technician",
    "writer",
)
_N_GENRES = 19


def _open_text(directory, name):
    """Open ``name`` or ``name.xz`` in ``directory`` as text (latin-1: u.item has accented titles)."""
    plain = directory / name
    if plain.is_file():
        return open(plain, encoding="latin-1")
    packed = directory / (name + ".xz")
    if packed.is_file():
        return lzma.open(packed, "rt", encoding="latin-1")
    raise FileNotFoundError(
        f"load_movielens: neither {plain} nor {packed} exists; expected the ml-100k files "
        "(u.data, u1.base, u1.test, ..., u.user, u.item) plain or xz-compressed."
    )


def _resolve(path):
    if path is None:
        return shared_data_path("movielens-100k/ml-100k/u.data.xz").parent
    path = Path(os.fspath(path))
    if not path.is_dir():
        raise FileNotFoundError(f"load_movielens: {path} is not a directory; pass the ml-100k directory.")
    return path


def _ratings(directory, name):
    with _open_text(directory, name) as f:
        raw = np.loadtxt(f, dtype=np.int64, ndmin=2)
    if raw.shape[1] != 4:
        raise ValueError(
            f"load_movielens: {directory / name}: expected 4 tab-separated columns (user, item, "
            f"rating, timestamp); got {raw.shape[1]}."
        )
    users, items, ratings, stamps = raw.T
    for what, ids, top in (("user", users, _N_USERS), ("item", items, _N_ITEMS)):
        if ids.size and (ids.min() < 1 or ids.max() > top):
            raise ValueError(
                f"load_movielens: {directory / name}: {what} ids must be in [1, {top}]; got [{ids.min()}, {ids.max()}]."
            )
    return users - 1, items - 1, ratings.astype(np.float64), stamps


def _user_attributes(directory):
    """(943, 7 + 2 + 21) one-hot age bucket, gender, occupation."""
    out = np.zeros((_N_USERS, len(_AGE_BOUNDS) + 2 + len(_OCCUPATIONS)))
    with _open_text(directory, "u.user") as f:
        for line in f:
            if not line.strip():
                continue
            uid, age, gender, occupation, _zip = line.rstrip("\n").split("|")
            u = int(uid) - 1
            out[u, int(np.searchsorted(_AGE_BOUNDS, int(age), side="right")) - 1] = 1.0
            out[u, len(_AGE_BOUNDS) + (0 if gender == "M" else 1)] = 1.0
            out[u, len(_AGE_BOUNDS) + 2 + _OCCUPATIONS.index(occupation)] = 1.0
    return out


def _item_attributes(directory):
    """(1682, 19) genre indicators (a film may have several)."""
    out = np.zeros((_N_ITEMS, _N_GENRES))
    with _open_text(directory, "u.item") as f:
        for line in f:
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("|")
            out[int(parts[0]) - 1] = np.asarray(parts[-_N_GENRES:], dtype=np.float64)
    return out


def _features(users, items, attributes, user_attr, item_attr):
    n = users.shape[0]
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([users, _N_USERS + items]).ravel()
    X = sp.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, _N_USERS + _N_ITEMS))
    if attributes:
        X = sp.hstack([X, sp.csr_matrix(user_attr[users]), sp.csr_matrix(item_attr[items])], format="csr")
    X.sort_indices()
    return X


def load_movielens(
    path: PathLike | None = None, *, split: str = "u1", attributes: bool = False, order: str = "timestamp"
) -> tuple[Any, ...]:
    """Load MovieLens 100K as ``(X_train, y_train, X_test, y_test)`` (or ``(X, y)`` for ``split="all"``).

    Each rating is one row: a one-hot user (columns 0..942) and a one-hot item (columns 943..2624), so an
    FM's pairwise term is a user-item interaction; the target is the rating (1..5, float64).
    With ``attributes=True`` the row also holds the user's age bucket (7 one-hot columns: <18, 18-24, 25-34,
    35-44, 45-49, 50-55, 56+), gender (2) and occupation (21), and the item's genres (19 indicators):
    2,674 columns in all.

    Parameters
    ----------
    path : str, os.PathLike or None, default=None
        The ``ml-100k`` directory (files plain or ``.xz``). None: ``movielens-100k/ml-100k`` of the shared
        data directory (see :func:`streamlearn.datasets.shared_data_path`). The data is never bundled
        (GroupLens licence).
    split : {"u1", "u2", "u3", "u4", "u5", "ua", "ub", "all"}, default="u1"
        GroupLens' train/test split (``u1.base``/``u1.test``: 80,000 / 20,000 ratings; ``ua``/``ub``: 10
        test ratings per user) or all 100,000 ratings of ``u.data``.
    attributes : bool, default=False
        Append the user and item attributes described above.
    order : {"timestamp", "file"}, default="timestamp"
        Row order: by rating time (a stable sort, so the stream an online learner would have seen) or as in
        the file (``u1.base`` is sorted by user, an adversarial order for online learners).

    Returns
    -------
    X_train, y_train, X_test, y_test : csr_matrix (n, 2625 or 2674), ndarray (n,)
        Or ``X, y`` for ``split="all"``.

    Raises
    ------
    FileNotFoundError
        The directory or a file is missing (the message names it).

    Examples
    --------
    >>> from streamlearn.datasets import load_movielens
    >>> try:
    ...     X, y, X_test, y_test = load_movielens()
    ... except FileNotFoundError:
    ...     X = None  # shared data absent
    >>> X is None or (X.shape, X_test.shape, float(y.min()), float(y.max())) == ((80000, 2625), (20000, 2625), 1.0, 5.0)
    True
    """
    if split not in MOVIELENS_SPLITS + ("all",):
        raise ValueError(f"load_movielens: split must be one of {MOVIELENS_SPLITS + ('all',)}; got {split!r}.")
    if order not in ("timestamp", "file"):
        raise ValueError(f"load_movielens: order must be 'timestamp' or 'file'; got {order!r}.")
    directory = _resolve(path)
    user_attr = _user_attributes(directory) if attributes else None
    item_attr = _item_attributes(directory) if attributes else None
    names = ("u.data",) if split == "all" else (f"{split}.base", f"{split}.test")
    out = []
    for name in names:
        users, items, ratings, stamps = _ratings(directory, name)
        if order == "timestamp":
            perm = np.argsort(stamps, kind="stable")
            users, items, ratings = users[perm], items[perm], ratings[perm]
        out += [_features(users, items, attributes, user_attr, item_attr), ratings]
    return tuple(out)
