"""Streaming preprocessing: online scalers and the pipeline that puts one in front of a learner.

* :class:`MaxAbsScaler` and :class:`StandardScaler` learn their statistics online (``partial_fit``); in a
  stream (``partial_fit_transform``, and so in a :class:`StreamPipeline`) each row is transformed with the
  statistics of the rows *before* it, never its own or later ones.
* :class:`TargetStandardScaler` standardises a regression target online, each target by the statistics of the
  targets before it.
* :func:`make_stream_pipeline` / :class:`StreamPipeline`: scaler + learner with the learner's API
  (``partial_fit``, ``partial_fit_scores``, ``predict``, ``decision_function``, ``predict_proba`` when the
  learner has it, ``save``/``load``).
"""

from .._lazy import lazy_exports

_WHERE = {
    "._scalers": ["MaxAbsScaler", "StandardScaler"],
    "._pipeline": ["StreamPipeline", "make_stream_pipeline", "make_scaler", "SCALERS"],
    "._hashing": ["DictHasher"],
    "._target": ["TargetStandardScaler"],
}
__getattr__, __dir__, _ = lazy_exports(__name__, globals(), _WHERE)  # __all__: the order of the API reference

__all__ = [
    "SCALERS",
    "DictHasher",
    "MaxAbsScaler",
    "StandardScaler",
    "StreamPipeline",
    "TargetStandardScaler",
    "make_scaler",
    "make_stream_pipeline",
]
