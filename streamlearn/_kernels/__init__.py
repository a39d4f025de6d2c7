"""Numba kernels: plain arrays in, arrays out.

Nothing here imports from the layers above (estimators, datasets, evaluation, cli); a test asserts it.
Every per-example loop of the library lives in this package.
"""
