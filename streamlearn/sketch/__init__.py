"""Streaming matrix sketches of a row stream A (n x d): ``B^T B (+ alpha I)`` approximates ``A^T A``.

Every sketch has the same verbs: ``partial_fit(X)`` (rows, dense or sparse), ``update(row)``,
``merge(other)``, ``sketch_`` (ell x d), ``n_seen_``, ``is_empty()``, ``covariance_operator()`` (a
``LinearOperator`` for ``B^T B + alpha I``), ``solve(v, extra_alpha=0)`` (Woodbury, O(ell d)) and
``save`` / ``load`` (safe model files).

* :class:`FrequentDirections` (FD, exact Alg. 1 or fast Alg. 4), :class:`ParameterizedFD` (PFD),
  :class:`CompensativeFD` (CFD), :class:`RobustFrequentDirections` (RFD, Alg. 2 / fast Alg. 5, with
  ``alpha_``): deterministic, mergeable, ``||A^T A - B^T B (- alpha I)||_2 <= ||A - A_k||_F^2 / (ell - k)``
  (half that for RFD).
* :class:`RandomProjectionSketch` (Gaussian or sparse sign) and :class:`OjaSketch`: randomised, no
  deterministic bound.

``SKETCHES`` maps the command-line names to the classes.
"""

from ._fd import CompensativeFD, FrequentDirections, ParameterizedFD, RobustFrequentDirections
from ._random import OjaSketch, RandomProjectionSketch

SKETCHES = {
    "fd": FrequentDirections,
    "pfd": ParameterizedFD,
    "cfd": CompensativeFD,
    "rfd": RobustFrequentDirections,
    "rp": RandomProjectionSketch,
    "oja": OjaSketch,
}

__all__ = [
    "FrequentDirections",
    "ParameterizedFD",
    "CompensativeFD",
    "RobustFrequentDirections",
    "RandomProjectionSketch",
    "OjaSketch",
    "SKETCHES",
]
