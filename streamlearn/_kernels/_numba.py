"""The one source of numba flags for every kernel.

``njit_kernel`` is used by all kernels. ``cache=True`` keeps compiled code on disk between runs (a warm
``streamlearn train`` starts in about a second); ``fastmath=False`` keeps IEEE semantics so that kernels
agree with their NumPy twins to rounding and NaN/inf checks are not optimised away. A test greps the
package for hardcoded ``cache=`` / ``fastmath=`` outside this file.
"""

import functools

import numba

njit_kernel = functools.partial(numba.njit, cache=True, nogil=True, fastmath=False)

#: For small helpers that must be inlined into the kernels that call them.
njit_inline = functools.partial(numba.njit, cache=True, nogil=True, fastmath=False, inline="always")
