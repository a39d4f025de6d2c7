"""Slow NumPy twins of every kernel, used by the kernel tests.

Each area keeps its twins in ``tests/naive_<area>.py``; this module re-exports them all.
"""

from tests.naive_linear import *  # noqa: F401,F403
from tests.naive_svmlight import *  # noqa: F401,F403
from tests.naive_sparse import *  # noqa: F401,F403
from tests.naive_margin import *  # noqa: F401,F403
from tests.naive_fm import *  # noqa: F401,F403
from tests.naive_sketch import *  # noqa: F401,F403
from tests.naive_son import *  # noqa: F401,F403
from tests.naive_nag import *  # noqa: F401,F403
from tests.naive_scaling import *  # noqa: F401,F403
