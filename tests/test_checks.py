"""Each online check in streamlearn.checks fails on an estimator broken in the way it guards against."""

import numpy as np
import pytest
import scipy.sparse as sp

from streamlearn import checks
from streamlearn._validation import Interval
from streamlearn.linear_model import PassiveAggressiveClassifier, TruncatedGradientClassifier


class Reallocates(PassiveAggressiveClassifier):
    def _kernel_pass(self, X, targets, sw, out):
        self.coef_ = self.coef_.copy()
        super()._kernel_pass(X, targets, sw, out)


class PostUpdateScores(PassiveAggressiveClassifier):
    def partial_fit_scores(self, X, y, classes=None, sample_weight=None):
        super().partial_fit_scores(X, y, classes=classes, sample_weight=sample_weight)
        return self.decision_function(X)


class ChunkDependent(PassiveAggressiveClassifier):
    def _C(self):
        return float(self.C) / (1 + getattr(self, "_calls", 0))

    def _kernel_pass(self, X, targets, sw, out):
        self._calls = getattr(self, "_calls", 0) + 1
        super()._kernel_pass(X, targets, sw, out)


class DenseDiffers(PassiveAggressiveClassifier):
    def partial_fit_scores(self, X, y, classes=None, sample_weight=None):
        if isinstance(X, np.ndarray):
            X = X * 1.5
        return super().partial_fit_scores(X, y, classes=classes, sample_weight=sample_weight)


class ForgetsFeatureCount(PassiveAggressiveClassifier):
    def _check_X_y(self, X, y, *, reset):
        X, y = super()._check_X_y(X, y, reset=True)
        if hasattr(self, "coef_") and X.shape[1] < self.coef_.shape[1]:
            X.resize((X.shape[0], self.coef_.shape[1]))
        return X, y


class MovesOnZeroRows(PassiveAggressiveClassifier):
    def _kernel_pass(self, X, targets, sw, out):
        super()._kernel_pass(X, targets, sw, out)
        self.coef_ *= 0.999


class IgnoresRandomState(PassiveAggressiveClassifier):
    def fit(self, X, y, sample_weight=None):
        self.random_state = None
        return super().fit(X, y, sample_weight)


class FitDiffersFromPartialFit(PassiveAggressiveClassifier):
    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight)
        self.coef_ += 1e-3
        return self


class LearnsFromNaN(PassiveAggressiveClassifier):
    def _check_X_y(self, X, y, *, reset):
        if sp.issparse(X):
            X = sp.csr_matrix(X, copy=True)
            X.data[~np.isfinite(X.data)] = 0.0
        else:
            X = np.nan_to_num(np.asarray(X, dtype=float), posinf=0.0, neginf=0.0)
        return super()._check_X_y(X, y, reset=reset)


class ScoresWithoutCheck(PassiveAggressiveClassifier):
    def _decision_function(self, X):
        return np.asarray(sp.csr_matrix(X) @ self.coef_.T + self.intercept_)[:, 0]


class DividesByZeroOnHugeValues(PassiveAggressiveClassifier):
    def _kernel_pass(self, X, targets, sw, out):
        super()._kernel_pass(X, targets, sw, out)
        if X.nnz and np.max(np.abs(X.data)) > 1e60:
            self.intercept_ /= 0  # numpy: a warning and an infinite intercept, as an unguarded step would


class UnknownLoss(PassiveAggressiveClassifier):
    _progressive_loss = "hinge-ish"


class _OpenEndTakesInfinity(Interval):
    """(0.0, inf) in its message, but every positive float, inf included, passes."""

    def is_satisfied_by(self, value):
        return isinstance(value, float) and value > 0


class TakesInfiniteC(PassiveAggressiveClassifier):
    _parameter_constraints = {
        **PassiveAggressiveClassifier._parameter_constraints,
        "C": [_OpenEndTakesInfinity(float, 0, None, closed="neither")],
    }


class RefusesInfiniteTheta(TruncatedGradientClassifier):
    """theta's range says [0.0, inf], but the value is refused at fit."""

    def fit(self, X, y, sample_weight=None):
        if self.theta == float("inf"):
            raise ValueError("theta must be finite")
        return super().fit(X, y, sample_weight)


@pytest.mark.parametrize(
    "broken,check",
    [
        (Reallocates(), checks.check_state_not_reallocated),
        (PostUpdateScores(), checks.check_scores_are_pre_update),
        (ChunkDependent(), checks.check_chunking_invariance),
        (DenseDiffers(), checks.check_dense_equals_sparse),
        (ForgetsFeatureCount(), checks.check_feature_count_fixed),
        (MovesOnZeroRows(), checks.check_zero_row_is_no_op),
        (IgnoresRandomState(), checks.check_random_state_determinism),
        (FitDiffersFromPartialFit(), checks.check_partial_fit_equals_fit),
        (UnknownLoss(), checks.check_progressive_loss_is_known),
        (TakesInfiniteC(), checks.check_non_finite_params_refused),
        (RefusesInfiniteTheta(), checks.check_non_finite_params_refused),
        (LearnsFromNaN(), checks.check_bad_input_values_refused),
        (ScoresWithoutCheck(), checks.check_overflowing_scores_refused),
        (DividesByZeroOnHugeValues(), checks.check_values_under_the_bound_learnt_or_diverge),
    ],
    ids=lambda v: type(v).__name__ if not callable(v) or isinstance(v, PassiveAggressiveClassifier) else v.__name__,
)
def test_check_catches_its_breakage(broken, check):
    check(PassiveAggressiveClassifier())  # the sound estimator passes
    with pytest.raises(AssertionError):
        check(broken)


def test_save_load_check_catches_a_lost_attribute(monkeypatch):
    import streamlearn.persist as persist

    real_load = persist.load

    def lossy_load(path):
        obj = real_load(path)
        obj.t_ = 0
        obj.intercept_ = obj.intercept_ + 1.0
        return obj

    monkeypatch.setattr(persist, "load", lossy_load)
    with pytest.raises(AssertionError):
        checks.check_save_load_round_trip(PassiveAggressiveClassifier())
