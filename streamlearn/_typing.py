"""Type aliases of the public API (annotations only; nothing here runs)."""

import os
from typing import IO, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "MatrixLike", "FloatArray", "PathLike", "RandomStateLike", "SvmlightSource"]

#: a dense array-like (``numpy.typing.ArrayLike``) or a scipy.sparse matrix / array; scipy ships no type
#: information, so to a type checker this is ``Any``
MatrixLike: TypeAlias = Any
#: float64 results (scores, probabilities, weights)
FloatArray: TypeAlias = NDArray[np.float64]
#: a file name
PathLike: TypeAlias = str | os.PathLike[str]
#: what ``random_state`` accepts (as in scikit-learn)
RandomStateLike: TypeAlias = int | np.random.RandomState | np.random.Generator | None
#: an svmlight source: a file name (plain, .gz, .bz2, .xz) or a binary file object
SvmlightSource: TypeAlias = str | os.PathLike[str] | IO[bytes]
