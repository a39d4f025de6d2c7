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
from typing import Any, Self

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


def save(obj: Any, path: str | os.PathLike) -> None:
    """Save ``obj`` (a streamlearn estimator or sketch) to ``path``; the file appears whole or not at all.

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
    """
    blobs: dict = {}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "streamlearn_version": __version__,
        **_describe_object(obj, "", blobs),
    }
    from ._atomic import Output

    out = path if isinstance(path, Output) else Output(path, what="model file")
    try:
        # written aside and renamed on success (see streamlearn._atomic): the file appears whole or not at all
        with (
            out.path_for_writing(suffix=".slm") as tmp,
            zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
        ):
            zf.writestr("meta.json", json.dumps(meta, indent=1, allow_nan=True))
            for key, raw in blobs.items():
                zf.writestr(f"arrays/{key}.npy", raw, compress_type=_compress_type(raw))
    except BaseException:
        if out is not path:
            out.discard()
        raise


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


def _read_entry(zf, path, name, what):
    """The bytes of archive entry ``name``; every way a damaged archive fails becomes a ModelFileError."""
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
        raw_meta = _read_entry(zf, path, "meta.json", "meta.json")
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


def _nested(value):
    return isinstance(value, dict) and set(value) == {_OBJECT_KEY} and isinstance(value[_OBJECT_KEY], dict)


def _build(meta, prefix, zf, path, depth=0):
    """The object described by ``meta`` (see ``_describe_object``), its arrays read and verified from ``zf``."""
    cls = _registered_class(meta.get("class"))
    if cls is None or depth > _MAX_DEPTH:
        raise ModelFileError(
            f"{path}: unknown class {meta.get('class')!r}; expected a streamlearn estimator or sketch."
        )
    params, attributes, array_meta = (meta.get(k, {}) for k in ("params", "attributes", "arrays"))
    for key, value in (("params", params), ("attributes", attributes), ("arrays", array_meta)):
        if not isinstance(value, dict) or (key == "arrays" and not all(isinstance(v, dict) for v in value.values())):
            raise ModelFileError(f"{path}: meta.json is corrupted ({key!r} is not a mapping).")
    arrays = {}
    for key, info in array_meta.items():
        name = prefix + key
        raw = _read_entry(zf, path, f"arrays/{name}.npy", f"array {name!r}")
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

    def value(key, v):
        return _build(v[_OBJECT_KEY], f"{prefix}{key}/", zf, path, depth + 1) if _nested(v) else v

    try:
        obj = cls(**{k: value(k, v) for k, v in params.items()})
    except (TypeError, ValueError) as exc:
        raise ModelFileError(
            f"{path}: the parameters in meta.json do not fit {cls.__name__} ({_describe(exc)})."
        ) from None
    for key, v in attributes.items():
        setattr(obj, key, value(key, v))
    for key, arr in arrays.items():
        setattr(obj, key, arr)
    if hasattr(obj, "_after_load"):
        obj._after_load()
    return obj
