"""Safe, versioned model files: arrays + JSON metadata with checksums. Nothing is unpickled on load.

A model file is a zip archive holding ``meta.json`` and one ``.npy`` entry per array (written and read
with ``allow_pickle=False``). ``meta.json`` records the file format and its version, the streamlearn
version that wrote it, the estimator's class (which must be a registered streamlearn class: nothing
else is ever instantiated), its constructor parameters, its scalar fitted attributes and, per array,
dtype, shape and SHA-256. Loading verifies all of it and names what is wrong::

    >>> import numpy as np, tempfile, os
    >>> from streamlearn.linear_model import PassiveAggressiveClassifier
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([0, 1])
    >>> clf = PassiveAggressiveClassifier().fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "pa.slm")
    >>> clf.save(path)
    >>> same = PassiveAggressiveClassifier.load(path)
    >>> bool(np.array_equal(same.coef_, clf.coef_))
    True
"""

import contextlib
import hashlib
import importlib
import io
import json
import lzma
import numbers
import os
import struct
import zipfile
import zlib
from typing import Any, BinaryIO, Self

import numpy as np

from ._errors import ModelFileError
from ._version import __version__

__all__ = ["save", "load", "PersistMixin", "ModelFileError", "FORMAT", "FORMAT_VERSION"]

FORMAT = "streamlearn-model"
FORMAT_VERSION = 1
_STORE_ABOVE = 8 << 20  # bytes
_PROBE_ABOVE = 256 << 10  # bytes: arrays above this size are deflated only if a sample of them shrinks
_DEFLATE_AT_MOST = 0.5  # ... to this fraction of its size or less
_REGISTRY: dict[str, type] = {}


def _registered_class(name):
    """The class saved under public path ``name``, or None.

    Classes register when their module is imported and subpackages are imported on first access
    (:mod:`streamlearn._lazy`), so on a miss the public module named in the path is imported once: loading
    works whatever has been imported so far. Only ``streamlearn.*`` modules are ever imported.
    """
    if not isinstance(name, str):
        return None
    if name not in _REGISTRY and name.startswith("streamlearn."):
        module, _, attr = name.rpartition(".")
        with contextlib.suppress(ImportError):  # the attribute access matters: names are imported on first access
            getattr(importlib.import_module(module), attr, None)  # defining the class registers it
    return _REGISTRY.get(name)


class PersistMixin:
    """Adds ``save(path)`` and ``load(path)`` and registers the class as loadable.

    Examples
    --------
    >>> from streamlearn.linear_model import Perceptron
    >>> from streamlearn.persist import PersistMixin
    >>> issubclass(Perceptron, PersistMixin)
    True
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("streamlearn.") and not cls.__name__.startswith("_"):
            _REGISTRY[_public_name(cls)] = cls

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this object to ``path`` in the streamlearn model format (see :mod:`streamlearn.persist`)."""
        save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read an object written by ``save``; it must be an instance of this class."""
        obj = load(path)
        if not isinstance(obj, cls):
            raise ModelFileError(f"{path}: holds a {type(obj).__name__}, not a {cls.__name__}.")
        return obj


def _public_name(cls):
    module = cls.__module__
    parts = module.split(".")
    # streamlearn.linear_model._pa -> streamlearn.linear_model (the public path)
    while parts and parts[-1].startswith("_"):
        parts.pop()
    return ".".join(parts) + "." + cls.__qualname__


def _jsonable(value):
    if value is None or isinstance(value, (bool, str)):
        return True, value
    if isinstance(value, numbers.Integral):
        return True, int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        return True, v
    if isinstance(value, (list, tuple)):
        out = []
        for v in value:
            ok, j = _jsonable(v)
            if not ok:
                return False, None
            out.append(j)
        return True, out
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        out = {}
        for k, v in value.items():
            ok, j = _jsonable(v)
            if not ok:
                return False, None
            out[k] = j
        return True, out
    return False, None


#: A parameter or attribute that is itself a streamlearn object (a pipeline's scaler and learner) is stored as
#: ``{"$object": {class, params, attributes, arrays}}``, its arrays under ``arrays/<name>/...``; nesting is
#: bounded by ``_MAX_DEPTH`` and every nested class must be a registered streamlearn class, as at the top.
_OBJECT_KEY = "$object"
_MAX_DEPTH = 4


def _describe_object(obj, prefix, blobs, depth=0):
    """``{class, params, attributes, arrays}`` of ``obj``; array bytes go to ``blobs[prefix + key]``."""
    cls = type(obj)
    name = _public_name(cls)
    if _REGISTRY.get(name) is not cls or depth > _MAX_DEPTH:
        raise TypeError(f"{cls.__name__} is not a streamlearn class that can be saved.")
    params = {}
    for key, value in obj.get_params(deep=False).items():
        if isinstance(value, PersistMixin):
            params[key] = {_OBJECT_KEY: _describe_object(value, f"{prefix}{key}/", blobs, depth + 1)}
            continue
        ok, j = _jsonable(value)
        if not ok:
            raise TypeError(
                f"Cannot save parameter {key!r} of {cls.__name__}: {type(value).__name__} is not "
                "a number, string, boolean or None."
            )
        params[key] = j
    attributes, arrays = {}, {}
    for key, value in vars(obj).items():
        if key in params:
            continue
        if isinstance(value, PersistMixin):
            attributes[key] = {_OBJECT_KEY: _describe_object(value, f"{prefix}{key}/", blobs, depth + 1)}
            continue
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                if not all(isinstance(v, str) for v in value.ravel()):
                    raise TypeError(f"Cannot save attribute {key!r}: object array that is not all strings.")
                value = value.astype(str)
            arrays[key] = np.ascontiguousarray(value)
            continue
        ok, j = _jsonable(value)
        if not ok:
            raise TypeError(f"Cannot save attribute {key!r} of {cls.__name__}: type {type(value).__name__}.")
        attributes[key] = j
    array_meta = {}
    for key, arr in arrays.items():
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        raw = buf.getvalue()
        blobs[prefix + key] = raw
        array_meta[key] = {"dtype": arr.dtype.str, "shape": list(arr.shape), "sha256": hashlib.sha256(raw).hexdigest()}
    return {"class": name, "params": params, "attributes": attributes, "arrays": array_meta}


def save(obj: Any, path: str | os.PathLike | BinaryIO) -> None:
    """Save ``obj`` (a streamlearn estimator or sketch) to ``path``; the file appears whole or not at all.
    ``path`` may also be a writable binary file object (such as ``io.BytesIO``): the model file is written
    into it, nothing on disk.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from streamlearn.persist import load, save
    >>> from streamlearn.sketch import FrequentDirections
    >>> fd = FrequentDirections(ell=4).partial_fit(np.eye(10))
    >>> path = os.path.join(tempfile.mkdtemp(), "fd.slm")
    >>> save(fd, path)
    >>> np.array_equal(load(path).sketch_, fd.sketch_)
    True
    >>> import io
    >>> buf = io.BytesIO()
    >>> save(fd, buf)  # the same file, in memory
    >>> buf.getvalue()[:2]  # (a zip archive)
    b'PK'
    """
    blobs: dict = {}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "streamlearn_version": __version__,
        **_describe_object(obj, "", blobs),
    }
    if hasattr(path, "write"):
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            _write_entries(zf, meta, blobs)
        return
    from ._atomic import Output

    out = path if isinstance(path, Output) else Output(path, what="model file")
    try:
        # written aside and renamed on success (see streamlearn._atomic): the file appears whole or not at all
        with (
            out.path_for_writing(suffix=".slm") as tmp,
            zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        ):
            _write_entries(zf, meta, blobs)
    except BaseException:
        if out is not path:
            out.discard()
        raise


def _write_entries(zf, meta, blobs):
    zf.writestr("meta.json", json.dumps(meta, indent=1, allow_nan=True))
    for key, raw in blobs.items():
        zf.writestr(f"arrays/{key}.npy", raw, compress_type=_compress_type(raw))


def _compress_type(raw):
    """How an array entry is written: large arrays are stored, not deflated (saving a 2^22-feature model stays
    I/O-bound), and so are those above ``_PROBE_ABOVE`` bytes that deflate would not halve (judged on three
    16 KB samples): trained weights, whose float64 mantissas look random, and per-feature state where only
    some columns repeat (such as NAG's scales beside its gradient sums, which deflate to about 0.65). Deflating
    those costs some 50 ms of CPU time per 2^18 features on every save and checkpoint, to save a third of the
    space at best. The rest (mostly zero or constant arrays, the metadata) is deflated."""
    n = len(raw)
    if n > _STORE_ABOVE:
        return zipfile.ZIP_STORED
    if n <= _PROBE_ABOVE:
        return zipfile.ZIP_DEFLATED
    k = 16 << 10
    sample = raw[:k] + raw[n // 2 : n // 2 + k] + raw[-k:]
    return (
        zipfile.ZIP_DEFLATED if len(zlib.compress(sample, 1)) <= _DEFLATE_AT_MOST * len(sample) else zipfile.ZIP_STORED
    )


# What a damaged zip archive can raise while it is opened or an entry is read: a flipped bit in a header
# turns on encryption (RuntimeError) or an unsupported method / version (NotImplementedError), a damaged
# deflate stream fails in zlib, a cut one ends early (EOFError), a damaged bz2 / lzma stream (method field
# flipped to 12 / 14) raises OSError / LZMAError, a damaged header field fails struct unpacking or decoding.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
    EOFError,
    OSError,
    struct.error,
    UnicodeDecodeError,
    ValueError,
    OverflowError,
    MemoryError,
)


#: the most bytes meta.json may take (parameters, scalar state and input specification: kilobytes)
_META_AT_MOST = 64 << 20


def _read_entry(zf, path, name, what, at_most=None):
    """The bytes of archive entry ``name``; every way a damaged archive fails becomes a ModelFileError. An entry
    that says it decompresses to more than ``at_most`` bytes is refused before it is read (the archive's size of
    an entry bounds what reading it gives: a larger stream fails its CRC check)."""
    size = zf.getinfo(name).file_size if at_most is not None and name in zf.NameToInfo else None
    if size is not None and size > at_most:
        raise ModelFileError(
            f"{path}: {what} decompresses to {size} bytes, more than "
            + ("its dtype and shape in meta.json hold" if what != "meta.json" else "a model's metadata takes")
            + f" ({at_most} bytes): the file is corrupted or not a model file."
        )
    try:
        return zf.read(name)
    except KeyError:
        raise ModelFileError(f"{path}: not a streamlearn model file (no {name}).") from None
    except _ZIP_ERRORS as exc:
        raise ModelFileError(f"{path}: {what} is corrupted ({_describe(exc)}).") from None


def _describe(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load(path: str | os.PathLike) -> Any:
    """Load an object saved with :func:`save`, verifying format, version, class and checksums.

    A damaged file (truncated, bytes flipped, another format) raises :class:`ModelFileError` with a
    one-line message; it never loads as a different model: every entry is checked against the
    archive's CRC-32 and every array against the SHA-256 recorded in ``meta.json``.

    >>> import os, tempfile
    >>> from streamlearn.sketch import FrequentDirections
    >>> path = os.path.join(tempfile.mkdtemp(), "fd.slm")
    >>> FrequentDirections(ell=2).partial_fit([[1.0, 0.0, 0.0], [0.0, 2.0, 1.0]]).save(path)
    >>> with open(path, "r+b") as f:
    ...     _ = f.truncate(os.path.getsize(path) - 7)
    >>> load(path)
    Traceback (most recent call last):
    ...
    streamlearn.persist.ModelFileError: ...fd.slm: not a streamlearn model file (not a zip archive; ...
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path of the model file must be a str or os.PathLike; got {type(path).__name__}.")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such model file.")
    try:
        zf = zipfile.ZipFile(path, "r")
    except IsADirectoryError:
        raise ModelFileError(f"{path}: is a directory, not a model file.") from None
    except PermissionError as exc:
        raise ModelFileError(f"{path}: cannot read the model file ({exc.strerror}).") from None
    except _ZIP_ERRORS:
        raise ModelFileError(
            f"{path}: not a streamlearn model file (not a zip archive; corrupted or another format)."
        ) from None
    with zf:
        raw_meta = _read_entry(zf, path, "meta.json", "meta.json", at_most=_META_AT_MOST)
        try:
            meta = json.loads(raw_meta)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError; nested too deep
            raise ModelFileError(f"{path}: meta.json is corrupted ({_describe(exc)}).") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
            raise ModelFileError(f"{path}: not a streamlearn model file (format {found!r}).")
        version = meta.get("format_version")
        if version != FORMAT_VERSION:
            raise ModelFileError(
                f"{path}: model format version {version!r}; this streamlearn "
                f"({__version__}) reads version {FORMAT_VERSION}. Re-save the model with a "
                "matching streamlearn version."
            )
        return _build(meta, "", zf, path)


def _npy_size(info):
    """The most bytes the .npy file of an array of the dtype and shape ``info`` records can take (its header is
    at most 64 KiB), or None when they are not a dtype and a shape (refused when the array is read)."""
    try:
        n = np.dtype(info["dtype"]).itemsize
        for k in info["shape"]:
            if not _is_int(k) or k < 0:
                return None
            n *= int(k)
    except (KeyError, TypeError, ValueError):
        return None
    return n + (64 << 10)


def _nested(value):
    return isinstance(value, dict) and set(value) == {_OBJECT_KEY} and isinstance(value[_OBJECT_KEY], dict)


_INT_MAX = (1 << 63) - 1  # what the kernels count in


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value):  # an integer one only within the int64 range, where the kernels take it
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and not (_is_int(value) and abs(value) > _INT_MAX)
    )


_COUNT = (lambda v: _is_int(v) and 0 <= v <= _INT_MAX, "an integer from 0 to 2**63 - 1")
_INT = (lambda v: _is_int(v) and abs(v) <= _INT_MAX, "an integer of at most 63 bits")
_NUMBER = (_is_number, "a number")
#: the scalar fitted attributes that streamlearn classes save, and what each holds; an attribute that is not
#: listed loads as it is
_ATTRIBUTES = {
    "n_features_in_": (lambda v: _is_int(v) and 1 <= v <= _INT_MAX, "an integer from 1 to 2**63 - 1"),
    "t_": _COUNT,
    "n_samples_seen_": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "n_iter_": _COUNT,
    "n_blocks_": _COUNT,
    "block_bytes_": _COUNT,
    "mean_": _NUMBER,
    "scale_": _NUMBER,
    "radius_": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "mode_": (lambda v: v in ("exact", "scalable"), "'exact' or 'scalable'"),
    "_state_penalty": _NUMBER,
    "_state_bias": _NUMBER,
    "_state_n_mat": _COUNT,
    "_state_pending": _COUNT,
    "_state_round": _COUNT,
    "_state_marks": (lambda v: isinstance(v, str), "a string"),
    "_cache_version": _INT,
    "_version": _INT,
    "_n_seen": _INT,
    "_n_rows": _INT,
    "_n_shrinks": _INT,
    "_t": _INT,
    "_seed": _INT,
    "_delta_sum": _NUMBER,
    "_fitted_params": (lambda v: isinstance(v, dict), "a mapping"),
}
#: parameters and attributes that hold a streamlearn object (a pipeline's parts): (None allowed, a method the
#: object must have, what it is)
_OBJECTS = {
    "learner": (False, "partial_fit_scores", "a streamlearn online learner"),
    "scaler": (True, "partial_fit_transform", "a streamlearn streaming scaler or null"),
    "target_scaler": (True, "inverse_transform", "a TargetStandardScaler or null"),
}


#: what a fitted object of a class (or of its subclasses) always has, among its attributes or arrays
_FITTED = {
    "streamlearn.linear_model._pegasos.PegasosClassifier": (
        "n_features_in_",
        "t_",
        "_state_round",
        "_state_pending",
        "_state_bias",
    ),
    "streamlearn.linear_model._first_order.Perceptron": ("n_features_in_", "t_", "radius_"),
    "streamlearn.facto._ccfm._OCCFM": ("n_features_in_", "t_", "mode_"),
    "streamlearn.base.BaseOnline": ("n_features_in_", "t_"),
    "streamlearn.preprocessing._pipeline.StreamPipeline": ("scaler_", "learner_", "target_scaler_"),
    "streamlearn.preprocessing._scalers._OnlineScaler": ("n_features_in_", "n_samples_seen_"),
    "streamlearn.preprocessing._target.TargetStandardScaler": ("n_samples_seen_", "mean_", "scale_"),
}


def _fitted_attributes(cls):
    return next((_FITTED[n] for c in cls.__mro__ if (n := f"{c.__module__}.{c.__qualname__}") in _FITTED), ())


def _shown(value):
    text = json.dumps(value, allow_nan=True) if not isinstance(value, _Missing) else "nothing (the key is missing)"
    return text if len(text) <= 60 else text[:57] + "..."


class _Missing:
    pass


def _field_error(path, field, expected, value):
    """The one-line error about meta.json field ``field`` (its dotted path in the file)."""
    return ModelFileError(f"{path}: meta.json field {field!r}: expected {expected}, got {_shown(value)}.")


def _check_spec(path, field, spec):
    from .datasets._spec import MISSING, spec_problem  # only for a model that has one

    problem = spec_problem(spec)
    if problem is not None:
        key, expected, value = problem
        value = _Missing() if value is MISSING else value
        where = f"{field}.{key}" if key else field
        if expected is None:
            return ModelFileError(
                f"{path}: meta.json field {where!r}: unknown key; an input specification has the keys "
                "format, zero_based, n_features, bits, label_convention, interactions, ignore, keep, label_column, "
                "weight_column, ignore_columns, scale and options."
            )
        return _field_error(path, where, expected, value)
    return None


def _build(meta, prefix, zf, path, depth=0, where=""):
    """The object described by ``meta`` (see ``_describe_object``), its arrays read and verified from ``zf``.

    Every field is checked against what ``save`` writes before anything is built: a file edited by hand (a
    string where a number belongs, a missing key, a list for a mapping, a parameter its class refuses) is a
    :class:`ModelFileError` naming the file and the field (``where`` is the dotted path of ``meta`` in the
    file), never a failure later in the program that reads the model."""
    cls = _registered_class(meta.get("class"))
    if cls is None or depth > _MAX_DEPTH:
        raise ModelFileError(
            f"{path}: unknown class {meta.get('class')!r}; expected a streamlearn estimator or sketch."
        )
    sections = {}
    for key in ("params", "attributes", "arrays"):
        value = meta.get(key, _Missing())
        if not isinstance(value, dict):
            raise _field_error(path, where + key, "a mapping", value)
        sections[key] = value
    params, attributes, array_meta = sections["params"], sections["attributes"], sections["arrays"]
    for key, info in array_meta.items():
        if not isinstance(info, dict):
            raise _field_error(path, f"{where}arrays.{key}", "a mapping with dtype, shape and sha256", info)
    here = f"arrays/{prefix}"
    for name in zf.namelist():  # an array of the archive that meta.json does not list: the entry was removed
        key = name[len(here) : -len(".npy")]
        if name.startswith(here) and name.endswith(".npy") and "/" not in key and key not in array_meta:
            raise _field_error(path, f"{where}arrays.{key}", f"the entry of array {name}", _Missing())
    names = cls._get_param_names() if hasattr(cls, "_get_param_names") else list(params)
    constraints = getattr(cls, "_parameter_constraints", {})
    for key, value in params.items():
        field = f"{where}params.{key}"
        if key not in names:
            raise ModelFileError(
                f"{path}: meta.json field {field!r}: {cls.__name__} has no parameter {key!r} "
                f"(its parameters: {', '.join(names) or 'none'})."
            )
        if key in constraints and not _nested(value):
            from ._validation import expected_param

            expected = expected_param(constraints[key], value)
            if expected is not None:
                raise _field_error(path, field, expected, value)
    for key, value in attributes.items():
        field = f"{where}attributes.{key}"
        if key == "input_spec_":
            error = _check_spec(path, field, value)
            if error is not None:
                raise error
        elif key in _ATTRIBUTES and not _ATTRIBUTES[key][0](value):
            raise _field_error(path, field, _ATTRIBUTES[key][1], value)
    required = _fitted_attributes(cls)
    fitted = [
        k
        for k in (*attributes, *array_meta)
        if k.endswith("_") and k != "input_spec_" or k.startswith("_state") or k in required
    ]
    if fitted:  # a fitted object has all of its fitted attributes
        for key in required:
            if key not in attributes and key not in array_meta:
                raise ModelFileError(
                    f"{path}: meta.json field {where + 'attributes.' + key!r} is missing: {cls.__name__} has "
                    f"{fitted[0]!r}, and a fitted {cls.__name__} has {key!r} too."
                )
    arrays = {}
    for key, info in array_meta.items():
        name = prefix + key
        raw = _read_entry(zf, path, f"arrays/{name}.npy", f"array {name!r}", at_most=_npy_size(info))
        if hashlib.sha256(raw).hexdigest() != info.get("sha256"):
            raise ModelFileError(f"{path}: checksum mismatch for array {name!r}: the file is corrupted.")
        try:
            arr = np.load(io.BytesIO(raw), allow_pickle=False)
        except (ValueError, EOFError, OSError) as exc:
            raise ModelFileError(f"{path}: array {name!r} is unreadable ({_describe(exc)}).") from None
        if arr.dtype.str != info.get("dtype") or list(arr.shape) != info.get("shape"):
            raise ModelFileError(
                f"{path}: array {name!r} has dtype {arr.dtype.str} and shape "
                f"{list(arr.shape)}, metadata says {info.get('dtype')} {info.get('shape')}."
            )
        arrays[key] = arr

    width = attributes.get("n_features_in_")
    shapes = [a.shape for k, a in arrays.items() if a.ndim and a.dtype.kind in "fc" and not k.startswith("classes")]
    if width is not None and shapes and not any(width in s or width + 1 in s for s in shapes):
        raise ModelFileError(
            f"{path}: meta.json field {where + 'attributes.n_features_in_'!r}: {width} does not fit the "
            f"arrays of the model (shapes {', '.join(str(list(s)) for s in shapes[:3])})."
        )

    def value(section, key, v):
        """A parameter or attribute value; a pipeline's part must be a streamlearn object of its kind."""
        field = f"{where}{section}.{key}"
        obj = (
            _build(v[_OBJECT_KEY], f"{prefix}{key}/", zf, path, depth + 1, f"{field}.{_OBJECT_KEY}.")
            if _nested(v)
            else v
        )
        kind = _OBJECTS.get(key.removesuffix("_"))
        if kind is not None and not (kind[0] if obj is None else hasattr(obj, kind[1])):
            raise _field_error(path, field, kind[2], v if not _nested(v) else v[_OBJECT_KEY].get("class"))
        if kind is None and _nested(v) and section == "params" and key in constraints:
            raise _field_error(path, field, "a value, not an object", v[_OBJECT_KEY].get("class"))
        return obj

    try:
        obj = cls(**{k: value("params", k, v) for k, v in params.items()})
    except (TypeError, ValueError) as exc:
        raise ModelFileError(
            f"{path}: the parameters in meta.json do not fit {cls.__name__} ({_describe(exc)})."
        ) from None
    for key, v in attributes.items():
        setattr(obj, key, value("attributes", key, v))
    for key, arr in arrays.items():
        setattr(obj, key, arr)
    if hasattr(obj, "_after_load"):
        obj._after_load()
    return obj
