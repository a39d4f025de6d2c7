"""Running standardisation of a regression target (statistics updated example by example, never looking ahead)."""

import warnings
from typing import Self

import numpy as np
from .._estimator import BaseEstimator, check_is_fitted
from .._validation import row_error

from .._kernels import scaling as _k
from .._typing import ArrayLike, FloatArray
from ..persist import PersistMixin

__all__ = ["TargetStandardScaler"]


def _targets(y, name="y"):
    if y is None:
        raise ValueError(f"TargetStandardScaler requires {name} to be passed, but the target {name} is None.")
    y = np.asarray(y)
    if np.iscomplexobj(y):
        raise ValueError(f"Complex data not supported: {name} must hold real regression targets.")
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it is used as a 1d array.",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one target per example); got shape {y.shape}.")
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers (regression targets); got dtype {y.dtype}.") from None
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinity at index {int(np.flatnonzero(~np.isfinite(y))[0])}.")
    return np.ascontiguousarray(y)


class TargetStandardScaler(PersistMixin, BaseEstimator):
    """Standardise a regression target online: ``(y - mean) / std`` with the running mean and standard deviation.

    A learner whose step sizes assume targets of unit size (every squared-loss learner with a fixed ``eta0``,
    and the intercept, which starts at 0) learns slowly or diverges on targets like prices, weights or
    counts in the hundreds. Behind this scaler it learns ``(y - mean) / std`` instead, and its predictions
    are mapped back as ``mean + std * prediction``. In a stream (``partial_fit_transform``, and so in a
    :class:`~streamlearn.preprocessing.StreamPipeline` with ``target_scaler``), example ``i`` is standardised
    with the statistics of the examples *before* it, and the learner's pre-update score is mapped back with
    the same ones: progressive validation never looks ahead, and the result does not depend on the chunk
    size. Until two distinct targets are seen the standard deviation is 0: such examples give the target 0
    (nothing to learn) and the prediction is the mean so far. Sample weights weight the statistics (weight 0
    adds nothing).

    Attributes
    ----------
    mean_ : float
        Weighted mean of the targets seen.
    scale_ : float
        Their weighted standard deviation (population form; 0 while there is no spread).
    n_samples_seen_ : float
        Total weight of the targets seen.

    Examples
    --------
    >>> import numpy as np
    >>> from streamlearn.preprocessing import TargetStandardScaler
    >>> ts = TargetStandardScaler()
    >>> t, shift, scale = ts.partial_fit_transform(np.array([100.0, 300.0, 250.0, 50.0]))
    >>> np.round(t, 2)  # each target standardised by the ones before it (no spread before the third)
    array([ 0.  ,  0.  ,  0.5 , -1.96])
    >>> print(ts.mean_, round(ts.scale_, 1), np.round(ts.inverse_transform([0.0, 1.0]), 1))
    175.0 103.1 [175.  278.1]
    """

    def __init__(self):
        pass

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.target_tags.required = True
        return tags

    def _state(self):
        if not hasattr(self, "_state_stats"):
            self._state_stats = np.zeros(3, dtype=np.float64)  # [W, mean, M2]
        return self._state_stats

    def partial_fit_transform(
        self, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(t, shift, scale)``: each target standardised with the statistics of the targets before it (``t``,
        with those statistics as ``shift`` and ``scale``; ``shift + scale * score`` maps a score of the
        learner back), then added to them."""
        yv = _targets(y)
        if sample_weight is None:
            sw = np.ones(yv.shape[0])
        else:
            sw = np.ascontiguousarray(sample_weight, dtype=np.float64)
            if sw.shape != yv.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError(
                    f"sample_weight must hold {yv.shape[0]} finite values >= 0 (one per target); got "
                    f"{'shape ' + str(sw.shape) if sw.shape != yv.shape else 'a negative or non-finite value'}."
                )
        t, shift, scale = np.empty_like(yv), np.empty_like(yv), np.empty_like(yv)
        state = self._state()
        std, bad = _k.standardize_targets(y=yv, sample_weight=sw, state=state, t=t, shift=shift, scale=scale)
        if bad >= 0:
            why = (
                f"is too large to standardise: its squared deviation from the mean of the targets before it "
                f"({shift[bad]:g}) overflows. Rescale the target."
            )
            raise row_error(
                ValueError(f"y[{bad}] = {yv[bad]:g} (sample weight {sw[bad]:g}) {why}"),
                bad,
                f"the target {yv[bad]:g} (importance weight {sw[bad]:g}) {why}",
            )
        self.n_samples_seen_ = float(state[0])
        self.mean_ = float(state[1])
        self.scale_ = float(std)
        return t, shift, scale

    def partial_fit(self, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Add the targets ``y`` to the statistics. Returns ``self``."""
        self.partial_fit_transform(y, sample_weight)
        return self

    def fit(self, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Reset, then learn the statistics of ``y``. Returns ``self``."""
        for attr in ("_state_stats", "mean_", "scale_", "n_samples_seen_"):
            if hasattr(self, attr):
                delattr(self, attr)
        return self.partial_fit(y, sample_weight)

    def transform(self, y: ArrayLike) -> FloatArray:
        """``(y - mean_) / scale_`` with the current statistics (0 where ``scale_`` is 0)."""
        check_is_fitted(self)
        yv = _targets(y)
        return (yv - self.mean_) / self.scale_ if self.scale_ > 0 else np.zeros_like(yv)

    def inverse_transform(self, scores: ArrayLike) -> FloatArray:
        """``mean_ + scale_ * scores``: a learner's standardised predictions in the target's units."""
        check_is_fitted(self)
        s = np.asarray(scores)
        if s.dtype.kind not in "biuf":  # None (it became NaN), text and complex numbers are not predictions
            ok = s.dtype.kind == "O" and not any(v is None or isinstance(v, (str, bytes, complex)) for v in s.flat)
            try:
                s = s.astype(np.float64) if ok else s
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(
                    f"scores must hold real numbers (a learner's standardised predictions); got {scores!r:.60}."
                )
        return self.mean_ + self.scale_ * np.asarray(s, dtype=np.float64)
