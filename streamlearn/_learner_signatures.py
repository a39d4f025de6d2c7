"""Constructor parameters and defaults of every registered learner class, for listing without imports.

``streamlearn learners`` (and :func:`streamlearn.learners.learner_parameters`) read this table instead of
importing each estimator's module, which would import numba, scipy and scikit-learn (about a second) just to
print a list. ``tests/test_learner_signatures.py`` checks that it equals the classes' real signatures;
after changing a learner's constructor, regenerate it with ``python -m streamlearn._learner_signatures``.
"""

#: ``"module:Class"`` (a :class:`streamlearn.learners.LearnerSpec` target) -> ``{parameter: default}``
# fmt: off
SIGNATURES = {
    "streamlearn.facto:CCFMOnlineGradientClassifier": {
        "loss": "logistic", "delta": 10.0, "eta0": 1.0, "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.facto:CCFMOnlineGradientRegressor": {
        "loss": "squared", "delta": 10.0, "eta0": 0.1, "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.facto:FMClassifier": {
        "loss": "logistic", "n_factors": 10, "optimizer": "adagrad", "learning_rate": "constant", "eta0": 0.1,
        "l2_weight": 0.0, "l2_latent": 0.0, "init_stdev": 0.1, "fit_intercept": True, "max_iter": 5,
        "shuffle": True, "random_state": 0,
    },
    "streamlearn.facto:FMRegressor": {
        "loss": "squared", "n_factors": 10, "optimizer": "adagrad", "learning_rate": "constant", "eta0": 0.05,
        "l2_weight": 0.0, "l2_latent": 0.0, "init_stdev": 0.1, "fit_intercept": True, "max_iter": 5,
        "shuffle": True, "random_state": 0,
    },
    "streamlearn.facto:OCCFMClassifier": {
        "loss": "logistic", "delta": 10.0, "eta": 0.01, "step_schedule": "invsqrt", "mode": "auto", "rank": 20,
        "ell": 20, "lmo": "lanczos", "lmo_tol": 1e-06, "lmo_max_iter": 200, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.facto:OCCFMRegressor": {
        "loss": "squared", "delta": 10.0, "eta": 0.01, "step_schedule": "invsqrt", "mode": "auto", "rank": 20,
        "ell": 20, "lmo": "lanczos", "lmo_tol": 1e-06, "lmo_max_iter": 200, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:AROWClassifier": {
        "r": 1.0, "covariance": "full", "a": 1.0, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:BlockMinimizationSVC": {
        "C": 1.0, "loss": "hinge", "tol": 0.1, "max_iter": 50, "inner_max_iter": 3, "block_mb": 32.0,
        "fit_intercept": True, "intercept_scaling": 1.0, "shrinking": True, "cache_dir": None, "random_state": None,
    },
    "streamlearn.linear_model:ConfidenceWeightedClassifier": {
        "eta": 0.8, "covariance": "full", "update": "stdev", "a": 1.0, "average": False, "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:DualCoordinateDescentSVC": {
        "C": 1.0, "loss": "hinge", "tol": 0.0001, "max_iter": 1000, "fit_intercept": True, "intercept_scaling": 1.0,
        "shrinking": True, "random_state": None,
    },
    "streamlearn.linear_model:FOBOSClassifier": {
        "loss": "logistic", "l1": 0.0001, "eta0": 0.5, "learning_rate": "invsqrt", "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:FOBOSRegressor": {
        "loss": "squared", "l1": 0.0001, "eta0": 0.01, "learning_rate": "invsqrt", "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:FTRLProximalClassifier": {
        "loss": "logistic", "alpha": 0.1, "beta": 1.0, "l1": 1.0, "l2": 1.0, "fit_intercept": True, "max_iter": 5,
        "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:FTRLProximalRegressor": {
        "loss": "squared", "alpha": 0.1, "beta": 1.0, "l1": 1.0, "l2": 1.0, "fit_intercept": True, "max_iter": 5,
        "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:NAGClassifier": {
        "loss": "logistic", "eta0": 0.5, "invariant": True, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:NAGRegressor": {
        "eta0": 0.5, "invariant": True, "fit_intercept": True, "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:OGDClassifier": {
        "loss": "logistic", "eta0": 0.5, "normalized": False, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:OGDRegressor": {
        "loss": "squared", "epsilon": 0.1, "eta0": 0.01, "normalized": False, "fit_intercept": True, "max_iter": 5,
        "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:PassiveAggressiveClassifier": {
        "C": 1.0, "variant": "pa1", "average": False, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:PassiveAggressiveRegressor": {
        "C": 1.0, "epsilon": 0.1, "variant": "pa1", "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:PegasosClassifier": {
        "alpha": 0.0001, "batch_size": 1, "projection": True, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:Perceptron": {
        "eta0": 1.0, "fit_intercept": True, "radius": None, "average": False, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:RDAClassifier": {
        "loss": "logistic", "l1": 0.0001, "gamma": 1.0, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:RDARegressor": {
        "loss": "squared", "l1": 0.0001, "gamma": 10.0, "fit_intercept": True, "max_iter": 5, "shuffle": True,
        "random_state": None,
    },
    "streamlearn.linear_model:SimpleTruncationClassifier": {
        "loss": "logistic", "theta": 0.01, "k": 10, "eta0": 0.5, "learning_rate": "invsqrt", "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:SimpleTruncationRegressor": {
        "loss": "squared", "theta": 0.01, "k": 10, "eta0": 0.01, "learning_rate": "invsqrt", "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:SoftConfidenceWeightedClassifier": {
        "C": 1.0, "eta": 0.75, "variant": "scw1", "covariance": "full", "a": 1.0, "fit_intercept": True,
        "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:TruncatedGradientClassifier": {
        "loss": "logistic", "gravity": 0.0001, "theta": float("inf"), "k": 1, "eta0": 0.5,
        "learning_rate": "invsqrt", "fit_intercept": True, "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.linear_model:TruncatedGradientRegressor": {
        "loss": "squared", "gravity": 0.0001, "theta": float("inf"), "k": 1, "eta0": 0.01,
        "learning_rate": "invsqrt", "fit_intercept": True, "max_iter": 5, "shuffle": True, "random_state": None,
    },
    "streamlearn.model_selection:ProgressiveSelectionClassifier": {
        "learners": "arow,scw1,scw2", "weighting": "linear",
    },
    "streamlearn.second_order:AdaGrad": {
        "alpha0": 1.0, "eta": 1.0, "C": 1.0, "loss": "squared", "project": True, "slab": "next",
        "safeguard": "paper", "max_iter": 1, "shuffle": True, "random_state": None,
    },
    "streamlearn.second_order:OnlineNewtonStep": {
        "alpha0": 1.0, "eta": 1.0, "mu": None, "C": 1.0, "loss": "squared", "slab": "next", "safeguard": "paper",
        "max_iter": 1, "shuffle": True, "random_state": None,
    },
    "streamlearn.second_order:SketchedOnlineNewton": {
        "sketch": "rfd", "ell": 10, "alpha0": 1.0, "eta": 1.0, "mu": None, "C": 1.0, "loss": "squared", "beta": 0.2,
        "oja_learning_rate": 2.0, "slab": "next", "safeguard": "paper", "max_iter": 1, "shuffle": True,
        "random_state": None,
    },
}
# fmt: on


def live_signatures():
    """The table computed from the classes themselves (imports every learner module).

    >>> live_signatures()["streamlearn.linear_model:Perceptron"]["fit_intercept"]
    True
    """
    import inspect

    from .learners import LEARNERS

    out = {}
    for spec in sorted(LEARNERS.values(), key=lambda s: s.target):
        if spec.target not in out:
            sig = inspect.signature(spec.cls().__init__)
            out[spec.target] = {p.name: p.default for p in sig.parameters.values() if p.name != "self"}
    return out


def _literal(value):
    """``value`` as Python source, strings in double quotes."""
    if isinstance(value, str) and '"' not in value and "\\" not in value:
        return f'"{value}"'
    if isinstance(value, float) and not abs(value) < float("inf"):
        return f'float("{value}")'  # inf, nan
    return repr(value)


def _write():
    with open(__file__) as f:
        text = f.read()
    head, rest = text.split("SIGNATURES = {", 1)
    tail = rest[rest.index("\n\n\ndef live_signatures") :]
    lines = ["{"]
    for target, params in live_signatures().items():
        lines.append(f"    {_literal(target)}: {{")
        row = "       "
        for key, value in params.items():
            item = f" {_literal(key)}: {_literal(value)},"
            if len(row) + len(item) > 116:
                lines.append(row)
                row = "       "
            row += item
        lines += [row, "    },"]
    # one row per few parameters (the formatter would give each its own line)
    table = "\n".join(lines + ["}", "# fmt: on"])
    with open(__file__, "w") as f:
        f.write(f"{head}SIGNATURES = {table}{tail}")


if __name__ == "__main__":
    _write()
