"""The progressive result and table report the model's non-zero weights."""

from streamlearn.datasets import load_a9a
from streamlearn.evaluation import progressive_validation
from streamlearn.learners import make_learner


def test_nnz_weights_in_result_and_table():
    X, y, _, _ = load_a9a()
    learner = make_learner("ftrl", {"l1": 5.0})
    result = progressive_validation(learner, (X[:3000], y[:3000]), classes=[-1, 1])
    assert result.nnz_weights == learner.nnz_weights < 124
    assert f"non-zero weights = {learner.nnz_weights}" in result.format_table()
    assert result.to_dict()["nnz_weights"] == learner.nnz_weights
