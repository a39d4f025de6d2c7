"""The C allocator's settings for the commands that stream data (GNU/Linux only).

A streaming command allocates the arrays of every chunk afresh (a million-row VW file at ``--chunk-size``
10,000 makes a hundred chunks of some 4 MB each) and frees them once the chunk is learnt, often in another
thread than the one that made them. glibc's malloc serves blocks of that size with ``mmap`` or returns the
freed memory to the system soon after, so each new chunk touches fresh pages: tens of thousands of page faults
a run, a tenth of a second of system time on a million-row file. :func:`tune_allocator` keeps blocks of up
to 8 MB in the heap (``M_MMAP_THRESHOLD``) and up to 32 MB of free memory at its top (``M_TRIM_THRESHOLD``),
so that the next chunks reuse the pages of the last ones. The memory the process keeps beyond what it uses
is bounded by the second figure per malloc arena (one per thread that allocates, at most a few here).

Called by the ``streamlearn`` executable once a command that reads data has been chosen, never by
``import streamlearn``. Elsewhere than glibc it does nothing.
"""

import ctypes
import sys

#: ``mallopt`` parameters (glibc's ``malloc.h``)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 8 << 20
TRIM_THRESHOLD = 32 << 20


def tune_allocator() -> bool:
    """Set glibc's mmap and trim thresholds (see the module); True if both were set.

    >>> isinstance(tune_allocator(), bool)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl has mallopt but not these semantics)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
