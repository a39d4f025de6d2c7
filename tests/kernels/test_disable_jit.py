"""Under ``NUMBA_DISABLE_JIT=1`` (numba's switch for stepping through kernels in a debugger or measuring their
coverage) the package imports and every registered learner learns what its compiled kernels learn.

The learners run as plain Python in a fresh interpreter with the switch set; their scores are compared with
those of the compiled kernels in this process, to rounding.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from streamlearn.learners import LEARNERS

ROOT = Path(__file__).resolve().parents[2]

_RUN = r"""
import json, warnings
import numpy as np
from streamlearn.learners import LEARNERS, make_learner

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.standard_normal((40, 6))
w = rng.standard_normal(6)
y, y_reg = np.where(X @ w > 0, 1, -1), X @ w
out = {}
for name, spec in LEARNERS.items():
    est = make_learner(name)
    if "random_state" in est.get_params():  # (the batch solvers draw their visiting order from it)
        est.set_params(random_state=0)
    if spec.task == "regression":
        est.partial_fit(X, y_reg)
        out[name] = est.predict(X).tolist()
    else:
        est.fit(X, y) if spec.batch else est.partial_fit(X, y, classes=np.array([-1, 1]))
        out[name] = np.ravel(est.decision_function(X)).tolist()
print(json.dumps(out))
"""


def _scores(disable_jit):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0", OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_every_learner_runs_as_plain_python_and_learns_what_it_learns_compiled():
    plain, compiled = _scores(True), _scores(False)
    assert set(plain) == set(compiled) == set(LEARNERS)
    for name in LEARNERS:
        np.testing.assert_allclose(plain[name], compiled[name], rtol=1e-9, atol=1e-12, err_msg=name)
