"""Averaged weights for linear online learners (``average=True``): ``coef_``/``intercept_`` hold the average of
the weights after each example, the updates move ``running_coef_``/``running_intercept_``.

The kernels collect Daume's sum (``(t - 1)`` times each move of example ``t``, O(nnz) per update), so the
average after ``t`` examples is ``running - sum / t``, formed once per chunk. Averaging the iterates of a
mistake-driven learner (Freund & Schapire, "Large margin classification using the perceptron algorithm",
Machine Learning 1999) removes the swing of the last weights on data no hyperplane separates.
"""

from collections.abc import Callable

import numpy as np

from .._mixing import weighted_average
from .._validation import chunk_args


class _AveragingMixin:
    """For estimators with an ``average`` parameter; the others are left as they are."""

    # provided by BaseOnlineLinear (annotations only: the mixin comes first in the MRO)
    _coef_2d: Callable[[], np.ndarray]
    intercept_: np.ndarray

    #: a margin learner's all-zero row (no intercept) changes nothing, unless averaged: one more example with the
    #: same weights moves their average (streamlearn.checks.check_zero_row_is_no_op)
    _zero_row_no_op_unaveraged = False

    @property
    def _zero_row_no_op(self) -> bool:
        return self._zero_row_no_op_unaveraged and not self._averaged()

    def _averaged(self) -> bool:
        return bool(getattr(self, "average", False))

    def _allocate_average(self) -> None:
        """After ``coef_``/``intercept_`` are allocated: the running weights and the sums, all zero."""
        if self._averaged():
            self.running_coef_ = np.zeros_like(self._coef_2d())
            self.running_intercept_ = np.zeros_like(self.intercept_)
            self.average_sum_ = np.zeros_like(self._coef_2d())
            self.average_sum_intercept_ = np.zeros_like(self.intercept_)

    def _average_arrays(self):
        """``(coef, intercept, extra kernel arguments)`` for one kernel call."""
        if self._averaged() != hasattr(self, "running_coef_"):
            raise ValueError(
                f"average={self._averaged()!r} differs from the setting this {type(self).__name__} was trained "
                "with; call fit to start again."
            )
        if not self._averaged():
            # empty sums (no rows: no averaging) rather than none: the kernel then compiles once for both cases
            return self._coef_2d(), self.intercept_, {"avg_sum": np.zeros((0, 0)), "avg_sum_intercept": np.zeros(0)}
        extra = {"avg_sum": self.average_sum_, "avg_sum_intercept": self.average_sum_intercept_}
        return self.running_coef_, self.running_intercept_, extra

    def _finish_average(self, t: int) -> None:
        """After a kernel call: ``coef_``/``intercept_`` = the average of the weights over the ``t`` examples."""
        if self._averaged() and t > 0:
            self._coef_2d()[:] = self.running_coef_ - self.average_sum_ / t
            self.intercept_[:] = self.running_intercept_ - self.average_sum_intercept_ / t

    def _averaged_epoch(self, kernel, X, targets, sw, out, **params):
        """One pass of ``kernel`` (a linear or CW ``*_epoch``, which returns ``(t, bad)``) over the chunk, on the
        running weights with the averaging sums when averaged: the rows, the weights and the example count, with
        the rule's own ``params``; then ``coef_``/``intercept_`` are averaged and a divergence raises."""
        coef, intercept, extra = self._average_arrays()
        t, bad = kernel(
            **chunk_args(X, targets, sw),
            coef=coef,
            intercept=intercept,
            t=self.t_,
            out_scores=out,
            **params,
            **extra,
        )
        self.t_ = int(t)
        self._finish_average(self.t_)
        if bad >= 0:
            self._raise_diverged(bad, self._diverge_hint)

    @staticmethod
    def _mix_average(out, models, weights) -> None:
        """Parameter mixing of averaged models (``out`` has the mixed ``coef_``, ``intercept_`` and ``t_``): the
        running weights are mixed the same way and the sums set so that ``coef_`` stays their average."""
        if hasattr(out, "running_coef_"):
            out.running_coef_ = weighted_average([m.running_coef_ for m in models], weights)
            out.running_intercept_ = weighted_average([m.running_intercept_ for m in models], weights)
            out.average_sum_ = out.t_ * (out.running_coef_ - out._coef_2d())
            out.average_sum_intercept_ = out.t_ * (out.running_intercept_ - out.intercept_)
