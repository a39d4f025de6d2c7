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

#: For kernels whose divisions and square roots are all guarded: ``error_model="numpy"`` drops numba's
#: division-by-zero check (a division by zero would give inf/NaN instead of raising), the branch that stops
#: LLVM from vectorising a loop with divisions or square roots. Results are the same IEEE operations.
njit_kernel_vector = functools.partial(numba.njit, cache=True, nogil=True, fastmath=False, error_model="numpy")
