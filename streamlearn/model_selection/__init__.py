"""Choosing among online learners while they learn: :class:`ProgressiveSelectionClassifier` trains several
side by side and predicts with the one whose progressive (test-then-train) accuracy is best so far."""

from ._progressive import DEFAULT_LEARNERS, ProgressiveSelectionClassifier

__all__ = ["DEFAULT_LEARNERS", "ProgressiveSelectionClassifier"]
