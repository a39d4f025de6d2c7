import numpy as np
import pytest

from streamlearn.datasets import iter_click_log, make_click_log, write_click_log


def test_click_log_is_seeded_prefix_stable_and_realistic():
    a = make_click_log(70000, seed=3)
    b = make_click_log(1000, seed=3)
    for k in b:
        assert (a[k][:1000] == b[k]).all(), k
    assert not (make_click_log(1000, seed=4)["user"] == b["user"]).all()
    assert 0.05 < a["clicked"].mean() < 0.6
    # heavy tail: the largest sessions count is far above the median
    assert a["sessions"].max() > 50 * np.median(a["sessions"])
    # Zipf: the most frequent country is much more frequent than the median one
    _, counts = np.unique(a["country"], return_counts=True)
    assert counts.max() > 5 * np.median(counts)
    chunks = list(iter_click_log(70000, seed=3, block_rows=30000))
    assert [len(c["clicked"]) for c in chunks] == [30000, 30000, 10000]
    assert (np.concatenate([c["ad"] for c in chunks]) == a["ad"]).all()


def test_click_log_writers_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    write_click_log(tmp_path / "c.vw", 50, seed=1)
    write_click_log(tmp_path / "c.csv", 50, seed=1)
    write_click_log(tmp_path / "c.parquet", 50, seed=1)
    log = make_click_log(50, seed=1)
    csv = pd.read_csv(tmp_path / "c.csv")
    pq = pd.read_parquet(tmp_path / "c.parquet")
    assert csv.equals(pq)
    assert (csv["user"].to_numpy() == log["user"]).all()
    lines = (tmp_path / "c.vw").read_text().splitlines()
    assert len(lines) == 50
    assert [int(x.split()[0]) for x in lines] == list(np.where(log["clicked"] > 0, 1, -1))
    assert f"user={log['user'][7]}" in lines[7] and f"price:{float(log['price'][7])!r}" in lines[7]
    with pytest.raises(ValueError, match="format"):
        write_click_log(tmp_path / "c.txt", 5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.csv", "c.parquet", "c.vw"]


def test_write_click_log_refuses_a_directory(tmp_path):
    """A directory as the output is named as such (it was 'cannot tell the click log format'), and nothing is
    written into it."""
    import pytest

    from streamlearn.datasets import write_click_log

    with pytest.raises(IsADirectoryError, match="is a directory; expected the name of a file to write"):
        write_click_log(tmp_path, 10)
    with pytest.raises(IsADirectoryError):
        write_click_log(tmp_path, 10, format="vw")
    assert list(tmp_path.iterdir()) == []
