"""Feature hashing of dict rows and DataFrames: ``DictHasher``, the same buckets as ``iter_csv``/``iter_parquet``.

A row ``{"age": 31, "country": "FR", "premium": True}`` becomes the hashed features ``age`` (value 31),
``country=FR`` and ``premium=true`` (value 1), each in the namespace of its key (or of its key's group),
hashed with 32-bit MurmurHash3 as Vowpal Wabbit hashes them, and masked to ``bits`` bits: exactly the
buckets :func:`streamlearn.datasets.iter_csv` gives the same row read from a CSV file with the same options.
``None``, NaN, pandas' missing values (``pd.NA``, ``pd.NaT``) and a numeric 0 (unless its key is categorical)
are no feature.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from .._estimator import BaseEstimator, TransformerMixin
from .._validation import csr_from_arrays

from .._params import keyword_init

__all__ = ["DictHasher", "name_hash", "namespace_hash"]

#: below this size an int or float is a finite float (what the readers take)
_FINITE = float(np.finfo(np.float64).max)
#: Value types whose finite values are features as ``float(value)`` with no other check: Python's numbers and
#: NumPy's float64 and integer scalars (``dict(zip(names, array_row))`` gives ``np.float64`` values). Not float32
#: or float16: the range test against a Python float casts the bound to their type (an overflow warning)
_PLAIN_NUMBERS = frozenset(
    [float, int, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8]
)


def namespace_hash(namespace):
    """The seed of a namespace's features, as Vowpal Wabbit computes it (``hashstring(name, 0)``)."""
    return name_hash(namespace, 0)


def name_hash(name, seed):
    """The 32-bit hash of the feature name ``name`` in the namespace whose seed is ``seed`` (VW's
    ``hashstring``: a name of digits only hashes to its value plus the seed)."""
    from .._kernels.hashing import hash_string

    buf = np.frombuffer(name.encode("utf-8"), dtype=np.uint8)
    return int(hash_string(buf, 0, buf.shape[0], np.uint64(seed)))


class DictHasher(TransformerMixin, BaseEstimator):
    """Hash dict rows, pandas DataFrames or Arrow tables into sparse rows of ``2 ** bits`` columns.

    Numbers are values, strings and booleans are ``key=value`` indicators, ``None``/NaN and 0 are skipped (a
    0 of a ``categorical`` key is the category ``key=0``):
    the same features, namespaces and buckets as the CSV and Parquet readers
    (:func:`streamlearn.datasets.iter_csv`) with the same ``bits``, ``categorical`` and ``namespaces``.
    Stateless: ``fit`` does nothing and a key never seen before is just another bucket.

    Parameters
    ----------
    bits : int, default=18
        Hash bits; the output has ``2 ** bits`` columns.
    categorical : sequence of str
        Keys whose numeric values are hashed as ``key=value`` (their text) instead of read as values.
    namespaces : dict or None
        ``{namespace: [key, ...]}``: keys hashed in a shared namespace instead of one namespace per key.
    ignore : sequence of str
        Keys left out.
    quadratic, cubic : sequences of str
        Namespace pairs / triples to cross, by first character (VW's ``-q`` / ``--cubic``; ``":"`` is any
        namespace), as the readers cross them. Inside a namespace, features keep the row's key order
        (which matters to self-interactions such as ``"uu"``).
    ignore_namespaces, keep_namespaces : sequences of str
        Drop the keys of these namespaces / keep only these (VW's ``--ignore`` / ``--keep``).

    Notes
    -----
    Dict rows are hashed in one numba call per ``transform`` (the row's Python objects are read once each);
    DataFrames and Arrow tables go through the readers' column kernels (pyarrow needed for DataFrames,
    else their rows are read as dicts). ``transform_one`` and the estimators' ``learn_one`` /
    ``predict_one`` pay Python's per-call overhead for every row: use ``transform`` on chunks of rows
    for throughput.

    Examples
    --------
    >>> from streamlearn.preprocessing import DictHasher
    >>> hasher = DictHasher(bits=10)
    >>> X = hasher.transform([{"age": 31, "country": "FR"}, {"age": None, "country": "DE", "premium": True}])
    >>> X.shape, X.getnnz(axis=1).tolist()
    ((2, 1024), [2, 2])
    >>> hasher.transform_one({"age": 31, "country": "FR"}).nnz
    2
    """

    bits: int  # the parameters, set by __init__ (typed here for the methods that read them)

    __init__ = keyword_init(
        bits=18,
        categorical=(),
        namespaces=None,
        ignore=(),
        quadratic=(),
        cubic=(),
        ignore_namespaces=(),
        keep_namespaces=(),
    )

    def fit(self, X: Any = None, y: Any = None) -> Self:
        """Check the parameters; hashing learns nothing. Returns ``self``."""
        self._setup()
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.input_tags.dict = True
        tags.input_tags.two_d_array = False
        return tags

    @property
    def n_features(self) -> int:
        return 1 << int(self.bits)

    def _check_containers(self):
        """The parameters ``_key`` reads: a dict (or None) and lists of strings, else one error naming them."""
        if self.namespaces is not None and not isinstance(self.namespaces, dict):
            raise ValueError(
                f"namespaces must be a dict {{namespace: [key, ...]}} or None; got {type(self.namespaces).__name__}."
            )
        for name in ("categorical", "ignore", "quadratic", "cubic", "ignore_namespaces", "keep_namespaces"):
            value = getattr(self, name)
            if not isinstance(value, str) and not isinstance(value, (list, tuple, set, frozenset)):
                raise ValueError(f"{name} takes a list of strings; got {type(value).__name__} {value!r}.")

    def _setup(self):
        self._check_containers()
        if getattr(self, "_cache_key", None) == self._key():
            return
        bits = self.bits
        if isinstance(bits, bool) or not isinstance(bits, numbers.Integral) or not 1 <= bits <= 32:
            raise ValueError(f"bits must be an integer between 1 and 32; got {bits!r}.")
        from ..datasets._tabular import _namespace_map
        from ..datasets._vw import _keep_array, parse_interactions

        self._ns = _namespace_map(self.namespaces)
        self._terms = parse_interactions(_strings(self.quadratic, "quadratic"), _strings(self.cubic, "cubic"))
        self._keep = _keep_array(
            _strings(self.ignore_namespaces, "ignore_namespaces"), _strings(self.keep_namespaces, "keep_namespaces")
        )
        self._ns_byte = {}
        self._categorical = {self.categorical} if isinstance(self.categorical, str) else set(self.categorical)
        self._ignore = {self.ignore} if isinstance(self.ignore, str) else set(self.ignore)
        self._mask = (1 << int(bits)) - 1
        self._seeds = {}
        self._numeric = {}
        self._rows = {}  # transform_one's plans by key tuple (_row_plan), and the key tuples seen once
        self._seen = set()
        self._cache_key = self._key()

    def _key(self):
        ns = (
            None
            if self.namespaces is None
            else tuple(sorted((k, tuple([v] if isinstance(v, str) else v)) for k, v in self.namespaces.items()))
        )
        rest = tuple(
            v if isinstance(v, str) else tuple(v)
            for v in (
                self.categorical,
                self.ignore,
                self.quadratic,
                self.cubic,
                self.ignore_namespaces,
                self.keep_namespaces,
            )
        )
        return (self.bits, ns) + rest

    def _seed(self, key):
        seed = self._seeds.get(key)
        if seed is None:
            name = self._ns.get(key, key)
            seed = self._seeds[key] = namespace_hash(name)
            self._ns_byte[key] = name.encode("utf-8")[0] if name else 32
        return seed

    # -- dict rows ------------------------------------------------------------------------------------
    def transform_one(self, x: Mapping[str, Any]) -> Any:
        """One dict row as a ``(1, 2 ** bits)`` CSR matrix.

        From the third row whose keys come in one order, all of them numeric columns, the buckets of that order
        are reused: a row of plain finite numbers (Python's or NumPy's floats and integers) is then made without
        reading it key by key, the same matrix as ``transform`` makes. Rows with other values, interactions
        (``quadratic``/``cubic``) or two keys in one bucket are hashed as by ``transform``.

        Examples
        --------
        >>> hasher = DictHasher(bits=10)
        >>> rows = [{"clicks": 3, "price": 9.5}, {"clicks": 0, "price": 2.0}, {"clicks": 7, "price": 1.25}]
        >>> [hasher.transform_one(row).data.tolist() for row in rows]  # by bucket; 0 is no feature
        [[9.5, 3.0], [2.0], [1.25, 7.0]]
        >>> (hasher.transform_one(rows[2]) != hasher.transform([rows[2]])).nnz
        0
        """
        self._setup()
        if type(x) is dict and not self._terms[0].shape[0]:
            keys = tuple(x)
            plan = self._rows.get(keys)
            if plan is not None:
                X = _planned_row(plan, x, self.n_features)
                if X is not None:
                    return X
            elif keys in self._seen and len(self._rows) < _ROWS_PLANNED:
                self._rows[keys] = self._row_plan(keys)
            elif len(self._seen) < _ROWS_SEEN:
                self._seen.add(keys)
        return _finite(self._transform_dicts([x]))

    def _row_plan(self, keys):
        """How ``transform_one`` makes a row with these keys, in this order: ``(order, indices)``, the keys' order
        by bucket and the buckets sorted; ``False`` (no shortcut) unless every key is a numeric column seen before
        and kept, and no two keys share a bucket (their values are summed)."""
        known = [self._numeric.get(key) for key in keys]
        if any(k is None or not k[2] for k in known):
            return False
        buckets = np.array([k[0] for k in known], dtype=np.uint64) & np.uint64(self._mask)
        order = np.argsort(buckets, kind="stable")
        indices = buckets[order].astype(np.int32 if self.bits < 31 else np.int64)
        if indices.shape[0] > 1 and not (indices[1:] > indices[:-1]).all():
            return False
        return order, indices

    def transform(self, X: Any) -> Any:
        """Hash a chunk of rows: an iterable of dicts, a pandas DataFrame, or a pyarrow Table / RecordBatch.

        Returns a CSR float64 matrix of shape ``(n_rows, 2 ** bits)``, indices sorted, collisions summed.
        """
        self._setup()
        if _is_dataframe(X) or _is_arrow(X):
            return _finite(self._transform_table(X))
        if isinstance(X, dict):
            raise TypeError("DictHasher.transform takes a sequence of dict rows; for one row use transform_one.")
        if not hasattr(X, "__iter__"):
            raise TypeError(
                f"DictHasher.transform takes a sequence of dict rows, a pandas DataFrame or a pyarrow Table; "
                f"got {type(X).__name__}."
            )
        return _finite(self._transform_dicts(X))

    def _transform_dicts(self, rows):
        from .._kernels.hashing import hash_strings

        row_of, hashes, values, ns, text_at, text_parts, text_seeds = [], [], [], [], [], [], []
        numeric_of = self._numeric.get  # (hash, namespace byte, kept) of the numeric columns seen so far
        add_row, add_hash, add_value, add_ns = row_of.append, hashes.append, values.append, ns.append
        n = 0
        for r, row in enumerate(rows):
            n += 1
            if not isinstance(row, dict):
                raise TypeError(f"row {r}: expected a dict of feature name -> value; got {type(row).__name__}.")
            for key, value in row.items():
                kind = type(value)
                # most values: a finite float or int of a numeric column seen before (neither ignored nor categorical,
                # or it would not be known), learnt with no other check; the rest take the checks below
                plain = kind in _PLAIN_NUMBERS  # (no abstract-class or pandas checks for them)
                known = numeric_of(key) if plain and -_FINITE < value < _FINITE else None
                number = value
                if known is None:
                    if key in self._ignore or (not plain and (value is None or _is_pandas_missing(value))):
                        continue
                    if not isinstance(key, str):
                        raise TypeError(f"row {r}: feature names must be strings; got {key!r}.")
                    if plain:
                        numeric = True
                    elif isinstance(value, (bool, np.bool_)):
                        numeric, text = False, ("true" if value else "false")
                    elif isinstance(value, numbers.Number):
                        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
                            raise TypeError(f"row {r}, key {key!r}: complex values are not features.")
                        numeric = True
                    elif isinstance(value, str):
                        numeric, text = False, value
                    elif isinstance(value, bytes):
                        numeric, text = False, value.decode("utf-8", "surrogateescape")
                    else:
                        raise TypeError(
                            f"row {r}, key {key!r}: a feature value must be a number, a string, a "
                            f"boolean or None; got {type(value).__name__}."
                        )
                    if numeric:
                        try:
                            number = float(value)
                        except OverflowError:  # an int beyond the float range
                            digits = int(int(value).bit_length() * math.log10(2)) + 1
                            raise ValueError(
                                f"row {r}, key {key!r}: value is an int of about {digits} digits, beyond the float "
                                "range."
                            ) from None
                        except ValueError as exc:  # a number float() refuses: Decimal('sNaN')
                            raise ValueError(f"row {r}, key {key!r}: value {value!r} is not a float ({exc}).") from None
                        if math.isnan(number):
                            continue
                        if math.isinf(number):
                            raise ValueError(f"row {r}, key {key!r}: value {number} is not finite.")
                        if key in self._categorical:  # 0 is a category as any other (the readers hash "key=0")
                            text = _number_text(value)
                            numeric = False
                        else:  # a numeric column's (hash, namespace byte, kept), computed once
                            known = self._numeric.get(key)
                            if known is None:
                                seed = self._seed(key)
                                byte = self._ns_byte[key]
                                known = self._numeric[key] = (name_hash(key, seed), byte, bool(self._keep[byte]))
                    if not numeric:
                        seed = self._seed(key)
                        if self._keep[self._ns_byte[key]]:
                            text_at.append(len(hashes))
                            text_parts.append(f"{key}={text}")
                            text_seeds.append(seed)
                            add_row(r)
                            add_hash(0)
                            add_value(1.0)
                            add_ns(self._ns_byte[key])
                        continue
                if number != 0 and known[2]:  # (the values become float64 below, as float() makes them)
                    add_row(r)
                    add_hash(known[0])
                    add_value(number)
                    add_ns(known[1])
        hashes = np.asarray(hashes, dtype=np.uint64)
        if text_parts:  # the text features of the whole chunk: one buffer, one kernel call
            encoded = [t.encode("utf-8", "surrogateescape") for t in text_parts]
            offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
            np.cumsum([len(b) for b in encoded], out=offsets[1:])
            data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
            text_hash = np.empty(len(encoded), dtype=np.uint64)
            hash_strings(data, offsets[:-1], offsets[1:], np.asarray(text_seeds, dtype=np.uint64), text_hash)
            hashes[np.asarray(text_at, dtype=np.int64)] = text_hash
        return self._to_csr(
            np.asarray(row_of, dtype=np.int64),
            hashes,
            np.asarray(values, dtype=np.float64),
            np.asarray(ns, dtype=np.int64),
            n,
        )

    def _to_csr(self, rows, hashes, values, ns, n):
        from .._kernels.tabular import hashed_features_to_csr

        terms, lens, wild = self._terms
        cap = max(len(values) * (4 if len(terms) else 1), 1)
        while True:
            indptr = np.empty(n + 1, dtype=np.int64)
            indices = np.empty(cap, dtype=np.int32 if self.bits < 31 else np.int64)
            out = np.empty(cap, dtype=np.float64)
            nnz = hashed_features_to_csr(
                rows=rows,
                hashes=hashes,
                values=values,
                ns=ns,
                n_rows=n,
                terms=terms,
                term_lens=lens,
                has_wildcard=wild,
                mask=np.uint64(self._mask),
                indptr=indptr,
                indices=indices,
                data=out,
            )
            if nnz >= 0:
                break
            cap *= 4
        if indices.dtype == np.int32:
            indptr = indptr.astype(np.int32)
        return csr_from_arrays(out[:nnz], indices[:nnz], indptr, (n, self.n_features))

    # -- tables ---------------------------------------------------------------------------------------
    def _transform_table(self, X):
        from ..datasets._tabular import (
            TEXT,
            _BatchError,
            _Plan,
            arrow_kind,
            hash_batch,
            hashes_to_csr,
        )

        if _is_dataframe(X):
            try:
                import pyarrow as pa
            except ImportError:
                return self._transform_dicts(X.to_dict("records"))
            try:
                X = pa.Table.from_pandas(X, preserve_index=False)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
                # mixed Python types or ints beyond 64 bits in an object column, complex numbers: the dict rows
                # say which row and key
                return self._transform_dicts(X.to_dict("records"))
        names = [str(c) for c in X.schema.names]
        kinds = {}
        for name in names:
            if name in self._ignore:
                continue
            kind = arrow_kind(X.schema.field(name).type)
            if kind is None:
                raise TypeError(
                    f"column {name!r} has type {X.schema.field(name).type}, which is not a feature "
                    "type (number, text, boolean); leave it out with ignore=."
                )
            kinds[name] = TEXT if name in self._categorical else kind
        plan = _Plan(
            list(kinds),
            kinds,
            None,
            None,
            self._ns,
            int(self.bits),
            _strings(self.quadratic, "quadratic"),
            _strings(self.cubic, "cubic"),
            _strings(self.ignore_namespaces, "ignore_namespaces"),
            _strings(self.keep_namespaces, "keep_namespaces"),
        )
        cols = {name: X.column(i) for i, name in enumerate(names) if name in kinds}
        try:
            hashes, values = hash_batch(cols, X.num_rows, plan)
        except _BatchError as exc:  # the readers' error of a batch, here one line naming the row and column
            where = f"row {exc.row}, column {exc.column!r}" if exc.row is not None else f"column {exc.column!r}"
            raise ValueError(f"{where}: {exc.reason}") from None
        return hashes_to_csr(hashes, values, plan)


#: At most this many key tuples remembered for a second sighting, and this many plans (or refusals), per hasher: a
#: stream whose rows hold ever new sets of keys costs a bounded amount of memory
_ROWS_SEEN = 1 << 12
_ROWS_PLANNED = 1 << 10


def _planned_row(plan, x, n_features):
    """``x`` (a dict row with a plan, :meth:`DictHasher._row_plan`) as a one-row CSR matrix, or None when one of
    its values is not a plain finite number (a text, a boolean, None, NaN, an int beyond the float range): then the
    general path reads it (and skips or refuses what it must). Zeros are left out, as there."""
    if not plan or not _PLAIN_NUMBERS.issuperset(map(type, x.values())):
        return None
    order, indices = plan
    try:
        values = np.fromiter(x.values(), dtype=np.float64, count=indices.shape[0])[order]
    except OverflowError:
        return None
    if not np.isfinite(values).all():  # (a NaN or an infinity)
        return None
    if np.count_nonzero(values) == values.shape[0]:
        data, indices = values, indices.copy()
    else:
        nonzero = values != 0.0
        data, indices = values[nonzero], indices[nonzero]
    indptr = np.array([0, data.shape[0]], dtype=indices.dtype)
    X = csr_from_arrays(data, indices, indptr, (1, n_features))
    X.has_canonical_format = True  # (sorted, no duplicates: scipy would sweep the indices to find out)
    return X


def _finite(X):
    """``X`` (hashed rows) when every value is finite; else a one-line ``ValueError`` naming the first row whose
    value overflowed (:func:`~streamlearn._validation.hashed_overflow`)."""
    from .._validation import hashed_overflow

    overflow = hashed_overflow(X)
    if overflow is not None:
        raise ValueError(f"row {overflow[0]}: {overflow[1]}")
    return X


def _number_text(value):
    """The text of a number hashed as a category: integers without a decimal point."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    f = float(value)
    return str(int(f)) if f.is_integer() and abs(f) < 2**53 else repr(f)


def _is_pandas_missing(value):
    """pandas' missing values (``pd.NA``, ``pd.NaT``), which a DataFrame's rows hold and the DataFrame path skips."""
    return type(value).__name__ in ("NAType", "NaTType") and type(value).__module__.startswith("pandas")


def _is_dataframe(X):
    return type(X).__name__ == "DataFrame" and hasattr(X, "to_dict") and hasattr(X, "columns")


def _is_arrow(X):
    return type(X).__name__ in ("Table", "RecordBatch") and type(X).__module__.startswith("pyarrow")


def _strings(value, name):
    if isinstance(value, str):
        raise ValueError(f"{name} takes a list of strings; got the string {value!r}.")
    return list(value)
