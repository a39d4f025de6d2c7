"""Kernels loaded from numba's disk cache skip the code generator's refresh and give the same results.

Each check runs in a fresh interpreter (what a warm ``streamlearn train`` is): first with numba's own cache
load (``STREAMLEARN_NUMBA_OWN_LOAD=1``, which also fills the cache if it is cold), then with the package's,
and compares what the learners learned and what the VW reader parsed.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_RUN = r"""
import hashlib, json, sys
import numpy as np
from streamlearn.datasets import iter_vw, load_a9a
from streamlearn.learners import make_learner

X, y, _, _ = load_a9a()
X, y = X[:400], y[:400]
out = {}
for name in ("nag", "ftrl", "fd-son"):  # lazy first-order, L1 proximal, a sketch with LAPACK's eigh
    est = make_learner(name).partial_fit(X, y, classes=np.array([-1.0, 1.0]))
    out[name] = hashlib.sha256(np.ascontiguousarray(est.coef_).tobytes()).hexdigest()
with open(sys.argv[2], "w") as f:
    f.write("1 2 'a|u age:31 country=FR |ad id=991\n-1 |u age:7 country=DE |ad id=12\n")
parsed = [hashlib.sha256(X.indices.tobytes() + X.data.tobytes()).hexdigest()
          for X, *_ in iter_vw(sys.argv[2], bits=18, quadratic=["ua"])]
out["vw"] = parsed
out["registries loaded"] = "numba.np.arraymath" in sys.modules
print(json.dumps(out))
"""


def _run(mode, tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", STREAMLEARN_NUMBA_OWN_LOAD="1" if mode == "numba" else "0")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-c", _RUN, mode, str(tmp_path / f"{mode}.vw")]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_cached_kernels_load_without_the_refresh_and_learn_the_same(tmp_path):
    numba_way = _run("numba", tmp_path)  # numba's own load; compiles and fills the cache if it is cold
    ours = _run("ours", tmp_path)
    assert numba_way.pop("registries loaded")  # numba's load imports its implementations
    assert not ours.pop("registries loaded")  # the package's does not
    assert ours == numba_way
