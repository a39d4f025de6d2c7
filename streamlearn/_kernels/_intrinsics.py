"""Low-level helpers for kernels that numba does not offer: a cache prefetch hint.

Prefetching: when the model does not fit in cache every rare feature is a cache miss; kernels ask for
the next example's entries while they work on the current one (a large gain on a 2^22-feature stream; see
the first-order benchmark page). ``llvm.prefetch`` only hints, so results never change. Under
NUMBA_DISABLE_JIT ``prefetch`` is a no-op Python function.
"""

import numba
from numba.core import cgutils
from numba.extending import intrinsic

if numba.config.DISABLE_JIT:

    def prefetch(arr, i, j):
        pass
else:

    @intrinsic
    def prefetch(typingctx, arr, i, j):
        """Hint the CPU to fetch ``arr[i, j]`` (a 2-D array) into cache, for writing."""
        sig = numba.types.void(arr, i, j)

        def codegen(context, builder, signature, args):
            ir = cgutils.ir  # llvmlite's IR module, as numba exposes it
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            idx = [context.cast(builder, v, t, numba.types.intp) for v, t in zip(args[1:], signature.args[1:])]
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8"
            )
            # (address, rw = 1 write, locality = 3 keep in all caches, cache type = 1 data)
            builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen
