"""Bundled demo data: a9a (UCI Adult, LIBSVM binarisation), see data/README.md for licence."""

import lzma
from importlib import resources

from sklearn.datasets import load_svmlight_file

A9A_N_FEATURES = 123


def load_a9a():
    """Return ``(X_train, y_train, X_test, y_test)`` of the bundled a9a (CSR float64, labels -1/+1).

    32,561 training and 16,281 test rows, 123 binary features (the test file never uses feature 123, so
    both are read with ``n_features=123``).

    >>> X, y, X_test, y_test = load_a9a()
    >>> X.shape, X_test.shape
    ((32561, 123), (16281, 123))
    """
    out = []
    for name in ("a9a.xz", "a9a.t.xz"):
        with resources.files(__package__).joinpath("data", name).open("rb") as raw, lzma.open(raw) as f:
            X, y = load_svmlight_file(f, n_features=A9A_N_FEATURES)
        out += [X, y]
    return tuple(out)
