"""The learner registry: CLI names -> estimator classes with fixed parameters.

``streamlearn learners`` lists it; ``streamlearn train --learner NAME -p key=value`` builds from it;
``make run`` trains every entry marked ``demo=True`` on a9a. Later capabilities add their entries here.

>>> make_learner("pa1", {"C": "0.01"})
PassiveAggressiveClassifier(C=0.01)
>>> {"ogd", "ogd-hinge", "ogd-regressor"} <= set(LEARNERS)
True
"""

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

__all__ = [
    "DEFAULTS_WHY",
    "LearnerSpec",
    "LEARNERS",
    "make_learner",
    "scaled_learner",
    "learner_parameters",
    "parse_param_value",
    "learner_name_of",
]


@dataclass(frozen=True)
class LearnerSpec:
    """One registry entry.

    >>> from streamlearn.learners import LEARNERS
    >>> spec = LEARNERS["rfd0-son"]
    >>> spec.cls().__name__, spec.fixed["alpha0"]
    ('SketchedOnlineNewton', 0.0)

    ``target`` is ``"module:Class"``; ``fixed`` are parameters the name implies (they may not be
    overridden with ``-p``); ``defaults`` are CLI defaults that differ from the class's (overridable).
    ``scale`` is the streaming scaler the command line puts in front of the learner when ``--scale`` is not
    given (``"maxabs"`` for learners whose steps or regularisation assume features of unit scale; see
    :func:`scaled_learner`); ``target_scale="standard"`` standardises a regressor's target online (each target by
    the targets before it; predictions are mapped back), for the squared-loss regressors whose steps and
    intercept assume targets of unit size. ``batch=True`` marks a batch estimator (``fit``/``fit_stream``, no
    ``partial_fit``): ``streamlearn train`` calls its ``fit_stream`` on the chunk stream, without
    progressive validation.
    """

    name: str
    target: str
    description: str
    task: str = "classification"
    fixed: dict = field(default_factory=dict)
    defaults: dict = field(default_factory=dict)
    demo: bool = True
    batch: bool = False
    scale: str = "none"
    target_scale: str = "none"

    def cls(self) -> type:
        module, _, qualname = self.target.partition(":")
        return getattr(importlib.import_module(module), qualname)


_LM = "streamlearn.linear_model"
_FM = "streamlearn.facto"
_SO = "streamlearn.second_order"
_SAFE = {"safeguard": "maxabs"}
#: squared-loss regressors: the target standardised online (raw targets of size 100 make the steps and the
#: intercept that starts at 0 crawl or diverge: "fail" on 2-3 of the 3 small raw zoo sets without it)
_REG: dict[str, Any] = {"task": "regression", "demo": False, "target_scale": "standard"}
#: their steps for unit-size targets and features in [-1, 1] (one pass on the 4 regression zoo sets:
#: 0.1 against the classes' 0.01 lowers every RMSE, e.g. chick-weights 59.6 -> 40.9 for ogd-regressor)
_REG_ETA = {"eta0": 0.1}
#: logistic-loss SGD learners: eta0 0.5 -> 0.25 keeps them above the majority-class rate on every zoo set
#: (benchmarks/zoo.py; at 0.5 all four were 0.1-0.2 pt under it on bananas), a9a.t 0.846-0.847
_ETA_ZOO = {"eta0": 0.25}
#: Perceptron-type learners: the average of the weights after each example (Freund & Schapire 1999) instead of
#: the last ones, which swing with every mistake on data that no hyperplane separates, behind MaxAbs scaling
_AVG = {"average": True}
_MAXABS = "maxabs"
LEARNERS = {
    s.name: s
    for s in [
        # the selection among learners below (first: the learner to try first on data you do not know)
        LearnerSpec(
            "auto",
            "streamlearn.model_selection:ProgressiveSelectionClassifier",
            "AROW, SCW-I and SCW-II side by side; predicts with the one of best progressive accuracy (recent "
            "examples weigh more)",
        ),
        LearnerSpec(
            "perceptron",
            f"{_LM}:Perceptron",
            "Averaged Perceptron with bias (Rosenblatt 1958; bias via R^2, Novikoff's augmented feature)",
            defaults={"radius": 1.0, **_AVG},
            scale=_MAXABS,
        ),
        LearnerSpec(
            "perceptron-nobias",
            f"{_LM}:Perceptron",
            "Averaged Perceptron without bias",
            fixed={"fit_intercept": False},
            defaults=_AVG,
            scale=_MAXABS,
        ),
        LearnerSpec(
            "pa",
            f"{_LM}:PassiveAggressiveClassifier",
            "Passive-Aggressive (PA), hinge loss, averaged",
            fixed={"variant": "pa"},
            defaults=_AVG,
            scale=_MAXABS,
        ),
        LearnerSpec(
            "pa1",
            f"{_LM}:PassiveAggressiveClassifier",
            "Passive-Aggressive PA-I (step capped at C)",
            fixed={"variant": "pa1"},
            defaults={"C": 0.01},
        ),
        LearnerSpec(
            "pa2",
            f"{_LM}:PassiveAggressiveClassifier",
            "Passive-Aggressive PA-II (step l/(||x||^2+1/2C)), averaged",
            fixed={"variant": "pa2"},
            defaults=_AVG,
            scale=_MAXABS,
        ),
        LearnerSpec(
            "ogd",
            f"{_LM}:OGDClassifier",
            "Online gradient descent, logistic loss, step eta0/sqrt(t)",
            fixed={"loss": "logistic"},
            defaults=_ETA_ZOO,
        ),
        LearnerSpec(
            "ogd-hinge",
            f"{_LM}:OGDClassifier",
            "Online gradient descent, hinge loss, step eta0/sqrt(t)",
            fixed={"loss": "hinge"},
            scale=_MAXABS,
        ),
        LearnerSpec(
            "ogd-squared",
            f"{_LM}:OGDClassifier",
            "Online gradient descent, squared loss on -1/+1 labels",
            fixed={"loss": "squared"},
            defaults={"eta0": 0.05, "normalized": True},
        ),
        LearnerSpec(
            "ogd-regressor",
            f"{_LM}:OGDRegressor",
            "Online gradient descent regression, squared loss",
            defaults=_REG_ETA,
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec(
            "pa-regressor",
            f"{_LM}:PassiveAggressiveRegressor",
            "Passive-Aggressive regression (epsilon-insensitive; variant pa/pa1/pa2)",
            task="regression",
            demo=False,
            scale=_MAXABS,
            defaults={"variant": "pa2", "C": 0.03},
        ),
        # normalized adaptive gradient (Ross, Mineiro & Langford, UAI 2013): scale-free, Vowpal Wabbit's default
        LearnerSpec(
            "nag",
            f"{_LM}:NAGClassifier",
            "Normalized adaptive gradient, Vowpal Wabbit's default update and loss (-p loss=logistic for "
            "probabilities): scale-free, no feature scaling needed",
            defaults={"loss": "modified_huber"},
        ),
        LearnerSpec(
            "nag-hinge", f"{_LM}:NAGClassifier", "Normalized adaptive gradient, hinge loss", fixed={"loss": "hinge"}
        ),
        LearnerSpec(
            "nag-regressor",
            f"{_LM}:NAGRegressor",
            "Normalized adaptive gradient regression, squared loss",
            **_REG,
        ),
        # sparse (L1) online learners, lazy O(nnz) per example (Algorithms §4)
        LearnerSpec(
            "truncation",
            f"{_LM}:SimpleTruncationClassifier",
            "Simple truncation: SGD, every k steps w_i = 0 where |w_i| <= theta (loss logistic/hinge/squared)",
            defaults=_ETA_ZOO,
        ),
        LearnerSpec(
            "tg",
            f"{_LM}:TruncatedGradientClassifier",
            "Truncated gradient (Langford et al.): gravity g, threshold theta, window k",
            defaults=_ETA_ZOO,
        ),
        LearnerSpec(
            "fobos", f"{_LM}:FOBOSClassifier", "L1-FOBOS: SGD step then soft threshold eta_t * l1", defaults=_ETA_ZOO
        ),
        LearnerSpec(
            "rda",
            f"{_LM}:RDAClassifier",
            "L1-RDA (Xiao): regularised dual averaging, l1 and gamma (hinge loss by default)",
            defaults={"loss": "hinge"},
        ),
        LearnerSpec(
            "ftrl",
            f"{_LM}:FTRLProximalClassifier",
            "FTRL-Proximal (McMahan et al.): per-coordinate rates alpha/beta, l1, l2",
        ),
        LearnerSpec(
            "truncation-regressor",
            f"{_LM}:SimpleTruncationRegressor",
            "Simple truncation, squared loss",
            defaults=_REG_ETA,
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec(
            "tg-regressor",
            f"{_LM}:TruncatedGradientRegressor",
            "Truncated gradient, squared loss",
            defaults=_REG_ETA,
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec(
            "fobos-regressor",
            f"{_LM}:FOBOSRegressor",
            "L1-FOBOS, squared loss",
            defaults=_REG_ETA,
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec("rda-regressor", f"{_LM}:RDARegressor", "L1-RDA, squared loss", scale=_MAXABS, **_REG),
        LearnerSpec(
            "ftrl-regressor",
            f"{_LM}:FTRLProximalRegressor",
            "FTRL-Proximal, squared loss",
            defaults={"alpha": 0.3},
            scale=_MAXABS,
            **_REG,
        ),
        # confidence-weighted, Pegasos, SVM solvers (Algorithms §2.4-2.8, 3.1-3.2)
        LearnerSpec(
            "cw",
            f"{_LM}:ConfidenceWeightedClassifier",
            "Confidence-Weighted, full covariance (Crammer et al. NIPS 2008; variance update, -p update=stdev "
            "for the exact one), averaged means; d <= 4096",
            fixed={"covariance": "full"},
            defaults={"update": "variance", "a": 0.1, **_AVG},
            scale=_MAXABS,
        ),
        LearnerSpec(
            "cw-diag",
            f"{_LM}:ConfidenceWeightedClassifier",
            "Confidence-Weighted, diagonal covariance, variance update (Dredze et al. ICML 2008); O(nnz)",
            fixed={"covariance": "diagonal"},
            defaults={"update": "variance", "eta": 0.9, "a": 0.01},
        ),
        LearnerSpec(
            "arow",
            f"{_LM}:AROWClassifier",
            "AROW (Crammer et al. NIPS 2009), full covariance up to 4096 features, diagonal above",
            defaults={"covariance": "auto"},
        ),
        LearnerSpec(
            "scw1",
            f"{_LM}:SoftConfidenceWeightedClassifier",
            "Soft Confidence-Weighted SCW-I (Wang et al. "
            "ICML 2012), full covariance up to 4096 features, diagonal above",
            fixed={"variant": "scw1"},
            defaults={"covariance": "auto", "eta": 0.8},
        ),
        LearnerSpec(
            "scw2",
            f"{_LM}:SoftConfidenceWeightedClassifier",
            "Soft Confidence-Weighted SCW-II, full covariance up to 4096 features, diagonal above",
            fixed={"variant": "scw2"},
            defaults={"covariance": "auto"},
        ),
        LearnerSpec(
            "pegasos",
            f"{_LM}:PegasosClassifier",
            "Pegasos: mini-batch k (batch_size), step 1/(alpha t), projection on the 1/sqrt(alpha) ball",
            defaults={"alpha": 0.01},
            scale=_MAXABS,
        ),
        LearnerSpec(
            "dcd-svm",
            f"{_LM}:DualCoordinateDescentSVC",
            "Linear SVM by dual coordinate descent (Hsieh et al. 2008; LIBLINEAR), batch, in memory",
            defaults={"tol": 0.1},
            demo=False,
            batch=True,
        ),
        LearnerSpec(
            "bm-svm",
            f"{_LM}:BlockMinimizationSVC",
            "Linear SVM by block minimization over compressed "
            "on-disk blocks (Yu et al. 2010): data larger than memory (--block-mb)",
            demo=False,
            batch=True,
        ),
        # factorization machines (Algorithms §7)
        LearnerSpec(
            "fm",
            f"{_FM}:FMClassifier",
            "Factorization machine (Rendle), logistic loss, SGD/AdaGrad, O(k nnz)",
            scale=_MAXABS,
        ),
        LearnerSpec(
            "fm-regressor",
            f"{_FM}:FMRegressor",
            "Factorization machine, squared loss, SGD/AdaGrad",
            defaults=_REG_ETA,
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec(
            "ccfm-ogd",
            f"{_FM}:CCFMOnlineGradientClassifier",
            "Compact convexified FM by projected OGD (eigendecomposition per projection; dense (d+1)^2)",
            demo=False,
            scale=_MAXABS,
        ),
        LearnerSpec(
            "ccfm-ogd-regressor",
            f"{_FM}:CCFMOnlineGradientRegressor",
            "Compact convexified FM by projected OGD, squared loss",
            scale=_MAXABS,
            **_REG,
        ),
        LearnerSpec(
            "occfm",
            f"{_FM}:OCCFMClassifier",
            "OCCFM: projection-free online conditional gradient on the convexified FM (exact up to 2000 "
            "features, low-rank above; -p mode=exact|scalable)",
            defaults={"eta": 1.0},
            demo=False,
            scale=_MAXABS,
        ),
        LearnerSpec("occfm-regressor", f"{_FM}:OCCFMRegressor", "OCCFM, squared loss", scale=_MAXABS, **_REG),
        # second order (Luo et al., JMLR 2019): squared loss on -1/+1 labels. CLI defaults: the scale safeguard
        # (running max-abs column scaling + a constant feature, see SketchedOnlineNewton's safeguard) and, for the
        # sketches with a fixed regulariser, alpha0=30, and AdaGrad's eta=0.2 (chosen on the zoo benchmark,
        # benchmarks/zoo.py); -p safeguard=paper restores the published algorithm
        LearnerSpec(
            "adagrad",
            f"{_SO}:AdaGrad",
            "Diagonal AdaGrad with slab projection (RFD paper baseline)",
            defaults={**_SAFE, "eta": 0.2},
            demo=True,
        ),
        LearnerSpec(
            "full-on",
            f"{_SO}:OnlineNewtonStep",
            "Full-matrix online Newton step, O(d^2) (d <= 4096)",
            defaults=_SAFE,
            demo=True,
        ),
        *[
            LearnerSpec(
                f"{sk}-son",
                f"{_SO}:SketchedOnlineNewton",
                f"Sketched online Newton step over {label}",
                fixed={"sketch": sk},
                defaults={**_SAFE, **({} if sk == "rfd" else {"alpha0": 30.0})},
                demo=True,
            )
            for sk, label in [
                ("fd", "frequent directions"),
                ("pfd", "parameterized FD (beta=0.2)"),
                ("rp", "a random projection"),
                ("oja", "Oja's sketch"),
                ("rfd", "robust frequent directions"),
            ]
        ],
        # rfd0-son projects onto the slab of the example just learned (Alg. 6 / App. A, the paper's experiments):
        # with Alg. 3's next slab its pseudo-inverse steps are unbounded on sparse text (README, "Which slab")
        LearnerSpec(
            "rfd0-son",
            f"{_SO}:SketchedOnlineNewton",
            "Sketched online Newton step over RFD, alpha0=0 (hyperparameter-free RFD0-SON; slab=current)",
            fixed={"sketch": "rfd", "alpha0": 0.0},
            defaults={"slab": "current", **_SAFE},
            demo=True,
        ),
    ]
}


#: Why each learner's command-line defaults differ from its class's (one line each; ``streamlearn learners`` and
#: the docs' learner table show them). Measured one pass on the data-set zoo (benchmarks/zoo.py) and a9a.
DEFAULTS_WHY = {
    "perceptron": "averaged weights: the last ones swing with every mistake on data no hyperplane separates; "
    "MaxAbs scaling and R = 1 move the bias like the weight of a feature in [-1, 1] (scikit-learn's dense rule)",
    "perceptron-nobias": "averaged weights (a9a.t 0.79 -> 0.85) behind MaxAbs scaling",
    "pa": "averaged weights (a9a.t 0.75 -> 0.85): PA's uncapped steps swing on noisy data; MaxAbs scaling",
    "pa1": "a small step cap keeps the last weights steady on noisy data (a9a.t 0.846)",
    "pa2": "averaged weights behind MaxAbs scaling; averaged, the class's C = 1 does as well as a small C",
    "ogd": "keeps the logistic SGD learners above the majority-class rate on every zoo set (at 0.5 under it on bananas)",
    "ogd-hinge": "MaxAbs scaling: eta0 assumes unit-scale features (raw, one large column swamps the steps)",
    "nag": "the modified Huber loss (the squared loss of the score clipped to [-1, 1]), what Vowpal Wabbit's "
    "default squared loss on -1/+1 labels is: one-pass accuracy as VW's on the zoo (phishing 88.5 % against "
    "85.1 % with the logistic loss; iris 97.8 % against 80.0 %)",
    "ogd-squared": "squared loss diverges on raw columns (4 zoo sets) without normalized, smaller steps",
    "truncation": "as ogd",
    "tg": "as ogd",
    "fobos": "as ogd",
    "rda": "with the logistic loss L1-RDA ends under the majority-class rate on 2 raw zoo sets",
    "cw": "averaged means (a9a.t 0.80 -> 0.85); a smaller initial variance a suits the [-1, 1] features of "
    "MaxAbs scaling (cw-diag: 0.01)",
    **{
        name: "the full covariance up to 4096 features and its diagonal above (O(nnz)), so that wide and hashed "
        "data train instead of being refused (farm-ads: 90.7 % with scw1)"
        for name in ("arow", "scw2")
    },
    "scw1": "the full covariance up to 4096 features and its diagonal above (O(nnz)), so that wide and hashed data "
    "train instead of being refused (farm-ads: 90.7 %); confidence eta = 0.8, where the class's 0.75 fell under "
    "Vowpal Wabbit's defaults in 8 of 50 zoo runs (5 shuffles) and under the majority-class rate in 2, against 5 "
    "and 0",
    "cw-diag": "the exact update is erratic with a diagonal covariance, the variance update stable (a9a)",
    "pegasos": "MaxAbs scaling: the 1/(alpha t) steps and the 1/sqrt(alpha) ball assume unit-scale features; "
    "alpha = 0.01 falls back on the bias where no hyperplane helps",
    "dcd-svm": "LIBLINEAR's stopping tolerance for the dual problem",
    "fm": "MaxAbs scaling: init_stdev and eta0 assume unit-scale features (raw, pairwise products blow up)",
    "ccfm-ogd": "MaxAbs scaling: the nuclear-norm ball delta bounds x x^T only for features in [-1, 1]",
    "occfm": "features in [-1, 1] as ccfm-ogd, with ccfm-ogd's base step",
    "adagrad": "the scale safeguard (running max-abs scaling + a constant feature; -p safeguard=paper: the "
    "published algorithm) and eta = 0.2",
    "full-on": "the scale safeguard, as adagrad",
    **{
        f"{sk}-son": "the scale safeguard, as adagrad, and alpha0 = 30 (at 1 these sketches scored 0.49-0.69 on a9a.t)"
        for sk in ("fd", "pfd", "rp", "oja")
    },
    "rfd-son": "the scale safeguard, as adagrad",
    **{
        f"{name}-regressor": "the target standardised online, features in [-1, 1] (MaxAbs) and eta0 = 0.1 for "
        "them: raw targets in the hundreds made the steps and the intercept crawl or diverge"
        for name in ("ogd", "truncation", "tg", "fobos", "fm")
    },
    "ftrl-regressor": "the target standardised online, MaxAbs scaling and alpha = 0.3 for unit-size targets",
    **{
        f"{name}-regressor": "the target standardised online and MaxAbs scaling: raw targets in the hundreds "
        "made the steps and the intercept crawl or diverge"
        for name in ("rda", "ccfm-ogd", "occfm")
    },
    "pa-regressor": "MaxAbs scaling (raw zoo columns: trump-approval RMSE 2.80 -> 1.01, chick-weights 98.5 -> 36.8), "
    "and PA-II with C=0.03: PA-I with C=1 took steps too large for noisy targets (zoo RMSE movielens-100k "
    "1.29 -> 0.98, under the training mean's 1.13; diabetes 68.4 -> 65.0)",
    "nag-regressor": "the target standardised online (the steps are scale-free in the features, not the target)",
    "rfd0-son": "the scale safeguard, and the slab of the example just learned (the paper's experiments)",
}


def parse_param_value(text: str, default: Any = None) -> Any:
    """Parse ``value`` of ``-p key=value``: JSON literals (numbers, true/false/null), else a string.

    >>> parse_param_value("1e-3"), parse_param_value("true"), parse_param_value("none"), parse_param_value("fd")
    (0.001, True, None, 'fd')
    >>> parse_param_value("3", default=1.0), parse_param_value("inf")
    (3.0, inf)
    """
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("inf", "+inf", "infinity", "-inf", "-infinity"):
        return float(low)
    if low in ("true", "false"):
        return low == "true"
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def learner_parameters(name: str) -> dict[str, Any]:
    """``{parameter: default}`` the user may set for learner ``name`` (fixed ones excluded).

    Read from the table in :mod:`streamlearn._learner_signatures` (so listing imports no estimator); a
    class missing from it is inspected.

    Examples
    --------
    >>> from streamlearn.learners import learner_parameters
    >>> learner_parameters("pa1")["C"]    # the CLI's default, not the class's
    0.01
    """
    from ._learner_signatures import SIGNATURES

    spec = _spec(name)
    if spec.target in SIGNATURES:
        params = dict(cast(Mapping[str, Any], SIGNATURES[spec.target]))
    else:
        import inspect

        sig = inspect.signature(spec.cls().__init__)
        params = {p.name: p.default for p in sig.parameters.values() if p.name != "self"}
    params.update(spec.defaults)
    return {k: v for k, v in params.items() if k not in spec.fixed}


def make_learner(name: str, params: Mapping[str, Any] | None = None) -> Any:
    """Build learner ``name`` with ``params`` (values may be strings from the command line), checked against
    the learner's parameter constraints now (a ValueError naming the parameter), not at its first update: a
    command reading a stream would otherwise wait for its first chunk to report a bad ``-p`` value.

    Examples
    --------
    >>> from streamlearn.learners import make_learner
    >>> make_learner("ftrl", {"l1": "0.5"}).l1
    0.5
    """
    spec = _spec(name)
    allowed = learner_parameters(name)
    kwargs = dict(spec.defaults)
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of parameter names to values, or None; got {type(params).__name__}.")
    for key, value in (params or {}).items():
        if key in spec.fixed:
            raise ValueError(
                f"Parameter {key!r} is fixed to {spec.fixed[key]!r} by learner {name!r}; "
                "pick another learner name to change it."
            )
        if key not in allowed:
            raise ValueError(
                f"Learner {name!r} has no parameter {key!r}; its parameters are: {', '.join(sorted(allowed))}."
            )
        kwargs[key] = parse_param_value(value, allowed[key]) if isinstance(value, str) else value
    kwargs.update(spec.fixed)
    learner = spec.cls()(**kwargs)
    if hasattr(learner, "_parameter_constraints"):
        from ._validation import validate_params

        validate_params(learner)
    return learner


def scaled_learner(name: str, learner: Any, scale: str | None = None, target_scale: str | None = None) -> Any:
    """``learner`` behind the streaming scaler ``scale`` (``"maxabs"``/``"standard"``) and, for a regressor,
    the target scaler ``target_scale`` (``"standard"``), in a :class:`~streamlearn.preprocessing.StreamPipeline`;
    itself when both are ``"none"``. None: learner ``name``'s default (its ``LearnerSpec.scale`` /
    ``target_scale``), what the command line does without ``--scale`` / ``--scale-target``.

    >>> type(scaled_learner("pegasos", make_learner("pegasos"))).__name__
    'StreamPipeline'
    >>> scaled_learner("ftrl", make_learner("ftrl"), "none")
    FTRLProximalClassifier()
    """
    scale = _spec(name).scale if scale is None else scale
    target_scale = _spec(name).target_scale if target_scale is None else target_scale
    if target_scale not in ("none", "standard"):
        raise ValueError(f"Unknown target scaler {target_scale!r}; expected none or standard.")
    if scale == "none" and target_scale == "none":
        return learner
    from .preprocessing import TargetStandardScaler, make_scaler, make_stream_pipeline

    target = TargetStandardScaler() if target_scale == "standard" else None
    return make_stream_pipeline(make_scaler(scale), learner, target)


def _spec(name):
    try:
        return LEARNERS[name]
    except KeyError:
        raise ValueError(
            f"Unknown learner {name!r}; run 'streamlearn learners' for the list ({', '.join(sorted(LEARNERS))})."
        ) from None


def learner_name_of(model: Any) -> str | None:
    """The registry name of a model: the entry of its class whose fixed parameters it has (the one fixing the
    most parameters when several match), or None. A :class:`~streamlearn.preprocessing.StreamPipeline` (a
    learner behind a streaming scaler) is named by its learner.

    >>> learner_name_of(make_learner("pa2")), learner_name_of(scaled_learner("pa2", make_learner("pa2")))
    ('pa2', 'pa2')
    """
    from .preprocessing import StreamPipeline

    if isinstance(model, StreamPipeline):
        model = getattr(model, "learner_", model.learner)
    if not callable(getattr(model, "get_params", None)):  # not an estimator: no entry
        return None
    params = model.get_params(deep=False)
    best = None
    for name, spec in LEARNERS.items():
        if spec.cls() is not type(model) or not all(params.get(k) == v for k, v in spec.fixed.items()):
            continue
        if best is None or len(spec.fixed) > len(LEARNERS[best].fixed):
            best = name
    return best
