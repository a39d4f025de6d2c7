"""A kernel's cached machine code is not reused once a helper it inlines from another file has changed.

numba checks only the source file that defines a kernel. The check builds a throwaway package whose
``_kernels`` holds this package's ``_numba.py``, a kernel in one file and the helper it inlines in another,
runs the kernel in a fresh interpreter (which fills the cache), edits the helper, and runs it again: the
second result must be the new helper's, with numba's own cache load and with the package's.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_HELPER = """from ._numba import njit_inline


@njit_inline
def helper(x):
    return {body}
"""

_KERNEL = """from ._numba import njit_kernel
from .helper import helper


@njit_kernel
def probe(x):
    return helper(x) + 1.0
"""


def _probe(tmp_path, own_load):
    env = dict(os.environ, PYTHONPATH=str(tmp_path), STREAMLEARN_NUMBA_OWN_LOAD=own_load, NUMBA_DEBUG_CACHE="1")
    env.pop("NUMBA_CACHE_DIR", None)  # the cache next to the throwaway sources
    code = "from pkg._kernels.probe import probe; print(probe(1.0))"
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    return float(lines[-1]), any("data loaded from" in line for line in lines)


@pytest.mark.parametrize("own_load", ["0", "1"])
def test_editing_an_inlined_helper_in_another_file_recompiles_the_kernel(tmp_path, own_load):
    kernels = tmp_path / "pkg" / "_kernels"
    kernels.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (kernels / "__init__.py").write_text("")
    shutil.copy(ROOT / "streamlearn" / "_kernels" / "_numba.py", kernels / "_numba.py")
    (kernels / "probe.py").write_text(_KERNEL)
    (kernels / "helper.py").write_text(_HELPER.format(body="x"))

    assert _probe(tmp_path, own_load) == (2.0, False)  # compiled, then saved
    assert _probe(tmp_path, own_load) == (2.0, True)  # loaded from the cache
    (kernels / "helper.py").write_text(_HELPER.format(body="3.0 * x"))
    assert _probe(tmp_path, own_load) == (4.0, False)  # compiled again: the old code is not reused
    assert _probe(tmp_path, own_load) == (4.0, True)
