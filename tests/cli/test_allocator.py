"""streamlearn.cli._allocator: the chunks of a streaming command are served from the heap, not mmap."""

import platform
import subprocess
import sys
import textwrap

import pytest

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only"
)

# bytes in mmap-ed blocks (mallinfo2's hblkhd) that a fresh 4 MB array adds, before and after tune_allocator
MMAPPED = textwrap.dedent(
    """
    import ctypes, sys
    import numpy as np
    from streamlearn.cli._allocator import tune_allocator

    class Info(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = Info
    if sys.argv[1] == "tuned":
        assert tune_allocator()
    before = libc.mallinfo2().hblkhd
    chunk = np.ones(1 << 19)
    print(libc.mallinfo2().hblkhd - before)
    """
)


def _mmapped(mode):
    out = subprocess.run([sys.executable, "-c", MMAPPED, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


@glibc
def test_a_chunk_of_a_few_megabytes_comes_from_the_heap_once_tuned():
    assert _mmapped("plain") >= 4 << 20  # glibc's default: a block this large is mapped afresh each time
    assert _mmapped("tuned") == 0


@pytest.mark.parametrize(
    ("argv", "tuned"), [(["learners"], False), (["train", "{data}", "-l", "pa1", "--quiet"], True)]
)
def test_the_executable_tunes_the_allocator_for_the_commands_that_read_data(tmp_path, argv, tuned):
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    script = (
        "import sys; import streamlearn.cli._allocator as a; "
        "a.tune_allocator = lambda: sys.stderr.write('TUNED\\n') or True; "
        "from streamlearn.cli.main import entry_point; sys.argv = ['streamlearn', *sys.argv[1:]]; entry_point()"
    )
    args = [a.format(data=data) for a in argv]
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ("TUNED" in proc.stderr) == tuned
