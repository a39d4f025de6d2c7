"""The one source of numba flags for every kernel.

``njit_kernel`` is used by all kernels. ``cache=True`` keeps compiled code on disk between runs (a warm
``streamlearn train`` starts in about half a second); ``fastmath=False`` keeps IEEE semantics so that kernels
agree with their NumPy twins to rounding and NaN/inf checks are not optimised away. A test greps the
package for hardcoded ``cache=`` / ``fastmath=`` outside this file.

Loading compiled code from the disk cache
-----------------------------------------
Before numba loads a function from its disk cache it refreshes its code generator: it imports and
registers every implementation it has for compiling (arrays, strings, random numbers, typed containers,
linear algebra through SciPy), about 0.15 s of CPU, a third of what a warm ``streamlearn train`` spends
before its first example. Machine code loaded from the cache needs none of that: it needs the runtime that
manages arrays' memory, which this module initialises instead. Compiling (a cache miss, a new signature)
still goes through numba's full refresh, so nothing changes for code that is compiled. Where numba's cache
classes do not have the expected methods (another numba), kernels load with numba's own method, and so they
do when the environment variable ``STREAMLEARN_NUMBA_OWN_LOAD`` is set to 1 (a safety valve, should a
numba release need its refresh before a load; ``benchmarks/startup.py`` times a warm start both ways).

When cached code is stale
-------------------------
numba keeps a kernel's cached machine code for as long as the source file that defines the kernel is
unchanged. The helpers a kernel inlines often live in other files of this package (the losses, the CSR row
operations), and a change to one of them would leave every kernel that inlines it running the old code from
the cache. The kernels' cache entries are therefore also stamped with a digest of every source file of this
package (``kernels_digest``): a change to any of them makes every kernel compile again on its next call.
"""

import functools
import hashlib
import os
from collections.abc import Callable
from typing import Any

import numba

from .._signals import interrupts_held  # a leaf module: the standard library only

try:
    from numba.core.caching import CompileResultCacheImpl as _CacheImpl
    from numba.core.caching import FunctionCache as _FunctionCache
    from numba.core.caching import UserWideCacheLocator as _UserWideLocator
    from numba.core.runtime.nrt import rtsys as _rtsys
except ImportError:  # pragma: no cover - another numba's layout
    _FunctionCache = None


@functools.cache
def kernels_digest() -> bytes:
    """SHA-256 of the names and contents of every ``.py`` file of this package, read once per process (empty
    where the sources cannot be listed, e.g. from a zip archive: numba's own stamp then stands alone).

    >>> len(kernels_digest())
    32
    """
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                with open(os.path.join(here, name), "rb") as f:
                    h.update(name.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    except OSError:
        return b""
    return h.digest()


@functools.cache
def private_temp_cache_dir() -> str | None:
    """``<temp dir>/streamlearn-numba-<user id>``, created readable and writable by this user only; None where
    it cannot be created or is not a directory that only this user can write to.

    >>> d = private_temp_cache_dir()
    >>> d is None or os.path.isdir(d)
    True
    """
    import stat
    import tempfile

    getuid = getattr(os, "getuid", None)
    path = os.path.join(tempfile.gettempdir(), f"streamlearn-numba-{getuid() if getuid else 'user'}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or (getuid is not None and (st.st_uid != getuid() or st.st_mode & 0o022)):
        return None  # a link, or a folder someone else owns or may write to: its cached code is not trusted
    return path


_CACHE: Any = None
if _FunctionCache is not None:

    class _TempDirLocator(_UserWideLocator):
        """The last place to cache in, after numba's own (``NUMBA_CACHE_DIR``, the package's ``__pycache__``,
        the user's cache folder): ``private_temp_cache_dir()``. Without it, a read-only installation run by a
        user with no writable home (a container with a read-only file system) could not import the kernels."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(str(private_temp_cache_dir()), self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if private_temp_cache_dir() is None:
                return None
            return super().from_function(py_func, py_file)

    class _Impl(_CacheImpl):
        _locator_classes = [*_CacheImpl._locator_classes, _TempDirLocator]

    class _PackageStampedCache(_FunctionCache):
        """numba's function cache, its entries stamped with the digest of the whole package too (see the
        module): where numba's layout differs, numba's own stamp is left as it is. Cached in numba's places
        or, when none of them can be written, in a private folder of the temporary directory."""

        _impl_class = _Impl

        def __init__(self, py_func: Any) -> None:
            super().__init__(py_func)
            index = getattr(self, "_cache_file", None)
            if index is not None and hasattr(index, "_source_stamp"):
                index._source_stamp = (index._source_stamp, kernels_digest())

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return self._load_cached(sig, target_context)
            except Exception:  # a damaged or unreadable cache file is a miss: compiled again, the file rewritten
                return None

        def _load_cached(self, sig: Any, target_context: Any) -> Any:
            return super().load_overload(sig, target_context)

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                super().save_overload(sig, data)
            except Exception:  # a damaged index (started afresh) or nowhere to write (a full disk)
                try:
                    self._cache_file.flush()
                    super().save_overload(sig, data)
                except Exception:  # the compiled code runs all the same; only the next process compiles again
                    pass

    _CACHE = _PackageStampedCache

if (
    _CACHE is not None
    and os.environ.get("STREAMLEARN_NUMBA_OWN_LOAD", "0") in ("", "0")
    and callable(getattr(_FunctionCache, "_load_overload", None))
    and callable(getattr(_FunctionCache, "_guard_against_spurious_io_errors", None))
    and callable(getattr(_rtsys, "initialize", None))
):

    class _LoadOnlyWhatRunsCache(_CACHE):
        """The stamped cache, minus the code generator's refresh before a load (see the module)."""

        def _load_cached(self, sig, target_context):
            _rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)

    _CACHE = _LoadOnlyWhatRunsCache


def _compile_with_interrupts_held(dispatcher: Any) -> Any:
    """Make ``dispatcher`` compile (or load from the cache) with Ctrl-C held back until it is done.

    numba's compiler is not safe to interrupt: LLVM calls back into Python while it emits and loads machine
    code, and a KeyboardInterrupt raised in such a callback is only reported ("ignored") while the compiler
    goes on without the code. The function then fails later with a segmentation fault (a kernel's environment
    written through a null address as it loads). A Ctrl-C during a compilation is raised as it ends (at once
    for a load from the cache, within seconds for a compilation). A wrapper in the instance's namespace: numba
    compiles through ``self.compile`` for a call from Python and for a call from another kernel alike."""
    cls = type(dispatcher)

    @functools.wraps(cls.compile)
    def compile(sig: Any) -> Any:
        with interrupts_held():
            return cls.compile(dispatcher, sig)  # looked up at each call: the class's method as it is then

    dispatcher.compile = compile
    return dispatcher


def _jit(**flags: Any) -> Callable[[Callable[..., Any]], Any]:
    def decorate(func: Callable[..., Any]) -> Any:
        if _CACHE is None:  # another numba's layout: its own cache
            return _compile_with_interrupts_held(numba.njit(cache=True, nogil=True, fastmath=False, **flags)(func))
        dispatcher = numba.njit(cache=False, nogil=True, fastmath=False, **flags)(func)
        if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: the plain Python function
            return dispatcher
        try:
            cache = _CACHE(dispatcher.py_func)
        except RuntimeError:  # nowhere to cache (no writable folder at all): compiled in each process
            cache = None
        if cache is not None:
            dispatcher._cache = cache
        return _compile_with_interrupts_held(dispatcher)

    return decorate


njit_kernel = _jit()

#: For small helpers that must be inlined into the kernels that call them.
njit_inline = _jit(inline="always")

#: For kernels whose divisions and square roots are all guarded: ``error_model="numpy"`` drops numba's
#: division-by-zero check (a division by zero would give inf/NaN instead of raising), the branch that stops
#: LLVM from vectorising a loop with divisions or square roots. Results are the same IEEE operations.
njit_kernel_vector = _jit(error_model="numpy")
