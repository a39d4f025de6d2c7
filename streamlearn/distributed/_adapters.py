"""Which learners iterative parameter mixing can combine: those whose class defines the mixing hook.

A mixable estimator class defines ``mix(start, models, weights)`` (a class method returning the mixed
model of one round), ``finish_local_passes()`` (run on each partition's model before the models are mixed) and
``check_mixable()`` (raises TypeError for settings that cannot be mixed), plus a one-line
``mixing_description`` of what is averaged. This module only looks the hook up; the estimators own
their state.
"""

__all__ = ["mixer_for", "supported_learners"]


def _mixable(cls):
    return isinstance(cls, type) and callable(getattr(cls, "mix", None)) and hasattr(cls, "finish_local_passes")


def supported_learners() -> list[str]:
    """Names of the public learners :func:`fit_mixing` can average, sorted.

    >>> from streamlearn.distributed import supported_learners
    >>> "FTRLProximalClassifier" in supported_learners()
    True
    """
    from .. import linear_model, second_order

    names = []
    for mod in (linear_model, second_order):
        for name in mod.__all__:
            if _mixable(getattr(mod, name)):
                names.append(name)
    return sorted(names)


def mixer_for(learner):
    """The class whose ``mix`` combines models like ``learner``; raises TypeError when it cannot be mixed."""
    cls = type(learner)
    if not _mixable(cls):
        raise TypeError(
            f"fit_mixing cannot average a {cls.__name__}: supported learners are {', '.join(supported_learners())}."
        )
    learner.check_mixable()
    return cls
