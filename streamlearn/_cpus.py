"""How many CPUs this process may run on."""

import os

__all__ = ["available_cpus"]


def available_cpus() -> int:
    """The CPUs this process may use (its affinity mask on Linux, else the machine's count).

    >>> available_cpus() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
