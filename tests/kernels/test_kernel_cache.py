"""Where and how long the kernels' compiled code is cached (``streamlearn/_kernels/_numba.py``).

Each check builds a throwaway package whose ``_kernels`` holds this package's ``_numba.py``, a kernel in one
file and the helper it inlines in another, and runs the kernel in fresh interpreters:

* once a helper the kernel inlines from another file has changed, the kernel's cached code is not reused
  (numba alone checks only the file that defines the kernel), with numba's own cache load and with ours;
* a damaged cache file is a miss (compiled again and rewritten), and a cache that cannot be written only costs
  a compilation in each process;
* with no writable place of numba's own (the package's ``__pycache__`` and the user's cache folder cannot be
  created), the kernels still import and run, and their code is cached in a private temporary folder.
"""

import os
import shutil
import stat
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


def _package(root):
    kernels = root / "pkg" / "_kernels"
    kernels.mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (kernels / "__init__.py").write_text("")
    shutil.copy(ROOT / "streamlearn" / "_kernels" / "_numba.py", kernels / "_numba.py")
    shutil.copy(ROOT / "streamlearn" / "_signals.py", root / "pkg" / "_signals.py")  # the leaf module it imports
    (kernels / "probe.py").write_text(_KERNEL)
    (kernels / "helper.py").write_text(_HELPER.format(body="x"))
    return kernels


def _probe(root, own_load="0", **env_vars):
    """``(result, loaded from the cache, where the cache is)`` of the probe kernel run in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(root), STREAMLEARN_NUMBA_OWN_LOAD=own_load, NUMBA_DEBUG_CACHE="1")
    env.pop("NUMBA_CACHE_DIR", None)  # numba's own places only
    env.update(env_vars)
    code = "from pkg._kernels.probe import probe; print(probe(1.0))"
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    data = [line for line in lines if "data saved to" in line or "data loaded from" in line]
    return float(lines[-1]), any("data loaded from" in line for line in data), data[-1] if data else ""


@pytest.mark.parametrize("own_load", ["0", "1"])
def test_editing_an_inlined_helper_in_another_file_recompiles_the_kernel(tmp_path, own_load):
    kernels = _package(tmp_path)
    assert _probe(tmp_path, own_load)[:2] == (2.0, False)  # compiled, then saved
    assert _probe(tmp_path, own_load)[:2] == (2.0, True)  # loaded from the cache
    (kernels / "helper.py").write_text(_HELPER.format(body="3.0 * x"))
    assert _probe(tmp_path, own_load)[:2] == (4.0, False)  # compiled again: the old code is not reused
    assert _probe(tmp_path, own_load)[:2] == (4.0, True)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="the private folder's owner check is POSIX")
def test_with_no_writable_place_of_numbas_own_the_kernels_cache_in_a_private_temporary_folder(tmp_path):
    kernels = _package(tmp_path / "src")
    (kernels / "__pycache__").write_text("")  # a file: the package's __pycache__ folder cannot be made
    not_a_dir = tmp_path / "home"
    not_a_dir.write_text("")  # HOME and the user's cache folder under a file: cannot be made either
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"HOME": str(not_a_dir), "XDG_CACHE_HOME": str(not_a_dir / "cache"), "TMPDIR": str(temp)}

    first = _probe(tmp_path / "src", **env)
    second = _probe(tmp_path / "src", **env)
    assert first[:2] == (2.0, False) and second[:2] == (2.0, True)  # compiled once, then loaded
    private = temp / f"streamlearn-numba-{os.getuid()}"
    assert str(private) in second[2]
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="the private folder's owner check is POSIX")
def test_a_temporary_folder_others_may_write_to_is_not_used(tmp_path):
    kernels = _package(tmp_path / "src")
    (kernels / "__pycache__").write_text("")
    not_a_dir = tmp_path / "home"
    not_a_dir.write_text("")
    temp = tmp_path / "tmp"
    shared = temp / f"streamlearn-numba-{os.getuid()}"
    shared.mkdir(parents=True)
    shared.chmod(0o777)  # planted writable for everyone: code cached there could be anyone's
    env = {"HOME": str(not_a_dir), "XDG_CACHE_HOME": str(not_a_dir / "cache"), "TMPDIR": str(temp)}

    assert _probe(tmp_path / "src", **env)[:3] == (2.0, False, "")  # compiled in memory, cached nowhere
    assert _probe(tmp_path / "src", **env)[:3] == (2.0, False, "")
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("damage", ["index", "data"])
def test_a_damaged_cache_file_is_compiled_again_and_rewritten(tmp_path, damage):
    kernels = _package(tmp_path)
    assert _probe(tmp_path)[:2] == (2.0, False)
    suffix = ".nbi" if damage == "index" else ".nbc"
    (cached,) = (kernels / "__pycache__").glob(f"probe.*{suffix}")
    cached.write_bytes(cached.read_bytes()[:20])  # cut short, as by a crash or a full disk
    assert _probe(tmp_path)[:2] == (2.0, False)  # a miss, not a traceback
    assert _probe(tmp_path)[:2] == (2.0, True)  # the file was rewritten


def test_a_cache_that_cannot_be_written_does_not_stop_the_kernel(tmp_path):
    kernels = _package(tmp_path)
    assert _probe(tmp_path)[:2] == (2.0, False)
    (index,) = (kernels / "__pycache__").glob("probe.*.nbi")
    index.unlink()
    index.mkdir()  # the index can be neither read nor replaced
    assert _probe(tmp_path)[:3] == (2.0, False, "")  # compiled in memory, nothing saved
    assert _probe(tmp_path)[:3] == (2.0, False, "")
