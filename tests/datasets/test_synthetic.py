"""Synthetic Zipf sparse classification streams and the chunked LIBSVM writer."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression

from streamlearn.datasets import _synthetic, make_sparse_classification, write_svmlight_stream


def _row_ids(X):
    return np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))


def test_shapes_dtypes_and_sorted_unique_indices():
    X, y = make_sparse_classification(5000, 3000, nnz_per_row=40, random_state=0)
    assert sp.isspmatrix_csr(X) and X.shape == (5000, 3000) and y.shape == (5000,)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32 and X.data.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0} and set(np.unique(X.data)) == {1.0}
    # strictly increasing column index inside every row (sorted, no duplicates)
    step = np.diff(X.indices.astype(np.int64))
    same_row = _row_ids(X)[1:] == _row_ids(X)[:-1]
    assert np.all(step[same_row] > 0)
    assert X.indices.min() >= 0 and X.indices.max() < 3000
    assert np.all(np.diff(X.indptr) >= 1)  # every row has a feature
    # nnz_per_row is the expected number of distinct features per row
    assert X.nnz / X.shape[0] == pytest.approx(40, rel=0.03)
    X32, _ = make_sparse_classification(50, 3000, nnz_per_row=40, random_state=0, dtype=np.float32)
    assert X32.data.dtype == np.float32 and (X[:50] != X32).nnz == 0


def test_same_seed_same_data_and_rows_do_not_depend_on_length():
    X1, y1 = make_sparse_classification(9000, 500, nnz_per_row=10, random_state=3)
    X2, y2 = make_sparse_classification(9000, 500, nnz_per_row=10, random_state=3)
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)
    # a shorter stream is a prefix of the longer one (blocks are seeded by their position)
    X3, y3 = make_sparse_classification(5000, 500, nnz_per_row=10, random_state=3)
    assert (X1[:5000] != X3).nnz == 0 and np.array_equal(y3, y1[:5000])
    X4, y4 = make_sparse_classification(9000, 500, nnz_per_row=10, random_state=4)
    assert (X4 != X1).nnz > 0
    # a Generator is used once to draw a seed
    Xa, _ = make_sparse_classification(100, 500, random_state=np.random.default_rng(1), nnz_per_row=5)
    Xb, _ = make_sparse_classification(100, 500, random_state=np.random.default_rng(1), nnz_per_row=5)
    assert (Xa != Xb).nnz == 0


@pytest.mark.parametrize("binary", [True, False])
def test_classes_are_balanced(binary):
    # the hidden model's bias centres the score; without it the frequent features tilt y (|mean| up to 0.9)
    means = [
        make_sparse_classification(4096, 1000, nnz_per_row=30, binary=binary, random_state=s)[1].mean()
        for s in range(4)
    ]
    assert np.max(np.abs(means)) < 0.1


def test_feature_frequencies_follow_zipf():
    # term counts (binary=False) are the raw draws, whose rank-frequency law has slope -zipf_a (log-log)
    X, _ = make_sparse_classification(20000, 20000, nnz_per_row=20, zipf_a=1.1, binary=False, random_state=0)
    freq = np.sort(np.asarray(X.sum(axis=0)).ravel())[::-1]
    ranks = np.arange(1, freq.shape[0] + 1)
    sel = slice(9, 2000)
    slope = np.polyfit(np.log(ranks[sel]), np.log(freq[sel]), 1)[0]
    assert slope == pytest.approx(-1.1, abs=0.08)
    assert set(np.unique(X.data)) > {1.0, 2.0}  # frequent features are drawn several times per row
    # zipf_a=0 is uniform: the busiest 1% of features hold about 1% of the non-zeros, not most of them
    Xu, _ = make_sparse_classification(5000, 20000, nnz_per_row=20, zipf_a=0.0, random_state=0)
    fu = np.sort(np.bincount(Xu.indices, minlength=20000))[::-1]
    fz = np.sort(np.bincount(X.indices, minlength=20000))[::-1]
    assert fu[:200].sum() / fu.sum() < 0.03 < 0.3 < fz[:200].sum() / fz.sum()


def test_labels_are_learnable_and_noise_makes_them_harder():
    def accuracy(noise):
        X, y = make_sparse_classification(6000, 1000, nnz_per_row=20, noise=noise, random_state=0)
        clf = LogisticRegression(C=1.0, max_iter=300).fit(X[:5000], y[:5000])
        return clf.score(X[5000:], y[5000:])

    clean, noisy = accuracy(0.0), accuracy(1.0)
    assert clean > 0.85  # measured 0.9+ (chance is 0.5)
    assert noisy < clean - 0.05


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("chunk_size", [1, 700, 5000, 100_000])
def test_written_file_reads_back_as_the_generated_matrix(tmp_path, binary, chunk_size):
    kw = dict(nnz_per_row=8, zipf_a=1.1, binary=binary, random_state=7)
    path = tmp_path / "s.svm"
    n_bytes = write_svmlight_stream(path, 4500 if chunk_size > 1 else 300, 20_000, chunk_size=chunk_size, **kw)
    X, y = load_svmlight_file(str(path), n_features=20_000)
    X0, y0 = make_sparse_classification(4500 if chunk_size > 1 else 300, 20_000, **kw)
    assert X.shape == X0.shape and (X != X0).nnz == 0 and np.array_equal(y, y0)
    assert n_bytes == path.stat().st_size
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_written_format_is_compact_libsvm(tmp_path):
    path = tmp_path / "s.svm"
    write_svmlight_stream(path, 200, 100_000, nnz_per_row=10, random_state=0, chunk_size=64)
    lines = path.read_text().split("\n")
    assert lines[-1] == "" and len(lines) == 201  # one line per row, each ending in a newline
    pattern = re.compile(r"^(-1|1)( [1-9][0-9]*:1)+$")  # 1-based indices, value "1", no trailing space
    assert all(pattern.match(line) for line in lines[:-1])
    X, _ = make_sparse_classification(200, 100_000, nnz_per_row=10, random_state=0)
    first = [int(tok.split(":")[0]) for tok in lines[0].split()[1:]]
    assert first == (X.indices[X.indptr[0] : X.indptr[1]] + 1).tolist()


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    calls = []
    real = _synthetic._svmlight_bytes

    def failing(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(_synthetic, "_svmlight_bytes", failing)
    path = tmp_path / "s.svm"
    with pytest.raises(KeyboardInterrupt):
        write_svmlight_stream(path, 1000, 100, nnz_per_row=5, random_state=0, chunk_size=100)
    assert len(calls) == 2 and list(tmp_path.iterdir()) == []


def test_empty_stream(tmp_path):
    X, y = make_sparse_classification(0, 10, nnz_per_row=2, random_state=0)
    assert X.shape == (0, 10) and y.shape == (0,)
    assert write_svmlight_stream(tmp_path / "e.svm", 0, 10, nnz_per_row=2, random_state=0) == 0
    assert (tmp_path / "e.svm").read_bytes() == b""


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(n_samples=-1),
            "The 'n_samples' parameter of make_sparse_classification must be an int in the range "
            "[0, inf). Got -1 instead.",
        ),
        (dict(n_features=1.5), "The 'n_features' parameter of make_sparse_classification must be an int"),
        (
            dict(nnz_per_row=0),
            "The 'nnz_per_row' parameter of make_sparse_classification must be a float in the "
            "range [1.0, inf). Got 0 instead.",
        ),
        (dict(nnz_per_row=60), "nnz_per_row=60 is more than half of n_features=100"),
        (dict(zipf_a=-1), "The 'zipf_a' parameter"),
        (dict(zipf_a=3.0, nnz_per_row=40), "lower zipf_a or nnz_per_row"),
        (dict(noise=float("nan")), "The 'noise' parameter"),
        (
            dict(noise=float("inf")),  # was accepted: labels of infinite noise
            "The 'noise' parameter of make_sparse_classification must be a float in the range [0.0, inf). Got inf "
            "instead.",
        ),
        (dict(nnz_per_row=float("inf")), "The 'nnz_per_row' parameter"),
        (dict(binary=1), "The 'binary' parameter of make_sparse_classification must be an instance of 'bool'"),
        (dict(random_state=-2), "The 'random_state' parameter"),
        (dict(dtype=np.int32), "The 'dtype' parameter"),
    ],
)
def test_bad_parameters_are_named(kwargs, message):
    args = dict(n_samples=10, n_features=100, nnz_per_row=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        make_sparse_classification(args.pop("n_samples"), args.pop("n_features"), **args)


def test_writer_checks_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="The 'chunk_size' parameter of write_svmlight_stream"):
        write_svmlight_stream(tmp_path / "a.svm", 10, 100, nnz_per_row=5, chunk_size=0)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_svmlight_stream(tmp_path / "no" / "a.svm", 10, 100, nnz_per_row=5)
    with pytest.raises(TypeError, match="path of write_svmlight_stream must be a str or os.PathLike"):
        write_svmlight_stream(3, 10, 100, nnz_per_row=5)
    assert list(tmp_path.iterdir()) == []
    # a directory: refused before any row is made, not by the final rename ('[Errno 21] Is a directory:
    # '.../.d.123.ab12cd34.part' -> '.../d'), which came after writing the whole stream
    (tmp_path / "d").mkdir()
    message = (
        f"path={str(tmp_path / 'd')!r} of write_svmlight_stream is a directory; expected the name of a file to write."
    )
    with pytest.raises(IsADirectoryError, match="^" + re.escape(message) + "$"):
        write_svmlight_stream(tmp_path / "d", 10, 100, nnz_per_row=5)
    assert [p.name for p in tmp_path.iterdir()] == ["d"] and list((tmp_path / "d").iterdir()) == []


def test_a_feature_count_beyond_the_machine_memory_is_refused_before_allocating(monkeypatch, tmp_path):
    """The hidden model holds a few floats per feature: 2**40 features (the top of the range) would need tens
    of TiB. The generator says so, naming n_features and the memory, instead of numpy's 'Unable to allocate'
    after a long wait; the file writer likewise, before creating any file."""
    import streamlearn.datasets._synthetic as syn
    from streamlearn.datasets import make_sparse_classification, write_svmlight_stream

    monkeypatch.setattr(syn, "_physical_memory", lambda: 2**30)
    with pytest.raises(
        MemoryError, match=r"^n_features=33554432 needs about 1.2 GiB .* more than this machine's 1.0 GiB"
    ):
        make_sparse_classification(10, 2**25)
    with pytest.raises(MemoryError, match="write_svmlight_stream's hidden model"):
        write_svmlight_stream(tmp_path / "s.svm", 10, 2**25)
    assert list(tmp_path.iterdir()) == []
    assert make_sparse_classification(10, 2**20, nnz_per_row=5, random_state=0)[0].shape == (10, 2**20)
