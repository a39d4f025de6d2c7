"""The zoo benchmark on its two smallest data sets (--quick), through the CLI and benchmarks/zoo.py."""

import json
import runpy
import sys
from pathlib import Path

import pytest

from streamlearn.cli.main import main
from streamlearn.experiments import zoo


def test_cli_quick_run_rows_and_references(capsys):
    assert main(["experiment", "zoo", "--quick", "--learners", "pa1,rfd0-son,adagrad", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["dataset"] for r in rows} == {"breast-cancer", "iris"}
    for r in rows:
        assert 0 <= r["score"] <= 1 and 0 < r["majority"] < 1
        assert r["ceiling"] > r["majority"]
        if r["vw"] is not None:
            assert r["gap_to_vw"] == pytest.approx(100 * (r["score"] - r["vw"]))
    spread = [r for r in rows if r["learner"] == "rfd0-son"]
    assert all(len(r["rescale_scores"]) == 2 and r["rescale_spread"] <= 2.0 for r in spread)
    # the SON family with its CLI defaults is above the majority-class rate on both
    assert all(r["score"] > r["majority"] for r in rows if r["learner"] in ("rfd0-son", "adagrad"))


def test_a_learner_of_the_other_task_is_skipped_not_scored(capsys):
    """--learners ogd-regressor on the classification sets scored its real-valued predictions as labels
    (accuracy 0.0, a row like any other); such a row is now skipped with a note, as a too-wide data set is."""
    argv = ["experiment", "zoo", "--quick", "--learners", "ogd-regressor,pa1", "--no-vw", "--no-ceiling"]
    assert main([*argv, "--rescale", "0", "--json"]) == 0
    rows = {(r["dataset"], r["learner"]): r for r in json.loads(capsys.readouterr().out)}
    for dataset, task in (("breast-cancer", "binary"), ("iris", "multiclass")):
        skipped = rows[(dataset, "ogd-regressor")]
        assert skipped["score"] is None and skipped["note"] == f"skipped: a regression learner on a {task} data set"
        assert rows[(dataset, "pa1")]["score"] > rows[(dataset, "pa1")]["majority"]


def test_benchmark_script_writes_report_json_and_png(tmp_path, monkeypatch):
    out = tmp_path / "zoo"
    monkeypatch.setattr(
        sys, "argv", ["zoo.py", "--quick", "--learners", "ogd,rfd-son", "--no-vw", "--rescale", "0", "--out", str(out)]
    )
    runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "zoo.py"), run_name="__main__")
    data = json.loads(out.with_suffix(".json").read_text())
    assert {s["learner"] for s in data["summary"]} == {"ogd", "rfd-son"}
    text = out.with_suffix(".md").read_text()
    assert "| rfd-son |" in text and "breast-cancer" in text
    assert out.with_suffix(".png").stat().st_size > 1000


def test_summary_counts_sets_below_majority():
    rows = [
        {
            "dataset": d,
            "task": "binary",
            "learner": "x",
            "score": s,
            "majority": 0.6,
            "vw": 0.7,
            "ceiling": 0.8,
            "gap_to_vw": 100 * (s - 0.7),
            "note": "",
        }
        for d, s in (("a", 0.5), ("b", 0.9))
    ]
    (s,) = zoo.summary(rows)
    assert s["below_majority"] == 1 and s["below_majority_sets"] == ["a"]
    assert s["median_gap_to_vw"] == pytest.approx(0.0) and s["worst_gap_to_vw"] == pytest.approx(-20.0)


def test_documentation_tables_are_rendered_from_the_stored_run():
    root = Path(__file__).resolve().parents[2]
    results = root / "benchmarks" / "results" / "zoo.json"
    if not results.is_file():
        pytest.skip("no stored zoo run (benchmarks/results/zoo.json)")
    check = runpy.run_path(str(root / "benchmarks" / "zoo_docs.py"))["main"]
    assert check(["--check"]) == 0, "docs out of date: run python benchmarks/zoo_docs.py"


def test_more_shuffles_are_counted_apart_from_the_first(capsys):
    argv = ["experiment", "zoo", "--quick", "--learners", "pa1", "--rescale", "0", "--no-ceiling", "--json"]
    assert main([*argv, "--shuffles", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((r["dataset"], r["shuffle"]) for r in rows) == [
        ("breast-cancer", 0),
        ("breast-cancer", 1),
        ("iris", 0),
        ("iris", 1),
    ]
    assert main(argv) == 0  # the first shuffle is the single run's
    single = json.loads(capsys.readouterr().out)
    assert [r["score"] for r in single] == [r["score"] for r in rows if r["shuffle"] == 0]
    (s,) = zoo.shuffles_summary(rows)
    assert s["runs"] == 4 and s["shuffles"] == 2
    assert "| pa1 | 4 |" in zoo.shuffles_markdown(rows) and zoo.shuffles_markdown(single) == ""
    assert len(zoo.summary(rows)) == 1 and zoo.summary(rows) == zoo.summary(single)


def test_shuffles_must_be_a_positive_count(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "zoo", "--quick", "--shuffles", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--shuffles" in err[-1] and "expected a positive integer, got '0'" in err[-1]
