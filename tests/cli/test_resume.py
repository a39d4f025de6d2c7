"""``train -i`` (continue a saved model), checkpoints, ``evaluate -i`` (frozen) and ``predict --proba``.

The contract: ``train A -o m; train B -i m -o m2`` gives bit for bit the model of ``train A+B -o m3``, for
every registered online learner; batch learners are refused with the reason.
"""

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from streamlearn.cli._resume import CHUNK_DEPENDENT, NOT_RESUMABLE
from streamlearn.cli.main import main
from streamlearn.learners import LEARNERS
from streamlearn.persist import load

N_A, N_B, D = 100, 70, 12


def _write(path, X, y):
    with open(path, "w") as f:
        for x, t in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x) if v != 0.0)
            f.write(f"{t:.6g} {feats}\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N_A + N_B, D)) * (rng.random((N_A + N_B, D)) < 0.5)
    X[0, D - 1] = 1.0  # every file has the full width
    X[N_A, D - 1] = 1.0
    w = rng.normal(size=D)
    out = {}
    d = tmp_path_factory.mktemp("resume")
    for task, y in [("classification", np.where(X @ w > 0, 1, -1)), ("regression", X @ w + 0.25)]:
        paths = {k: str(d / f"{task}-{k}.svm") for k in ("A", "B", "AB")}
        _write(paths["A"], X[:N_A], y[:N_A])
        _write(paths["B"], X[N_A:], y[N_A:])
        _write(paths["AB"], X, y)
        out[task] = paths
    return out


def _model_state(path):
    """Everything a model file holds (class, parameters, attributes, every array's SHA-256) in one string."""
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta.pop("streamlearn_version")
    return json.dumps(meta, sort_keys=True)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_resume_equals_one_run_bit_for_bit(name, data, tmp_path, capsys):
    paths = data[LEARNERS[name].task]
    m, m2, m3 = (str(tmp_path / f"{k}.slm") for k in ("m", "m2", "m3"))
    if name in NOT_RESUMABLE:
        assert main(["train", paths["A"], "-l", name, "-o", m, "--quiet"]) == 0
        assert main(["train", paths["B"], "-i", m, "-o", m2, "--quiet"]) == 2
        assert "batch learner" in capsys.readouterr().err
        return
    # chunk-dependent learners: the resume point (N_A) is a chunk boundary of the single run
    chunk = "50" if name in CHUNK_DEPENDENT else "30"
    common = ["--chunk-size", chunk, "--quiet"]
    assert main(["train", paths["A"], "-l", name, "-o", m, *common]) == 0
    assert main(["train", paths["B"], "-i", m, "-o", m2, *common]) == 0
    assert main(["train", paths["AB"], "-l", name, "-o", m3, *common]) == 0
    assert _model_state(m2) == _model_state(m3)
    a, b = load(m2), load(m3)
    assert vars(a).keys() == vars(b).keys()


def test_resume_errors_name_the_problem(data, tmp_path, capsys):
    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "pa1", "-p", "C=0.5", "-o", m, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", paths["B"], "-i", m, "-p", "C=0.1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "C=0.1" in err and "conflicts" in err and "0.5" in err
    assert main(["train", paths["B"], "-i", m, "-p", "C=0.5", "--quiet"]) == 0  # the same value is fine
    assert main(["train", paths["B"], "-i", m, "-l", "ftrl", "--quiet"]) == 2
    assert f"--learner ftrl does not match the model in {m} (learner pa1, PassiveAggressiveClassifier); omit" in (
        capsys.readouterr().err
    )
    assert main(["train", paths["B"], "-i", m, "-l", "pa1", "--quiet"]) == 0
    assert main(["train", paths["B"], "--quiet"]) == 2
    assert "--learner NAME is required" in capsys.readouterr().err
    assert main(["train", paths["B"], "-i", str(tmp_path / "none.slm"), "--quiet"]) == 2
    assert main(["train", paths["B"], "-l", "pa1", "--save-every", "10", "--quiet"]) == 2
    assert "give -o" in capsys.readouterr().err


def test_a_label_the_continued_model_does_not_know_is_not_called_a_test_label(data, tmp_path, capsys):
    """``train B -i m`` with a label outside the model's classes said "a test file must use the labels of the
    training data" about the training data B."""
    m, bad = str(tmp_path / "m.slm"), tmp_path / "b.svm"
    assert main(["train", data["classification"]["A"], "-l", "pa1", "-o", m, "--quiet"]) == 0
    bad.write_text("1 1:1\n2 2:1\n")
    capsys.readouterr()
    assert main(["train", str(bad), "-i", m, "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"streamlearn: error: {bad}, line 2: label 2 is not one of the model's classes {{-1, 1}}; a model continued "
        "with -i learns only the classes it was trained on.\n"
    )


def test_checkpoints_of_a_device_or_named_pipe_output_are_refused(data, tmp_path, capsys):
    """``-o /dev/null --save-per-pass`` created the regular files /dev/null.pass1, /dev/null.pass2... in /dev, and
    ``--save-every`` wrote one whole model after the other into a pipe (``-o /dev/stdout``): a reader got the
    models concatenated. Checkpoints need a file path."""
    paths = data["classification"]
    before = set(os.listdir("/dev"))
    try:
        for option in (["--save-per-pass", "--passes", "2"], ["--save-every", "10"]):
            capsys.readouterr()
            assert main(["train", paths["A"], "-l", "pa1", "-o", "/dev/null", *option, "--quiet"]) == 2
            err = capsys.readouterr().err
            assert err == (
                "streamlearn: error: checkpoints (--save-every, --save-per-pass) are model files written at -o "
                "MODEL or beside it; '/dev/null' is a device or named pipe: give a file path.\n"
            ), err
    finally:
        for name in set(os.listdir("/dev")) - before:  # what the command used to leave there
            os.unlink(os.path.join("/dev", name))
    assert set(os.listdir("/dev")) == before


def test_checkpoints_are_the_model_at_that_point(data, tmp_path, capsys):
    paths = data["classification"]
    out = str(tmp_path / "m.slm")
    every_50 = ["-l", "ftrl", "--chunk-size", "25", "--save-every", "50", "--passes", "2", "--quiet"]
    assert main(["train", paths["AB"], *every_50, "-o", out, "--save-per-pass"]) == 0
    for k in (1, 2):
        assert load(f"{out}.pass{k}").t_ == k * (N_A + N_B)
    assert _model_state(f"{out}.pass2") == _model_state(out)
    # a run that stops after the first 150 examples saves what --save-every 50 wrote at 150
    part = tmp_path / "part.svm"
    part.write_text("".join(Path(paths["AB"]).read_text().splitlines(keepends=True)[:150]))
    ref = str(tmp_path / "ref.slm")
    ck = str(tmp_path / "ck.slm")
    assert main(["train", str(part), "-l", "ftrl", "--chunk-size", "25", "-o", ref, "--quiet"]) == 0

    # kill the run after the checkpoint at 150: simulate by a hook that raises on the chunk ending at 175
    from streamlearn.cli import _resume

    class Stop(Exception):
        pass

    orig = _resume.Checkpointer.__call__

    def call(self, p, n):
        orig(self, p, n)
        if self.n >= 175:
            raise Stop

    _resume.Checkpointer.__call__ = call
    try:
        with pytest.raises(Stop):
            main(["train", paths["AB"], *every_50, "-o", ck])
    finally:
        _resume.Checkpointer.__call__ = orig
    assert _model_state(ck) == _model_state(ref)


@pytest.mark.parametrize("stop_at", [25, 150])
def test_ctrl_c_after_a_checkpoint_says_what_the_model_file_holds(data, tmp_path, capsys, monkeypatch, stop_at):
    """Ctrl-C after --save-every rewrote -o MODEL: the message names the checkpoint the file holds (it said the
    file was left unchanged); before the first checkpoint, the file is the old one and the message says so."""
    from streamlearn.cli import _resume

    out = tmp_path / "m.slm"
    out.write_bytes(b"old model")
    orig = _resume.Checkpointer.__call__

    def call(self, p, n):
        orig(self, p, n)
        if self.n >= stop_at:
            raise KeyboardInterrupt

    monkeypatch.setattr(_resume.Checkpointer, "__call__", call)
    every_50 = ["-l", "ftrl", "--chunk-size", "25", "--save-every", "50", "--quiet"]
    assert main(["train", data["classification"]["AB"], *every_50, "-o", str(out)]) == 130
    err = capsys.readouterr().err
    if stop_at == 25:
        assert err == f"streamlearn: error: interrupted; {out} left unchanged\n"
        assert out.read_bytes() == b"old model"
    else:
        assert err == f"streamlearn: error: interrupted; {out} holds the checkpoint after 150 examples\n"
        assert load(out).t_ == 150


def _diverging_file(path, n_good, n_bad):
    """``n_good`` ordinary rows, then ``n_bad`` rows whose first feature is about 1e100: squared-loss OGD on raw
    values diverges there."""
    rng = np.random.default_rng(3)
    with open(path, "w") as f:
        for i in range(n_good + n_bad):
            big = 1e100 if i >= n_good else 1.0
            f.write(f"{2 * rng.integers(2) - 1} 1:{big * rng.normal():.6g} 2:{rng.normal():.6g}\n")


@pytest.mark.parametrize("per_pass", [False, True])
def test_a_diverged_run_never_checkpoints_the_diverged_model(tmp_path, capsys, per_pass):
    path = str(tmp_path / "d.svm")
    _diverging_file(path, 2000, 1000)
    out = str(tmp_path / "m.slm")
    diverge = ["train", path, "-l", "ogd-squared", "-p", "eta0=10", "--scale", "none", "--chunk-size", "100"]
    every = ["--save-every", "500", "-o", out] + (["--save-per-pass", "--passes", "2"] if per_pass else [])
    ref = str(tmp_path / "ref.slm")
    good = str(tmp_path / "good.svm")
    Path(good).write_text("".join(Path(path).read_text().splitlines(keepends=True)[:2000]))
    assert main(["train", good, *diverge[2:], "-o", ref, "--quiet"]) == 0
    capsys.readouterr()

    assert main(diverge + every) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "diverged" in err, err
    assert f"{out!r} holds the checkpoint after 2,000 examples, learnt before the run diverged." in err, err
    assert _model_state(out) == _model_state(ref)  # the last checkpoint before the divergence, not after it
    assert sorted(os.listdir(tmp_path)) == sorted(["d.svm", "good.svm", "m.slm", "ref.slm"])

    # a run that diverges before its first checkpoint leaves the file at -o as it was
    before = Path(ref).read_bytes()
    assert main(diverge[:-1] + ["1000", "--save-every", "2500", "-o", ref]) == 2
    err = capsys.readouterr().err
    assert f"No checkpoint was written; {ref!r} was left as it was." in err, err
    assert Path(ref).read_bytes() == before


def test_evaluate_frozen_and_predict_proba(data, tmp_path, capsys):
    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "ogd", "-o", m, "--quiet"]) == 0
    before = _model_state(m)
    capsys.readouterr()
    assert main(["evaluate", paths["B"], "-i", m, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    model = load(m)
    from streamlearn.datasets import load_svmlight

    X, y = load_svmlight(paths["B"], n_features=D)
    assert out["frozen"] and out["n"] == N_B and out["learner"] == "ogd"
    assert out["accuracy"] == pytest.approx(float(np.mean(model.predict(X) == y)))
    assert _model_state(m) == before  # frozen: the file is untouched
    capsys.readouterr()
    assert main(["evaluate", "-i", m, paths["B"], "-l", "pa"]) == 2
    assert f"--learner pa does not match the model in {m} (learner ogd); omit --learner" in capsys.readouterr().err
    probs = tmp_path / "p.txt"
    assert main(["predict", m, paths["B"], "--proba", "-o", str(probs)]) == 0
    np.testing.assert_allclose(np.loadtxt(probs), model.predict_proba(X)[:, 1], rtol=1e-9)
    h = str(tmp_path / "h.slm")
    assert main(["train", paths["A"], "-l", "ogd-hinge", "-o", h, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["predict", h, paths["B"], "--proba"]) == 2
    assert (
        f"--proba: the model in {h} (OGDClassifier, loss 'hinge') defines no probabilities" in capsys.readouterr().err
    )
    assert main(["train", paths["A"], "-l", "pa1", "-o", h, "--quiet"]) == 0  # no loss to name: not 'loss None'
    capsys.readouterr()
    assert main(["predict", h, paths["B"], "--proba"]) == 2
    assert f"--proba: the model in {h} (PassiveAggressiveClassifier) defines no" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["fd", "pfd", "cfd", "rfd", "rp", "oja"])
def test_sketch_resume_continues_the_saved_state(name, data, tmp_path, capsys):
    """``sketch B -i s`` continues exactly the state of ``sketch A -o s`` (the same partial_fit calls in
    process); rp and oja also equal one run over A+B (the FD family's kernel depends on the call boundaries)."""
    from streamlearn.datasets import load_svmlight
    from streamlearn.sketch import SKETCHES

    paths = data["regression"]
    s, s2, s3 = (str(tmp_path / f"{k}.slm") for k in ("s", "s2", "s3"))
    seeded = name in ("rp", "oja")
    p = ["-p", "random_state=0"] if seeded else []
    assert main(["sketch", paths["A"], "-s", name, "--ell", "4", *p, "-o", s, "--quiet", "--no-error"]) == 0
    assert main(["sketch", paths["B"], "-i", s, "-o", s2, "--quiet"]) == 0
    assert main(["sketch", paths["AB"], "-s", name, "--ell", "4", *p, "-o", s3, "--quiet", "--no-error"]) == 0
    XA, _ = load_svmlight(paths["A"], n_features=D)
    XB, _ = load_svmlight(paths["B"], n_features=D)
    ref = SKETCHES[name](ell=4, **({"random_state": 0} if seeded else {})).partial_fit(XA).partial_fit(XB)
    got = load(s2)
    assert got.n_seen_ == N_A + N_B
    np.testing.assert_array_equal(got.sketch_, ref.sketch_)
    if seeded:
        np.testing.assert_array_equal(got.sketch_, load(s3).sketch_)
    assert main(["sketch", paths["B"], "-i", s, "--ell", "5", "--quiet"]) == 2
    assert "conflicts" in capsys.readouterr().err


def test_input_spec_of_the_model_is_used_and_other_formats_are_named(data, tmp_path, capsys):
    """A model carrying ``input_spec_`` is read with its index base; a format this command cannot read is an
    error naming it; without a spec, LIBSVM with the model's width."""
    from streamlearn.cli._resume import libsvm_reader_args

    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "pa1", "-o", m, "--quiet"]) == 0
    model = load(m)
    assert libsvm_reader_args(model) == (D, False)  # the index base the model was trained with
    model.input_spec_ = {"format": "libsvm", "zero_based": True, "n_features": D}
    assert libsvm_reader_args(model) == (D, True)
    model.input_spec_ = {"format": "vw", "bits": 18}
    model.save(m)
    capsys.readouterr()
    assert main(["train", paths["B"], "-i", m, "--quiet"]) == 2
    assert "reads vw input" in capsys.readouterr().err


def _two_vw_files(tmp_path, *, seed, rows, first, value=False):
    """``a.vw`` (the first ``first`` of ``rows`` random VW lines, namespaces a and b) and ``b.vw`` (the rest)."""
    rng = np.random.default_rng(seed)
    lines = [
        f"{1 if rng.random() < 0.5 else -1} |a w{rng.integers(20)}"
        + (f" x:{rng.random():.3f}" if value else "")
        + f" |b z{rng.integers(5)}"
        for _ in range(rows)
    ]
    a, b = tmp_path / "a.vw", tmp_path / "b.vw"
    a.write_text("\n".join(lines[:first]) + "\n")
    b.write_text("\n".join(lines[first:]) + "\n")
    return a, b


def test_evaluate_frozen_reads_a_hashed_model_with_its_spec(tmp_path, capsys):
    """``evaluate -i`` on a model trained from VW text reads DATA with the model's hashing spec and scores it
    as the model does in process; LIBSVM data for it is an error naming both formats."""
    from streamlearn.datasets._readers import open_stream
    from streamlearn.datasets._spec import InputSpec

    train, test = _two_vw_files(tmp_path, seed=3, rows=300, first=200, value=True)
    m = str(tmp_path / "m.slm")
    assert main(["train", str(train), "-l", "ftrl", "-b", "12", "-q", "ab", "-o", m, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(test), "-i", m, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    model = load(m)
    X, y, _ = next(open_stream(str(test), InputSpec.from_dict(model.input_spec_), 10_000))
    assert out["frozen"] and out["n"] == 100
    assert out["accuracy"] == pytest.approx(float(np.mean(model.predict(X) == y)))
    svm = tmp_path / "b.svm"
    svm.write_text("1 1:0.5\n")
    assert main(["evaluate", str(svm), "-i", m]) == 2
    assert "reads vw input" in capsys.readouterr().err


def test_resume_refuses_scalers_that_differ_from_the_model(data, tmp_path, capsys):
    """``--scale`` / ``--scale-target`` on ``train -i`` / ``evaluate -i`` must be the model's (it keeps its
    scalers): another value is an error naming both, not an option silently ignored."""
    paths, reg = data["classification"], data["regression"]
    m, r = str(tmp_path / "m.slm"), str(tmp_path / "r.slm")
    assert main(["train", paths["A"], "-l", "pa", "-o", m, "--quiet"]) == 0  # pa: --scale maxabs by default
    assert main(["train", reg["A"], "-l", "ogd-regressor", "-o", r, "--quiet"]) == 0
    capsys.readouterr()
    for command in ("train", "evaluate"):
        for scale in ("none", "standard"):
            assert main([command, paths["B"], "-i", m, "--scale", scale, "--quiet"]) == 2
            err = capsys.readouterr().err
            assert f"--scale {scale} conflicts" in err and "maxabs" in err and len(err.splitlines()) == 1
        assert main([command, paths["B"], "-i", m, "--scale", "maxabs", "--quiet"]) == 0  # the same is fine
        assert main([command, reg["B"], "-i", r, "--scale-target", "none", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "--scale-target none conflicts" in err and "standard" in err
        assert main([command, reg["B"], "-i", r, "--scale-target", "standard", "--quiet"]) == 0
    plain = str(tmp_path / "plain.slm")
    assert main(["train", paths["A"], "-l", "ftrl", "-o", plain, "--quiet"]) == 0  # ftrl: no scaler
    capsys.readouterr()
    assert main(["train", paths["B"], "-i", plain, "--scale", "maxabs", "--quiet"]) == 2
    assert "--scale maxabs conflicts" in capsys.readouterr().err
    assert main(["train", paths["B"], "-i", plain, "--scale", "none", "--quiet"]) == 0


def test_resume_refuses_input_options_that_differ_from_the_model(data, tmp_path, capsys):
    """Hashing options (``-b``, ``-q``, ``--ignore``, ``--labels``...) and ``--zero-based`` on ``train -i`` /
    ``evaluate -i`` must describe the model's input contract: another value, or a hashing option for a LIBSVM
    model, is an error naming it instead of being ignored."""
    a, b = _two_vw_files(tmp_path, seed=5, rows=120, first=80)
    v = str(tmp_path / "v.slm")
    assert main(["train", str(a), "-l", "ftrl", "-b", "12", "-q", "ab", "-o", v, "--quiet"]) == 0
    capsys.readouterr()
    for command in ("train", "evaluate"):
        for option, shown in (
            (["-b", "14"], "-b 14"),
            (["-q", "aa"], "-q aa"),
            (["--ignore", "a"], "--ignore a"),
            (["--labels", "01"], "--labels 01"),
            (["--constant"], "--constant"),
        ):
            assert main([command, str(b), "-i", v, *option, "--quiet"]) == 2, option
            err = capsys.readouterr().err
            assert shown in err and "conflicts" in err and len(err.splitlines()) == 1, err
        assert main([command, str(b), "-i", v, "-b", "12", "-q", "ab", "--quiet"]) == 0  # the model's own
    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "pa1", "-o", m, "--quiet"]) == 0
    capsys.readouterr()
    for command in ("train", "evaluate"):
        assert main([command, paths["B"], "-i", m, "-b", "10", "--quiet"]) == 2
        assert "-b" in capsys.readouterr().err
        assert main([command, paths["B"], "-i", m, "--zero-based", "true", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "--zero-based true conflicts" in err and "one-based" in err
        assert main([command, paths["B"], "-i", m, "--zero-based", "false", "--quiet"]) == 0


def test_a_folder_given_as_the_model_file_is_named_as_such(data, tmp_path, capsys):
    """``-i DIR`` / ``predict DIR``: a one-line error saying a model file was expected (not a data file)."""
    folder = tmp_path / "m.slm"
    folder.mkdir()
    paths = data["classification"]
    for argv in (
        ["train", paths["B"], "-i", str(folder)],
        ["evaluate", paths["B"], "-i", str(folder)],
        ["predict", str(folder), paths["B"]],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "is a directory, expected a model file" in err and "LIBSVM" not in err, err


def test_sketch_resume_reads_data_with_the_saved_index_base(tmp_path, capsys):
    """``sketch A --zero-based true -o s; sketch B -i s`` reads B zero-based, as A was: the saved sketch records
    its index base (B read one-based would shift every column by one, silently, when B has no index 0); a
    --zero-based that contradicts it is an error naming both."""
    from streamlearn.datasets import load_svmlight
    from streamlearn.sketch import FrequentDirections

    rng = np.random.default_rng(11)
    a, b = tmp_path / "a.svm", tmp_path / "b.svm"
    for path, n, lowest in ((a, 30, 0), (b, 20, 1)):  # B never uses index 0
        with open(path, "w") as f:
            for i in range(n):
                ids = sorted(rng.choice(np.arange(lowest, 8), size=3, replace=False))
                if i == 0:
                    ids = sorted(set(ids) | {7})
                f.write("1 " + " ".join(f"{j}:{rng.normal():.4g}" for j in ids) + "\n")
    s, s2 = str(tmp_path / "s.slm"), str(tmp_path / "s2.slm")
    assert main(["sketch", str(a), "-s", "fd", "--ell", "3", "--zero-based", "true", "-o", s, "--quiet"]) == 0
    assert main(["sketch", str(b), "-i", s, "-o", s2, "--quiet"]) == 0
    XA, _ = load_svmlight(str(a), n_features=8, zero_based=True)
    XB, _ = load_svmlight(str(b), n_features=8, zero_based=True)
    ref = FrequentDirections(ell=3).partial_fit(XA).partial_fit(XB)
    np.testing.assert_array_equal(load(s2).sketch_, ref.sketch_)
    capsys.readouterr()
    assert main(["sketch", str(b), "-i", s, "--zero-based", "false", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--zero-based false conflicts" in err and "zero-based" in err
    assert main(["sketch", str(b), "-i", s, "--zero-based", "true", "--quiet"]) == 0


def test_frozen_evaluate_refuses_a_chunk_size_below_one(data, tmp_path):
    """``evaluate -i MODEL DATA --chunk-size 0`` is the one-line error of the other commands (it looped
    forever on a LIBSVM model); so is the stream reader built with chunk_size 0."""
    import subprocess
    import sys

    from streamlearn.datasets._stream import SvmlightStream

    from tests.cli._subprocess import ENV, one_line_error

    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "pa1", "-o", m, "--quiet"]) == 0
    r = subprocess.run(
        [sys.executable, "-m", "streamlearn", "evaluate", "-i", m, paths["B"], "--chunk-size", "0"],
        capture_output=True,
        timeout=60,
        env=ENV,
        check=False,
    )
    assert r.returncode == 2 and one_line_error(r.stderr) and b"--chunk-size must be >= 1" in r.stderr
    with pytest.raises(ValueError, match="chunk_size"):
        SvmlightStream(paths["B"], zero_based=False, n_features=D, chunk_size=0)


def test_evaluate_frozen_refuses_a_sketch_file(data, tmp_path, capsys):
    """``evaluate -i SKETCH DATA``: a one-line error saying the file holds no learner (it was a traceback)."""
    paths = data["classification"]
    s = str(tmp_path / "s.slm")
    assert main(["sketch", paths["A"], "-s", "fd", "--ell", "3", "-o", s, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", paths["B"], "-i", s, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "FrequentDirections" in err and "learner" in err and len(err.splitlines()) == 1, err


def test_zero_based_option_reads_data_for_a_model_without_a_contract(tmp_path, capsys):
    """A model saved by the Python API has no input contract: ``evaluate -i`` / ``train -i`` with
    ``--zero-based true`` read DATA zero-based (the option was ignored and the base guessed from DATA, one-based
    for a file without index 0: every column shifted by one)."""
    from streamlearn.datasets import load_svmlight
    from streamlearn.linear_model import OGDClassifier

    rng = np.random.default_rng(17)
    X = rng.normal(size=(40, 6))
    y = np.where(X[:, 1] - X[:, 4] > 0, 1, -1)
    m = str(tmp_path / "api.slm")
    OGDClassifier().partial_fit(X, y, classes=[-1, 1]).save(m)
    data = tmp_path / "no-zero.svm"  # zero-based ids 1..5 only: nothing in the file tells the base
    data.write_text("".join(f"{t} " + " ".join(f"{j}:{x[j]:.6g}" for j in range(1, 6)) + "\n" for x, t in zip(X, y)))
    Xd, yd = load_svmlight(str(data), n_features=6, zero_based=True)
    model = load(m)
    expected = float(np.mean(model.predict(Xd) == yd))
    assert main(["evaluate", str(data), "-i", m, "--zero-based", "true", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(expected)
    out = str(tmp_path / "more.slm")
    assert main(["train", str(data), "-i", m, "--zero-based", "true", "-o", out, "--quiet"]) == 0
    ref = load(m).partial_fit(Xd, yd)
    np.testing.assert_array_equal(load(out).coef_, ref.coef_)


@pytest.mark.parametrize(
    "where, value, field",
    [
        (("params", "alpha"), None, "params.alpha"),  # predict: a TypeError in the scorer
        (("params", "alpha"), 0, "params.alpha"),  # predict: a ZeroDivisionError
        (("attributes", "input_spec_", "ignore"), {}, "attributes.input_spec_.ignore"),  # train -i: a TypeError
        (("attributes", "input_spec_", "options"), [], "attributes.input_spec_.options"),  # an AttributeError
        (("attributes", "n_features_in_"), 10**30, "attributes.n_features_in_"),  # an OverflowError
        (("attributes", "t_"), 10**30, "attributes.t_"),  # an OverflowError in the kernel
    ],
    ids=lambda v: ".".join(v) if isinstance(v, tuple) else None,
)
def test_hand_edited_model_file_is_one_line_naming_the_field(data, tmp_path, capsys, monkeypatch, where, value, field):
    """``predict``, ``train -i``, ``evaluate -i`` and ``serve`` with a model whose meta.json was edited by hand:
    exit 2 and one line naming the file and the field, for each of them (they were tracebacks)."""
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)  # a server that starts returns
    paths = data["classification"]
    m = str(tmp_path / "m.slm")
    assert main(["train", paths["A"], "-l", "ftrl", "-o", m, "--quiet"]) == 0
    with zipfile.ZipFile(m) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(entries["meta.json"])
    node = meta
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    entries["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(m, "w") as zf:
        for name, raw in entries.items():
            zf.writestr(name, raw)
    capsys.readouterr()
    commands = [
        ["predict", m, paths["B"], "-o", str(tmp_path / "p.txt")],
        ["train", "-i", m, paths["B"], "--quiet"],
        ["evaluate", "-i", m, paths["B"]],
        ["serve", m, "--state-dir", str(tmp_path / "state"), "--port", "0"],
    ]
    for argv in commands:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"streamlearn: error: {m}: meta.json field '{field}': ") and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_data_wider_than_the_continued_model_is_counted(data, tmp_path, capsys, command):
    """Feature values beyond the width of a model continued (train -i) or scored (evaluate -i) are ignored and
    counted in ignored_features, as those of --n-features and of a test file are."""
    m = str(tmp_path / "m.slm")
    assert main(["train", data["classification"]["A"], "-l", "pa1", "-o", m, "--quiet"]) == 0
    wide = tmp_path / "wide.svm"
    wide.write_text(f"1 1:1 {D + 5}:2 {D + 9}:1\n-1 2:1\n")
    args = (
        ["train", str(wide), "-i", m, "-o", str(tmp_path / "m2.slm")]
        if command == "train"
        else ["evaluate", "-i", m, str(wide)]
    )
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ignored_features"] == 2


def test_sketch_resume_errors_give_advice_that_holds(data, tmp_path, capsys):
    """``sketch B -i s`` with a '0:' feature in B, s sketched one-based: the error names the sketch's base and
    does not advise --zero-based true (which -i refuses as a conflict); a -p the sketch has not is named as
    such, not as a conflict with a value None."""
    s = str(tmp_path / "s.slm")
    assert main(["sketch", data["classification"]["A"], "-s", "fd", "--ell", "3", "-o", s, "--quiet"]) == 0
    zb = tmp_path / "zb.svm"
    zb.write_text("1 0:1 3:1\n")
    capsys.readouterr()
    assert main(["sketch", str(zb), "-i", s, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "index base of the continued sketch" in err and "pass --zero-based" not in err
    assert main(["sketch", data["classification"]["B"], "-i", s, "-p", "nope=1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "has no parameter 'nope'" in err and "None" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["directory", "link to DATA"])
def test_per_pass_checkpoint_paths_are_checked_before_any_work(data, tmp_path, capsys, kind):
    """--save-per-pass writes MODEL.passK: one that is a directory, or a link to the DATA file (a link's target
    is replaced), is an error before training, as -o MODEL is; the DATA file and MODEL stay as they were. Before,
    the directory failed after pass 1, and the link had pass 1's model written over the training data."""
    src = tmp_path / "d.svm"
    src.write_bytes(Path(data["classification"]["A"]).read_bytes())
    m = tmp_path / "m.slm"
    m.write_text("old")
    bad = tmp_path / "m.slm.pass2"
    if kind == "directory":
        bad.mkdir()
    else:
        bad.symlink_to(src)
    before = src.read_bytes()
    code = main(["train", str(src), "-l", "ftrl", "--passes", "3", "--save-per-pass", "-o", str(m), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "m.slm.pass2" in err and len(err.strip().splitlines()) == 1
    assert src.read_bytes() == before and m.read_text() == "old"
    assert not (tmp_path / "m.slm.pass1").exists()


def test_json_of_a_continued_scaling_pipeline(data, tmp_path, capsys):
    """``train B -i m --json`` where m holds a scaling pipeline (ftrl-regressor: MaxAbs and target scaling):
    valid JSON with the learner's parameters. Before: a traceback (TypeError: Object of type
    FTRLProximalRegressor is not JSON serializable), the pipeline's parameters holding the learner."""
    paths = data["regression"]
    m, m2 = str(tmp_path / "m.slm"), str(tmp_path / "m2.slm")
    assert main(["train", paths["A"], "-l", "ftrl-regressor", "-o", m, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", paths["B"], "-i", m, "-o", m2, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["alpha"] == 0.3 and "learner" not in out["params"]
