"""How a model reads its data: the input specification saved with every model the CLI trains.

A fitted estimator trained through the command line (or a reader-aware API) carries ``input_spec_``, a
plain ``dict`` produced by :meth:`InputSpec.to_dict`; the model file stores it like any other fitted
attribute. ``predict``, ``evaluate``, ``train -i`` and the model server rebuild the reader from it, so a
test file is read exactly as the training file was (same index base, width, hashing, label convention).

>>> spec = InputSpec(format="libsvm", zero_based=False, n_features=123)
>>> InputSpec.from_dict(spec.to_dict()) == spec
True
>>> InputSpec.from_dict({"format": "vw", "bits": 18}).n_features
262144
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

__all__ = ["InputSpec", "FORMATS"]

FORMATS = ("libsvm", "vw", "csv", "parquet")


@dataclass
class InputSpec:
    """The input contract of a model.

    Parameters
    ----------
    format : {"libsvm", "vw", "csv", "parquet"}
        The text or table format of the training data.
    zero_based : bool or None
        LIBSVM only: are feature indices 0-based? Decided once, from the training data or the user.
    n_features : int or None
        Width of the feature space. Under hashing it is ``2 ** bits`` and unseen features cannot be an error.
    bits : int or None
        Hashed formats (VW, CSV, Parquet): number of hash bits.
    label_convention : str or None
        How labels are read: ``"pm1"`` (-1/+1), ``"01"``, ``"multiclass"``, ``"regression"``.
    interactions : list of str
        Namespace pairs and triples crossed by hashing (``"ab"``, ``"abc"``; ``":"`` is any namespace).
    ignore, keep : list of str
        Namespaces (or CSV column groups) dropped / exclusively kept.
    label_column, weight_column : str or None
        Tabular formats: the label and importance-weight columns.
    ignore_columns : list of str
        Tabular formats: columns that are not features.
    scale : {"none", "maxabs", "standard"}
        Streaming scaling applied before the learner.
    options : dict
        Format-specific settings that have no field of their own (JSON-able values only).

    Examples
    --------
    >>> from streamlearn.datasets import InputSpec
    >>> spec = InputSpec(format="vw", bits=10, interactions=["ua"])
    >>> spec.n_features, InputSpec.from_dict(spec.to_dict()) == spec
    (1024, True)
    """

    format: str = "libsvm"
    zero_based: bool | None = None
    n_features: int | None = None
    bits: int | None = None
    label_convention: str | None = None
    interactions: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    keep: list = field(default_factory=list)
    label_column: str | None = None
    weight_column: str | None = None
    ignore_columns: list = field(default_factory=list)
    scale: str = "none"
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"input format must be one of {', '.join(FORMATS)}; got {self.format!r}.")
        if self.bits is not None:
            try:
                ok = 1 <= int(self.bits) <= 32
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(f"bits must be between 1 and 32; got {self.bits!r}.")
            self.n_features = 1 << int(self.bits)

    def to_dict(self) -> dict:
        """A JSON-able ``dict`` (what a model file stores)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> InputSpec:
        """Rebuild from :meth:`to_dict`'s output; an unknown key is an error naming it."""
        if not isinstance(data, dict):
            raise ValueError(f"input specification must be a dict; got {type(data).__name__}.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"input specification has unknown keys {unknown}; this streamlearn knows {sorted(known)}.")
        return cls(**data)


_TEXT = "a string"
_TEXTS = "a list of strings"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _texts(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


#: what each key of a saved specification holds: (test, expected in words)
_FIELDS = {
    "format": (lambda v: v in FORMATS, "one of " + ", ".join(repr(f) for f in FORMATS)),
    "zero_based": (lambda v: v is None or isinstance(v, bool), "true, false or null"),
    "n_features": (lambda v: v is None or _is_int(v) and v >= 1, "an integer >= 1 or null"),
    "bits": (lambda v: v is None or _is_int(v) and 1 <= v <= 32, "an integer from 1 to 32 or null"),
    "label_convention": (
        lambda v: v is None or v in ("pm1", "01", "multiclass", "regression"),
        "'pm1', '01', 'multiclass', 'regression' or null",
    ),
    "interactions": (_texts, _TEXTS),
    "ignore": (_texts, _TEXTS),
    "keep": (_texts, _TEXTS),
    "label_column": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "weight_column": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "ignore_columns": (_texts, _TEXTS),
    "scale": (lambda v: v in ("none", "maxabs", "standard"), "'none', 'maxabs' or 'standard'"),
    "options": (lambda v: isinstance(v, dict), "a mapping"),
}
_KINDS = ("numeric", "text", "boolean")  # a table column's kind (datasets._tabular)
#: the keys of ``options`` that the readers use
_OPTIONS = {
    "columns": (
        lambda v: isinstance(v, dict) and all(x in _KINDS for x in v.values()),
        "a mapping of column names to 'numeric', 'text' or 'boolean'",
    ),
    "namespaces": (
        lambda v: isinstance(v, dict) and all(isinstance(x, str) or _texts(x) for x in v.values()),
        "a mapping to strings or lists of strings",
    ),
    "categorical": (_texts, _TEXTS),
    "constant": (lambda v: isinstance(v, bool), "true or false"),
    # a CSV's field delimiter and decimal mark, when given (one character; not a quote or a line end)
    **dict.fromkeys(
        ("delimiter", "decimal"),
        (
            lambda v: isinstance(v, str) and len(v) == 1 and v not in '"\n\r\0',
            "one character, not a quote or a line end",
        ),
    ),
}


def spec_problem(data):
    """None when ``data`` is a valid saved specification (what :meth:`InputSpec.to_dict` writes; keys may be
    missing, as in files of earlier versions), else ``(key, expected, value)`` for its first wrong entry, ``key``
    a dotted path (``"options.categorical"``) or ``""`` for ``data`` itself; ``expected`` is None for an
    unknown key (the keys are those of :class:`InputSpec`).

    >>> spec_problem(InputSpec(format="csv", bits=8).to_dict()) is None
    True
    >>> spec_problem({"format": "libsvm", "zero_based": "no"})
    ('zero_based', 'true, false or null', 'no')
    """
    if not isinstance(data, dict):
        return "", "a mapping", data
    for key, value in data.items():
        if key not in _FIELDS:
            return key, None, value
        test, expected = _FIELDS[key]
        if not test(value):
            return key, expected, value
    for key, value in (data.get("options") or {}).items():
        if key in _OPTIONS and not _OPTIONS[key][0](value):
            return f"options.{key}", _OPTIONS[key][1], value
    fmt = data.get("format", "libsvm")
    if fmt != "libsvm" and not _is_int(data.get("bits")):  # hashed: the width is 2**bits
        return "bits", f"an integer from 1 to 32 (a {fmt} model hashes its features)", data.get("bits", MISSING)
    return None


MISSING = object()  # the value of a key that is not there
